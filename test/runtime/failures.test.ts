import { describe, expect, it } from "vitest";
import { auditShape, manifestWith, setup, TRACE } from "./harness.js";
import type { RuntimeEvent } from "../../src/runtime/index.js";

const flaky = (failures: number, calls: { n: number }) => () => {
  calls.n++;
  if (calls.n <= failures) throw new Error(`boom ${calls.n}`);
  return { causal_parent_ids: [] };
};

describe("on_failure: retry (§5.4)", () => {
  it("retries up to max_retries with exponential backoff on the clock", async () => {
    const calls = { n: 0 };
    const m = manifestWith((m) => Object.assign(m.phases[2], { on_failure: "retry", max_retries: 3 }));
    const { loop, clock } = await setup(m);
    loop.handle("apply", flaky(3, calls));
    const delays: number[] = [];
    loop.subscribe((e) => e.type === "phase.retrying" && delays.push(e.delay_ms));
    const started = clock.now();
    const running = loop.runIteration();
    await clock.runAll();
    const r = await running;
    expect(r.status).toBe("completed");
    expect(calls.n).toBe(4);
    expect(delays).toEqual([100, 200, 400]);
    expect(clock.now() - started).toBe(700);
  });

  it("fails after max_retries, without retrying refusals that cannot change", async () => {
    const calls = { n: 0 };
    const m = manifestWith((m) => Object.assign(m.phases[2], { on_failure: "retry", max_retries: 2 }));
    const { loop, clock } = await setup(m);
    loop.handle("apply", flaky(10, calls));
    const running = loop.runIteration();
    await clock.runAll();
    expect((await running).status).toBe("failed");
    expect(calls.n).toBe(3);

    // An invariant violation is not retried: retrying cannot make it pass.
    calls.n = 0;
    loop.handle("apply", () => (calls.n++, { no_parents: true }));
    const second = loop.runIteration();
    await clock.runAll();
    expect((await second).error?.code).toBe("INVARIANT_VIOLATION");
    expect(calls.n).toBe(1);
  });
});

describe("timeout_ms", () => {
  it("fails a phase that outlives its timeout and aborts its signal", async () => {
    const m = manifestWith((m) => Object.assign(m.phases[0], { timeout_ms: 500 }));
    const { loop, clock } = await setup(m);
    let aborted = false;
    loop.handle("fetch", ({ signal, clock: c }) => c.sleep(10_000, signal).catch(() => ((aborted = signal.aborted), {})).then(() => ({})));
    const running = loop.runIteration();
    await clock.advance(499);
    await clock.advance(1);
    const r = await running;
    expect(r.error).toMatchObject({ code: "PHASE_TIMEOUT" });
    expect(r.error?.message).toMatch(/timeout_ms 500/);
    expect(aborted).toBe(true);
    expect(clock.pending).toBe(0);
  });

  it("lets a phase that finishes in time complete, leaving no timer behind", async () => {
    const m = manifestWith((m) => Object.assign(m.phases[0], { timeout_ms: 500 }));
    const { loop, clock } = await setup(m);
    loop.handle("fetch", async ({ clock: c }) => (await c.sleep(499), {}));
    const running = loop.runIteration();
    await clock.advance(499);
    expect((await running).status).toBe("completed");
    expect(clock.pending).toBe(0);
  });
});

