// Tests that would have caught more (issue 12): where an iteration ends and when it is closed;
// every kind of substrate call carrying the iteration's trace id; the content and order of
// substrate.mutated events; and second, independent checks of backoff, route targets and
// replayed acts being authorised again.
import { describe, expect, it } from "vitest";
import { inMemorySubstrates } from "../../adapters/memory/index.js";
import { recordCalls } from "../../adapters/testing/recorder.js";
import { createRuntime, VirtualClock } from "../../src/index.js";
import { auditShape, manifestWith, setup, TRACE, TRACE_2, validHandlers } from "./harness.js";

/** fetch → decide → apply → learn, closing after learn, plus a phase after closure.from_phase. */
const withTail = (routeTo: string) =>
  manifestWith((m) => {
    m.phases[1].outputs = { to: routeTo };
    m.phases.push({ id: "report", kind: "custom", custom_kind: "report" });
  });

describe("where an iteration ends, and when it is closed", () => {
  it("ends after closure.from_phase, closed: a phase declared after it does not run", async () => {
    const { loop, calls, audit } = await setup(withTail("phase:apply"));
    const r = await loop.runIteration({ traceId: TRACE });
    expect(calls).toEqual(["fetch", "decide", "apply", "learn"]);
    expect(r).toMatchObject({ status: "completed", closed: true });
    expect((await audit(TRACE)).at(-1)).toMatchObject({ event_type: "iteration.completed", data: { status: "completed", closed: true } });
  });

  it("a phase after closure.from_phase runs only when a route reaches it, and then the iteration is not closed", async () => {
    const calls: string[] = [];
    const { loop, audit } = await setup(withTail("phase:apply|phase:report"), {
      calls,
      handlers: { ...validHandlers(calls), route: ({ phase }) => (calls.push(phase.id), { decision: "fast", next: "report" }) },
    });
    const r = await loop.runIteration({ traceId: TRACE });
    expect(calls).toEqual(["fetch", "decide", "report"]);
    expect(r.phases.map((p) => p.phase_id)).toEqual(["fetch", "decide", "report"]);
    expect(r).toMatchObject({ status: "completed", closed: false });
    expect((await audit(TRACE)).at(-1)).toMatchObject({ event_type: "iteration.completed", data: { closed: false } });
    expect(loop.telemetry()).toMatchObject({ iteration_count: 1, closed_count: 0, closure_rate: 0 });
    // The next iteration, routed the usual way, closes again: closed is per iteration.
    const { loop: again } = await setup(withTail("phase:apply|phase:report"));
    expect((await again.runIteration()).closed).toBe(true);
  });

  it("an iteration that fails before the closure is not closed; one that fails at from_phase neither", async () => {
    for (const failing of ["apply", "learn"]) {
      const { loop } = await setup(manifestWith(() => {}));
      loop.handle(failing, () => {
        throw new Error("broken");
      });
      const r = await loop.runIteration();
      expect(r, failing).toMatchObject({ status: "failed", closed: false });
    }
  });
});

