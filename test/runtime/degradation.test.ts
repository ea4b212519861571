import { describe, expect, it } from "vitest";
import { inMemorySubstrates } from "../../adapters/memory/index.js";
import { withFaults } from "../../adapters/testing/faults.js";
import { createRuntime, VirtualClock, type RuntimeEvent } from "../../src/index.js";
import { manifestWith, validHandlers } from "./harness.js";

async function faulty(options: { onSubstrateUnavailable?: "pause" | "skip"; retry?: boolean } = {}) {
  const clock = new VirtualClock(0);
  const runtime = await createRuntime({ clock, circuit: { failureThreshold: 3, cooldownMs: 10_000 } });
  for (const [kind, h] of Object.entries(validHandlers())) runtime.handleKind(kind, h);
  const faults = withFaults(inMemorySubstrates());
  const m = manifestWith((m) => options.retry && Object.assign(m.phases[0], { on_failure: "retry", max_retries: 20 }));
  const loop = await runtime.load(m, { substrates: faults.substrates, onSubstrateUnavailable: options.onSubstrateUnavailable ?? "pause" });
  loop.handle("fetch", async ({ substrates }) => (await substrates.memory.retrieve_context({ query: "q" }), {}));
  const events: RuntimeEvent[] = [];
  loop.subscribe((e) => events.push(e));
  return { clock, loop, faults, events };
}

describe("a substrate that is unreachable (§12 test 9)", () => {
  it("opens the circuit instead of spinning: attempts are bounded, then calls fail fast", async () => {
    const { clock, loop, faults, events } = await faulty({ retry: true });
    faults.fail("memory", "unavailable");
    const running = loop.runIteration();
    await clock.runAll();
    const r = await running;
    expect(r.status).toBe("degraded");
    expect(r.error?.code).toBe("CIRCUIT_OPEN");
    // 20 retries were allowed; the circuit stopped them after the threshold.
    expect(faults.calls.memory.retrieve_context).toBe(3);
    expect(loop.circuit("memory")).toBe("open");
    expect(loop.status()).toBe("degraded");
    expect(events.filter((e) => e.type === "circuit.state_changed").map((e) => (e as { state: string }).state)).toEqual(["open"]);

    // While open, a new iteration does not reach the substrate at all.
    const before = faults.calls.memory.retrieve_context;
    expect((await loop.runIteration()).error?.code).toBe("CIRCUIT_OPEN");
    expect(faults.calls.memory.retrieve_context).toBe(before);
  });

  it("probes after the cooldown and recovers when the substrate is back", async () => {
    const { clock, loop, faults, events } = await faulty();
    faults.fail("memory", "unavailable");
    for (let i = 0; i < 3; i++) await loop.runIteration();
    expect(loop.circuit("memory")).toBe("open");
    faults.heal("memory");
    await clock.advance(9_999);
    expect((await loop.runIteration()).error?.code).toBe("CIRCUIT_OPEN");
    await clock.advance(1);
    expect(loop.circuit("memory")).toBe("half_open");
    const r = await loop.runIteration();
    expect(r.status).toBe("completed");
    expect(loop.circuit("memory")).toBe("closed");
    expect(loop.status()).toBe("idle");
    expect(events.filter((e) => e.type === "circuit.state_changed").map((e) => (e as { state: string }).state)).toEqual(["open", "half_open", "closed"]);
  });

  it("re-opens when the probe fails", async () => {
    const { clock, loop, faults } = await faulty();
    faults.fail("memory", "unavailable");
    for (let i = 0; i < 3; i++) await loop.runIteration();
    await clock.advance(10_000);
    await loop.runIteration();
    expect(loop.circuit("memory")).toBe("open");
    expect(loop.retryAt()).toBe(20_000);
  });

  it("with onSubstrateUnavailable: skip, skips the phase and goes on", async () => {
    const { loop, faults } = await faulty({ onSubstrateUnavailable: "skip" });
    faults.fail("memory", "unavailable");
    const r = await loop.runIteration();
    expect(r.phases.map((p) => p.status)).toEqual(["skipped", "completed", "completed", "completed"]);
    expect(r.status).toBe("completed");
  });

  it("with skip, the loop reads degraded while the circuit is open, keeps iterating, and recovers", async () => {
    const { clock, loop, faults } = await faulty({ onSubstrateUnavailable: "skip" });
    faults.fail("memory", "unavailable");
    await loop.runIteration();
    expect(loop.status()).toBe("idle"); // one failure: the circuit is still closed
    for (let i = 0; i < 2; i++) await loop.runIteration();
    expect(loop.circuit("memory")).toBe("open");
    expect(loop.status()).toBe("degraded");
    expect((await loop.runIteration()).phases[0]?.status).toBe("skipped"); // it goes on, skipping
    faults.heal("memory");
    await clock.advance(10_000);
    const healed = await loop.runIteration();
    expect(healed.phases[0]?.status).toBe("completed");
    expect(loop.status()).toBe("idle");
  });

  it("a business error is not unavailability: the circuit stays closed", async () => {
    const { loop, faults } = await faulty();
    faults.fail("memory", "error");
    for (let i = 0; i < 5; i++) expect((await loop.runIteration()).status).toBe("failed");
    expect(loop.circuit("memory")).toBe("closed");
  });
});