describe("rollback, skip, escalate, abort_loop", () => {
  it("rollback: the phase's writes are discarded and the iteration ends rolled back", async () => {
    const m = manifestWith((m) => (m.phases[2].on_failure = "rollback"));
    const { loop, substrates, audit } = await setup(m);
    loop.handle("apply", async ({ substrates: s }) => {
      await s.memory.store_node({ node: { content: "half-done" } });
      throw new Error("second write failed");
    });
    const r = await loop.runIteration({ workspace: "w", traceId: TRACE });
    expect(r.status).toBe("rolled_back");
    expect(substrates.memory.inspect("w").nodes).toEqual([]);
    expect(auditShape(await audit(TRACE, "w"))).toEqual(["iteration.started", "phase.completed fetch", "phase.routed decide", "phase.rolled_back apply", "iteration.failed"]);
  });

  it("commits all of a phase's writes together when it succeeds", async () => {
    const { loop, substrates } = await setup();
    loop.handle("apply", async ({ substrates: s }) => {
      const a = await s.memory.store_node({ node: { content: "a" } });
      const b = await s.memory.store_node({ node: { content: "b" } });
      await s.memory.store_edge({ src: a.node_id, dst: b.node_id, type: "causal" });
      // Not visible to anyone outside the phase until it commits.
      expect(substrates.memory.inspect("w").nodes).toHaveLength(0);
      return { causal_parent_ids: [a.node_id] };
    });
    expect((await loop.runIteration({ workspace: "w" })).status).toBe("completed");
    expect(substrates.memory.inspect("w").nodes).toHaveLength(2);
    expect(substrates.memory.inspect("w").edges).toHaveLength(1);
  });

  it("skip: the iteration continues past the failed phase with the input it had", async () => {
    const m = manifestWith((m) => (m.phases[1].on_failure = "skip"));
    const { loop, calls } = await setup(m);
    let actInput: unknown;
    loop.handle("decide", () => {
      throw new Error("no decision");
    });
    loop.handle("apply", ({ input }) => ((actInput = input), calls.push("apply"), { causal_parent_ids: [] }));
    const r = await loop.runIteration();
    expect(r.status).toBe("completed");
    expect(r.phases.map((p) => p.status)).toEqual(["completed", "skipped", "completed", "completed"]);
    expect(actInput).toEqual({ seen: null });
  });

  it("escalate: an EscalationRequest goes to the host, the iteration ends escalated", async () => {
    const escalations: unknown[] = [];
    const m = manifestWith((m) => (m.phases[2].on_failure = "escalate"));
    const { loop } = await setup(m, { runtime: { hooks: { escalate: async (e) => void escalations.push({ phase: e.phase.id, code: e.error.code }) } } });
    const events: RuntimeEvent[] = [];
    loop.subscribe((e) => events.push(e));
    loop.handle("apply", () => {
      throw new Error("needs a human");
    });
    const r = await loop.runIteration();
    expect(r.status).toBe("escalated");
    expect(escalations).toEqual([{ phase: "apply", code: "HANDLER_FAILED" }]);
    expect(events.find((e) => e.type === "escalation.requested")).toMatchObject({ phase_id: "apply", reason: "phase apply failed: needs a human" });
    expect(loop.status()).toBe("idle");
  });

  it("abort_loop: the loop stops and refuses further iterations", async () => {
    const m = manifestWith((m) => (m.phases[0].on_failure = "abort_loop"));
    const { loop } = await setup(m);
    loop.handle("fetch", () => {
      throw new Error("corrupt state");
    });
    expect((await loop.runIteration()).status).toBe("aborted");
    expect(loop.status()).toBe("stopped");
    await expect(loop.runIteration()).rejects.toMatchObject({ code: "LOOP_NOT_RUNNABLE" });
  });

  it("no directive: the iteration fails and the loop carries on", async () => {
    const { loop } = await setup();
    let n = 0;
    loop.handle("fetch", () => {
      if (++n === 1) throw new Error("once");
      return {};
    });
    expect((await loop.runIteration()).status).toBe("failed");
    expect((await loop.runIteration()).status).toBe("completed");
  });
});