describe("trace ids on every kind of substrate call (§5.5, §7.7)", () => {
  it("policy, auth, audit and memory calls each carry the iteration's trace id and workspace", async () => {
    const clock = new VirtualClock(0);
    const runtime = await createRuntime({ clock });
    for (const [k, h] of Object.entries(validHandlers())) runtime.handleKind(k, h);
    const recorder = recordCalls(inMemorySubstrates());
    const loop = await runtime.load(manifestWith(() => {}), { substrates: recorder.substrates });
    loop.handle("fetch", async ({ substrates }) => (await substrates.memory.retrieve_context({ query: "" }), await substrates.policy.compute_effective({ org_id: "acme" }), {}));
    loop.handle("apply", async ({ substrates, trace_id, signature }) => {
      const n = await substrates.memory.store_node({ node: { content: "x" } });
      await substrates.audit.append_event({ event: { event_id: "h1", event_type: "node.created", trace_id, loop_id: "test.loop", phase_id: "apply", workspace_id: "w", timestamp: "2026-01-01T00:00:00Z", signature, seq: 0 } });
      await substrates.auth.agent_lifecycle({ agent_id: "a" });
      return { causal_parent_ids: [n.node_id] };
    });
    for (const [trace, ws] of [[TRACE, "w"], [TRACE_2, "v"]] as const) {
      recorder.calls.length = 0;
      expect((await loop.runIteration({ traceId: trace, workspace: ws })).status).toBe("completed");
      const slots = new Set(recorder.calls.map((c) => c.slot));
      expect([...slots].sort()).toEqual(["audit", "auth", "memory", "policy"]);
      for (const slot of slots) {
        const wrong = recorder.calls.filter((c) => c.slot === slot && (c.context.trace_id !== trace || c.context.workspace_id !== ws));
        expect(wrong, slot).toEqual([]);
      }
      // The runtime's own calls too: the act's policy and permission checks, every audit append.
      expect(recorder.calls.filter((c) => ["policy.check_policy", "auth.permission_check", "audit.append_event"].includes(`${c.slot}.${c.operation}`)).length).toBeGreaterThan(8);
    }
  });
});

describe("substrate.mutated events", () => {
  it("one per committed write, in the order the phase made them, after its own held events and before its transition, each saying what changed", async () => {
    const { loop, audit } = await setup(manifestWith(() => {}));
    loop.handle("apply", async ({ substrates, trace_id, signature }) => {
      const a = await substrates.memory.store_node({ node: { id: "a", content: "one" } });
      await substrates.audit.append_event({ event: { event_id: "h", event_type: "node.created", trace_id, loop_id: "test.loop", phase_id: "apply", workspace_id: "default", timestamp: "2026-01-01T00:00:00Z", signature, seq: 0, data: { id: "a" } } });
      await substrates.memory.store_node({ node: { id: "b", content: "one" } });
      await substrates.memory.store_edge({ src: a.node_id, dst: "b", type: "supports" });
      await substrates.memory.learn_from_outcome({ outcome: { token: "OutcomeSignal", version: "0.1", trace_id, action_id: "x", status: "success", causal_parent_ids: ["a", "b"] } });
      await substrates.memory.consolidate({});
      return { causal_parent_ids: ["a"] };
    });
    await loop.runIteration({ traceId: TRACE });
    const events = (await audit(TRACE)).filter((e) => e.phase_id === "apply");
    expect(auditShape(events)).toEqual(["node.created apply", ...Array(5).fill("substrate.mutated apply"), "phase.completed apply"]);
    expect(events.filter((e) => e.event_type === "substrate.mutated").map((e) => e.data)).toEqual([
      { operation: "store_node", result: { node_id: "a", audit_event_id: "mem_evt_1", existing: false } },
      { operation: "store_node", result: { node_id: "b", audit_event_id: "mem_evt_2", existing: false } },
      { operation: "store_edge", result: { edge_id: "edge_1" } },
      { operation: "learn_from_outcome", result: { count: 2 } },
      { operation: "consolidate", result: { token: "ConsolidationEvent", trace_id: TRACE, affected_node_ids_count: 1, merged_into_ids_count: 1, convergence_status: "unstable" } },
    ]);
    // All signed by the phase, numbered in sequence, none for a failed phase's rolled-back writes.
    expect(new Set(events.map((e) => e.signature)).size).toBe(1);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => events[0]!.seq + i));
  });

  it("none for the writes of a phase that failed: they were rolled back", async () => {
    const { loop, audit } = await setup(manifestWith(() => {}));
    loop.handle("apply", async ({ substrates }) => {
      await substrates.memory.store_node({ node: { content: "never" } });
      throw new Error("after the write");
    });
    await loop.runIteration({ traceId: TRACE });
    expect((await audit(TRACE)).filter((e) => e.event_type === "substrate.mutated")).toEqual([]);
  });
});

