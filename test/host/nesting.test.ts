import { describe, expect, it } from "vitest";
import { hostOn, loopManifest } from "./harness.js";
import type { Escalation } from "../../src/host/index.js";
import { TRACE } from "../runtime/harness.js";

const consolidation = (trace_id: string, status: "stable" | "unstable") => ({ token: "ConsolidationEvent", version: "0.1", trace_id, timescale: "fast", convergence_status: status });

/** outer.loop runs inner.loop from its "decide" phase with the given wait. */
function pair(wait: string | undefined, extra: Record<string, unknown> = {}, condition = "") {
  const outer = loopManifest("t.outer", (m) => {
    m.nesting = { inner_loops: [{ loop_id: "t.inner", trigger: `phase:decide${condition}`, ...(wait ? { wait } : {}), ...extra }] };
  });
  const inner = loopManifest("t.inner", (m) => {
    m.nesting = { parent_loop: "t.outer" };
    m.phases[3] = { id: "settle", kind: "consolidate" };
    m.closure.from_phase = "settle";
  });
  return { outer, inner };
}

describe("nested loops (§3.6, §11)", () => {
  it("until_stable: the outer phase waits until the inner loop reports stability", async () => {
    const { host } = await hostOn();
    const { outer, inner } = pair("until_stable");
    const o = await host.load(outer);
    const i = await host.load(inner);
    const order: string[] = [];
    let round = 0;
    i.handle("settle", ({ trace_id }) => (order.push(`inner ${++round}`), consolidation(trace_id, round < 3 ? "unstable" : "stable")));
    o.handle("apply", ({ tokens }) => (order.push(`outer act sees ${(tokens.find((t) => t.token === "ConsolidationEvent") as { convergence_status?: string })?.convergence_status}`), { causal_parent_ids: [] }));
    const started: { loop_id: string; trace_id: string; cause?: Record<string, unknown> }[] = [];
    host.subscribe((e) => e.type === "iteration.started" && started.push(e));
    const r = await host.trigger("t.outer");
    expect(r.status).toBe("completed");
    expect(order).toEqual(["inner 1", "inner 2", "inner 3", "outer act sees stable"]);
    // Each inner iteration names the outer iteration and phase that ran it.
    const inners = started.filter((e) => e.loop_id === "t.inner");
    expect(inners).toHaveLength(3);
    for (const e of inners) expect(e.cause).toEqual({ inner_of: "t.outer", phase: "decide", trace_id: r.trace_id, wait: "until_stable" });
    expect(started.find((e) => e.loop_id === "t.outer")?.cause?.inner_of).toBeUndefined();
  });

  it("until_stable is the default wait; it gives up, failing the phase, when stability never comes", async () => {
    const { host } = await hostOn({ maxInnerIterations: 4 });
    const { outer, inner } = pair(undefined);
    await host.load(outer);
    const i = await host.load(inner);
    let runs = 0;
    i.handle("settle", ({ trace_id }) => (runs++, consolidation(trace_id, "unstable")));
    const r = await host.trigger("t.outer");
    expect(runs).toBe(4);
    expect(r.error).toMatchObject({ code: "NESTING_UNSTABLE" });
  });

  it("until_done runs one inner iteration; the condition decides whether it runs at all", async () => {
    const { host } = await hostOn();
    const { outer, inner } = pair("until_done", {}, " when kappa > 0");
    const o = await host.load(outer);
    const i = await host.load(inner);
    let runs = 0;
    i.handle("settle", ({ trace_id }) => (runs++, consolidation(trace_id, "unstable")));
    const topology = (k: number) => ({ topology: { token: "TopologyContext", version: "0.1", trace_id: TRACE, max_kappa: k } });
    o.handle("fetch", ({ input }) => topology((input as { k: number }).k));
    o.handle("decide", ({ input }) => ({ decision: (input as { topology: { max_kappa: number } }).topology.max_kappa > 0 ? "deliberate" : "fast" }));
    await host.trigger("t.outer", { input: { k: 0 } });
    expect(runs).toBe(0);
    await host.trigger("t.outer", { input: { k: 1 } });
    expect(runs).toBe(1);
  });

  it("fire_forget continues at once; bounded waits at most timeout_ms", async () => {
    for (const [wait, extra, expected] of [
      ["fire_forget", {}, 0],
      ["bounded", { timeout_ms: 1_000 }, 1_000],
      ["bounded", { timeout_ms: 9_000 }, 5_000],
    ] as const) {
      const { host, clock } = await hostOn();
      const { outer, inner } = pair(wait, extra);
      const o = await host.load(outer);
      const i = await host.load(inner);
      i.handle("fetch", async ({ clock: c }) => (await c.sleep(5_000), {}));
      let actAt = 0;
      const start = clock.now();
      o.handle("apply", () => ((actAt = clock.now() - start), { causal_parent_ids: [] }));
      const running = host.trigger("t.outer");
      await clock.runAll();
      expect((await running).status).toBe("completed");
      expect(actAt, `${wait} ${JSON.stringify(extra)}`).toBe(expected);
      await host.settled();
    }
  });

  it("brings the inner DeliberationResult to the outer act: quorum before commit (§7.5)", async () => {
    for (const [confidence, status] of [
      [0.9, "completed"],
      [0.5, "failed"],
    ] as const) {
      const { host } = await hostOn();
      const { outer, inner } = pair("until_done");
      outer.invariants.quorum_before_commit = true;
      await host.load(outer);
      const i = await host.load(inner);
      i.handle("apply", ({ trace_id }) => ({ causal_parent_ids: [], result: { token: "DeliberationResult", version: "0.1", trace_id, verdict: "approve", confidence } }));
      const r = await host.trigger("t.outer");
      expect(r.status).toBe(status);
    }
  });

  it("an inner escalation fails the waiting outer phase, which escalates to its own parent or to a human", async () => {
    const escalations: Escalation[] = [];
    const { host } = await hostOn({ onEscalation: (e) => void escalations.push(e) });
    const { outer, inner } = pair("until_done");
    outer.phases[1].on_failure = "escalate";
    inner.phases[0].on_failure = "escalate";
    await host.load(outer);
    const i = await host.load(inner);
    i.handle("fetch", () => {
      throw new Error("cannot decide");
    });
    const r = await host.trigger("t.outer");
    expect(r.status).toBe("escalated");
    expect(r.error?.code).toBe("ESCALATED");
    expect(escalations.map((e) => [e.from, e.to, e.envelope.type])).toEqual([
      ["t.inner", "t.outer", "org.opensentience.pulse.EscalationRequest"],
      ["t.outer", "human", "org.opensentience.pulse.EscalationRequest"],
    ]);
    expect(escalations[0]!.envelope).toMatchObject({ source: "loop:t.inner/phase:fetch", data: { reason: "phase fetch failed: cannot decide" } });
  });

  it("nests eight levels deep", async () => {
    const { host } = await hostOn();
    const depth = 8;
    const ran: string[] = [];
    for (let level = 0; level < depth; level++) {
      const m = loopManifest(`t.level${level}`, (m) => {
        m.nesting = { ...(level > 0 ? { parent_loop: `t.level${level - 1}` } : {}), inner_loops: level < depth - 1 ? [{ loop_id: `t.level${level + 1}`, trigger: "phase:decide", wait: "until_done" }] : [] };
      });
      const loop = await host.load(m);
      loop.handle("learn", () => (ran.push(`level ${level}`), {}));
    }
    const r = await host.trigger("t.level0");
    expect(r.status).toBe("completed");
    expect(ran).toEqual(["level 7", "level 6", "level 5", "level 4", "level 3", "level 2", "level 1", "level 0"]);
  });

  it("notes an inner loop the host does not run, and goes on", async () => {
    const { host, events } = await hostOn();
    await host.load(pair("until_stable").outer);
    expect((await host.trigger("t.outer")).status).toBe("completed");
    expect(events.find((e) => e.type === "host.note")).toMatchObject({ message: expect.stringMatching(/inner loop t\.inner of t\.outer is not loaded/) });
  });
});