describe("idempotency (§5.2)", () => {
  const idem = manifestWith((m) => {
    m.phases[0].idempotent = true;
    m.phases[0].signature = "hash(query)";
  });

  it("replays an idempotent phase with the same signature: identical output, no side effects", async () => {
    const { loop, substrates } = await setup(idem);
    let runs = 0;
    loop.handle("fetch", async ({ input, substrates: s }) => {
      runs++;
      await s.memory.store_node({ node: { content: `run ${runs}` } });
      return { answer: runs, query: (input as { query: string }).query, nested: { b: 2, a: [1] } };
    });
    const first = await loop.runIteration({ workspace: "w", input: { query: "q", noise: 1 } });
    const second = await loop.runIteration({ workspace: "w", input: { query: "q", noise: 2 } });
    expect(runs).toBe(1);
    expect(second.phases[0]).toMatchObject({ status: "replayed", signature: first.phases[0]!.signature });
    expect(substrates.memory.inspect("w").nodes).toHaveLength(1);
    // A different query is a different signature: it runs.
    await loop.runIteration({ workspace: "w", input: { query: "other" } });
    expect(runs).toBe(2);
  });

  it("runs concurrent duplicates once", async () => {
    const { loop } = await setup(idem);
    let runs = 0;
    loop.handle("fetch", async () => {
      runs++;
      await new Promise((r) => setTimeout(r, 10));
      return { runs };
    });
    const results = await Promise.all([0, 1, 2, 3].map((i) => loop.invokePhase("fetch", { workspace: "w", input: { query: "q" }, traceId: `${i}`.repeat(32).slice(0, 31) + "a" })));
    expect(runs).toBe(1);
    expect(results.map((r) => (r.outcome.kind === "completed" ? r.outcome.output : null))).toEqual([{ runs: 1 }, { runs: 1 }, { runs: 1 }, { runs: 1 }]);
  });

  it("re-runs a non-idempotent phase but still signs it (§5.2)", async () => {
    const { loop } = await setup();
    let runs = 0;
    loop.handle("apply", () => (runs++, { causal_parent_ids: [] }));
    const a = await loop.runIteration({ input: { x: 1 } });
    const b = await loop.runIteration({ input: { x: 1 } });
    expect(runs).toBe(2);
    expect(a.phases[2]!.signature).toMatch(/^blake3:/);
    expect(a.phases[2]!.status).toBe("completed");
    expect(b.phases[2]!.status).toBe("completed");
  });

  it("never replays another workspace's output", async () => {
    const { loop } = await setup(idem);
    let runs = 0;
    loop.handle("fetch", ({ workspace_id }) => (runs++, { workspace_id }));
    await loop.runIteration({ workspace: "a", input: { query: "q" } });
    const b = await loop.runIteration({ workspace: "b", input: { query: "q" } });
    expect(runs).toBe(2);
    expect(b.phases[0]!.status).toBe("completed");
  });

  it("replays a read only while the world it read is unchanged: after a committed memory write of its workspace the read runs again", async () => {
    const { loop } = await setup(idem);
    let reads = 0;
    loop.handle("fetch", async ({ input, substrates: s }) => {
      reads++;
      const { nodes } = await s.memory.retrieve_context({ query: (input as { query: string }).query });
      return { found: nodes.map((n) => n.content) };
    });
    loop.handle("apply", async ({ substrates: s, iteration }) => (await s.memory.store_node({ node: { content: `q answer ${iteration}` } }), { causal_parent_ids: [] }));
    const first = await loop.runIteration({ workspace: "w", input: { query: "q" } });
    expect(first.phases[0]).toMatchObject({ status: "completed" });
    // The act of iteration 1 wrote to memory: the same read again is not a duplicate of a stale one.
    const second = await loop.runIteration({ workspace: "w", input: { query: "q" } });
    expect(second.phases[0]).toMatchObject({ status: "completed", signature: first.phases[0]!.signature });
    expect(second.phases.find((p) => p.phase_id === "decide")).toBeDefined();
    expect(reads).toBe(2);
    // Nothing written since (a direct invocation runs the read alone): the duplicate replays.
    const again = await loop.invokePhase("fetch", { workspace: "w", input: { query: "q" } });
    const twice = await loop.invokePhase("fetch", { workspace: "w", input: { query: "q" } });
    expect(again.outcome).toMatchObject({ kind: "completed", replayed: false, output: { found: ["q answer 1", "q answer 2"] } });
    expect(twice.outcome).toMatchObject({ kind: "completed", replayed: true, output: { found: ["q answer 1", "q answer 2"] } });
    expect(reads).toBe(3);
    // A write in another workspace leaves this workspace's reads replayable.
    await loop.runIteration({ workspace: "other", input: { query: "q" } });
    expect((await loop.invokePhase("fetch", { workspace: "w", input: { query: "q" } })).outcome).toMatchObject({ replayed: true });
  });

  it("a phase that wrote replays even after later writes: its side effects never happen twice", async () => {
    const { loop, substrates } = await setup(idem);
    let runs = 0;
    loop.handle("fetch", async ({ substrates: s }) => {
      runs++;
      await s.memory.retrieve_context({ query: "" });
      await s.memory.store_node({ node: { content: `fetched ${runs}` } });
      return { runs };
    });
    await loop.runIteration({ workspace: "w", input: { query: "q" } });
    const second = await loop.runIteration({ workspace: "w", input: { query: "q" } });
    expect(second.phases[0]).toMatchObject({ status: "replayed" });
    expect(runs).toBe(1);
    expect(substrates.memory.inspect("w").nodes.filter((n) => String(n.node.content).startsWith("fetched"))).toHaveLength(1);
  });

  it("does not cache a failure: the next invocation runs again", async () => {
    const { loop } = await setup(idem);
    let runs = 0;
    loop.handle("fetch", () => {
      if (++runs === 1) throw new Error("transient");
      return { ok: true };
    });
    expect((await loop.runIteration({ input: { query: "q" } })).status).toBe("failed");
    expect((await loop.runIteration({ input: { query: "q" } })).phases[0]!.status).toBe("completed");
    expect(runs).toBe(2);
  });
});