describe("second, independent checks", () => {
  it("backoff: each retry waits baseMs × 2^attempt of the clock, capped at maxMs (runtime retry options)", async () => {
    const m = manifestWith((m) => Object.assign(m.phases[0], { on_failure: "retry", max_retries: 5 }));
    const { loop, clock } = await setup(m, { runtime: { retry: { baseMs: 50, maxMs: 300 } } });
    const at: number[] = [];
    loop.handle("fetch", () => {
      at.push(clock.now());
      if (at.length < 6) throw new Error("not yet");
      return {};
    });
    const start = clock.now();
    const running = loop.runIteration();
    // No attempt runs before its time: step the clock 1 ms short of each due retry.
    for (const due of [50, 150, 350, 650, 950]) {
      await clock.advance(due - 1 - (clock.now() - start));
      expect(at.length).toBe([50, 150, 350, 650, 950].indexOf(due) + 1);
      await clock.advance(1);
    }
    expect((await running).status).toBe("completed");
    expect(at.map((t) => t - start)).toEqual([0, 50, 150, 350, 650, 950]);
  });

  it("route targets: a single phase: target is taken without next; next must be one of outputs.to's phases; the machine follows it", async () => {
    const single = manifestWith((m) => (m.phases[1].outputs = { to: "phase:learn" }));
    const { loop } = await setup(single, { handlers: { ...validHandlers(), route: () => ({ decision: "fast" }) } });
    const r = await loop.runIteration();
    expect(r.phases.map((p) => p.phase_id)).toEqual(["fetch", "decide", "learn"]);
    expect(r.phases[1]).toMatchObject({ routed_to: "learn" });
    const two = manifestWith((m) => (m.phases[1].outputs = { to: "phase:apply|phase:learn|substrate:memory" }));
    for (const [next, expected] of [
      ["apply", ["fetch", "decide", "apply", "learn"]],
      ["fetch", ["fetch", "decide"]],
    ] as const) {
      const { loop: l } = await setup(two, { handlers: { ...validHandlers(), route: () => ({ decision: "fast", next }) } });
      const res = await l.runIteration();
      expect(res.phases.map((p) => p.phase_id), next).toEqual(expected);
      if (next === "fetch") expect(res.error).toMatchObject({ code: "ROUTE_INVALID", message: expect.stringMatching(/chose next "fetch", which its outputs\.to does not name \(phase:apply\|phase:learn\)/) });
    }
  });

  it("a replayed act is authorised again: the permission revoked after the first run refuses the replay, and every replay asks", async () => {
    const backing = inMemorySubstrates();
    const recorder = recordCalls(backing);
    const clock = new VirtualClock(0);
    const runtime = await createRuntime({ clock });
    for (const [k, h] of Object.entries(validHandlers())) runtime.handleKind(k, h);
    const loop = await runtime.load(
      manifestWith((m) => Object.assign(m.phases[2], { idempotent: true, signature: "hash(query)" })),
      { substrates: recorder.substrates },
    );
    let acted = 0;
    loop.handle("fetch", () => ({ query: "q" }));
    loop.handle("apply", () => (acted++, { query: "q", causal_parent_ids: [] }));
    const asks = () => recorder.calls.filter((c) => c.operation === "check_policy" || c.operation === "permission_check").map((c) => c.operation);
    expect((await loop.runIteration({ input: { query: "q" } })).status).toBe("completed");
    expect(asks()).toEqual(["check_policy", "permission_check"]);
    const replay = await loop.runIteration({ input: { query: "q" } });
    expect(replay.phases[2]).toMatchObject({ phase_id: "apply", status: "replayed" });
    expect(asks()).toEqual(["check_policy", "permission_check", "check_policy", "permission_check"]);
    backing.auth.setGrants([{ operation: "act:apply", decision: "deny" }]);
    const refused = await loop.runIteration({ input: { query: "q" } });
    expect(refused.error).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(acted).toBe(1);
  });
});