describe("multi-tenant isolation (§12 test 10)", () => {
  it("shares nothing between workspaces with identical loop ids, inputs and signatures", async () => {
    const clock = new VirtualClock(0);
    const runtime = await createRuntime({ clock });
    const substrates = inMemorySubstrates();
    const loop = await runtime.load(manifestWith((m) => Object.assign(m.phases[0], { idempotent: true })), { substrates });
    const trace = "a".repeat(32);
    let runs = 0;
    loop.handle("fetch", async ({ substrates: s, workspace_id }) => {
      runs++;
      const seen = await s.memory.retrieve_context({ query: "" });
      return { mine: workspace_id, visible: seen.nodes.map((n) => n.content) };
    });
    loop.handle("decide", () => ({ decision: "fast" }));
    loop.handle("apply", async ({ substrates: s, workspace_id }) => {
      await s.memory.store_node({ node: { content: `secret of ${workspace_id}` } });
      return { causal_parent_ids: [] };
    });
    loop.handle("learn", () => ({}));
    await loop.runIteration({ workspace: "tenant_a", input: { same: true }, traceId: trace });
    const b = await loop.runIteration({ workspace: "tenant_b", input: { same: true }, traceId: trace });
    expect(runs).toBe(2); // tenant_b did not get tenant_a's cached output
    expect(b.phases[0]!.status).toBe("completed");
    const a2 = await loop.runIteration({ workspace: "tenant_a", input: { different: 1 } });
    expect((a2.phases[0] as { status: string }).status).toBe("completed");
    const auditB = await substrates.audit.query_by_trace({ trace_id: trace }, { trace_id: trace, workspace_id: "tenant_b" });
    expect(auditB.every((e) => e.workspace_id === "tenant_b")).toBe(true);
    expect(substrates.memory.inspect("tenant_b").nodes.map((n) => n.node.content)).toEqual(["secret of tenant_b"]);
  });
});

describe("a substrate that hangs longer than the phase allows", () => {
  async function hanging(timeoutMs: number) {
    const clock = new VirtualClock(0);
    const runtime = await createRuntime({ clock, circuit: { failureThreshold: 3, cooldownMs: 60_000 } });
    for (const [kind, h] of Object.entries(validHandlers())) runtime.handleKind(kind, h);
    const faults = withFaults(inMemorySubstrates());
    const loop = await runtime.load(manifestWith((m) => (m.phases[0].timeout_ms = timeoutMs)), { substrates: faults.substrates });
    loop.handle("fetch", async ({ substrates, clock: c }) => {
      await c.sleep(40); // some work of its own before it reads
      return (await substrates.memory.retrieve_context({ query: "q" }), {});
    });
    return { clock, loop, faults };
  }

  it("counts every call the phase timeout cut off as a failure of that substrate: the circuit opens, and the loop stops spinning", async () => {
    const { clock, loop, faults } = await hanging(100);
    faults.fail("memory", "hang");
    const statuses: string[] = [];
    for (let i = 0; i < 3; i++) {
      const running = loop.runIteration();
      await clock.advance(100);
      const r = await running;
      statuses.push(`${r.status} ${r.error?.code}`);
    }
    expect(statuses).toEqual(["failed PHASE_TIMEOUT", "failed PHASE_TIMEOUT", "failed PHASE_TIMEOUT"]);
    expect(loop.circuit("memory")).toBe("open");
    // The next iteration fails fast without calling the substrate, and the loop is degraded.
    const calls = faults.calls.memory.retrieve_context;
    const running = loop.runIteration();
    await clock.advance(40);
    const r = await running;
    expect(r).toMatchObject({ status: "degraded", error: { code: "CIRCUIT_OPEN" } });
    expect(faults.calls.memory.retrieve_context).toBe(calls);
  });

  it("the near miss: a slow call that answers within the phase's timeout is no failure", async () => {
    const { clock, loop, faults } = await hanging(100);
    for (let i = 0; i < 5; i++) {
      const running = loop.runIteration();
      await clock.advance(100);
      expect((await running).status).toBe("completed");
    }
    expect(loop.circuit("memory")).toBe("closed");
    expect(faults.calls.memory.retrieve_context).toBe(5);
  });
});
