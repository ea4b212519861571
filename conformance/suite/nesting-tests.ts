/** §12 tests 3, 4 and 5: nesting, κ-routing and quorum, where one loop's decision gates another's. */
import { traceId } from "../harness/context.js";
import { loop, standardLoop, token, WS, ACT } from "./manifests.js";
import { TRANSITIONS, type ConformanceTest } from "./test.js";


function consolidation(status: string) {
  return token("ConsolidationEvent", "$trace", { timescale: "fast", convergence_status: status });
}

export const nestingUntilStable: ConformanceTest = {
  number: 3,
  name: "nesting_wait_until_stable",
  summary: "an outer phase waits until_stable on an inner loop that needs three slow iterations to report stable: the outer loop moves on only after the stable one",
  async run(ctx) {
    await ctx.configure();
    const outer = "conformance.outer";
    const inner = "conformance.inner";
    await ctx.load(loop(inner, [{ id: "observe", kind: "retrieve" }, { id: "converge", kind: "consolidate" }], { nesting: { parent_loop: outer }, invariants: { append_only_audit: true, trace_id_propagation: true } }), {
      converge: { delay_ms: 1_500, outputs: [consolidation("unstable"), consolidation("unstable"), consolidation("stable")] },
    });
    await ctx.load(
      standardLoop(outer, { nesting: { inner_loops: [{ loop_id: inner, trigger: "phase:decide", wait: "until_stable" }] } }, {}),
      { apply: ACT },
    );
    const it = await ctx.whileAdvancing(ctx.driver.call("iteration.run", { loop_id: outer, workspace: WS, trace_id: traceId(1, 3), input: {} }), 30_000, 250);
    const audit = await ctx.auditEvents();
    ctx.attach(audit, []);
    const innerDone = audit.map((e, i) => ({ e, i })).filter(({ e }) => e.loop_id === inner && e.phase_id === "converge" && TRANSITIONS.has(e.event_type));
    if (innerDone.length === 0) {
      ctx.skip("the inner loop never ran, so there was no wait to observe");
      return;
    }
    const stableAt = innerDone[2]?.i ?? Number.POSITIVE_INFINITY;
    const decided = audit.findIndex((e) => e.loop_id === outer && e.phase_id === "decide" && TRANSITIONS.has(e.event_type));
    const applied = audit.findIndex((e) => e.loop_id === outer && e.phase_id === "apply" && TRANSITIONS.has(e.event_type));
    ctx.check("the inner loop iterated until its stable ConsolidationEvent (3 iterations)", innerDone.length >= 3, 3, innerDone.length);
    ctx.check("the waiting phase completed only after the inner loop reported stable", decided === -1 || decided > stableAt, "decide after the 3rd converge", decided === -1 ? "decide never completed" : `decide at audit #${decided}, stable at #${stableAt === Number.POSITIVE_INFINITY ? "never" : stableAt}`);
    ctx.check("no outer phase after the wait ran before stability", applied === -1 || applied > stableAt, "apply after stability", applied === -1 ? "apply never ran" : `apply at audit #${applied}`);
    ctx.check("after stability the outer loop proceeds and its iteration completes", it.status === "completed", "completed", `${it.status}${it.error ? ` (${it.error.code})` : ""}`);
  },
};

export const kappaRouting: ConformanceTest = {
  number: 4,
  name: "kappa_routes_to_deliberate",
  summary: "a retrieve reports max_kappa 0, 1e-6, 0.5 and 2 to a route phase that always says \"fast\": every κ > 0 keeps the act from running on the fast path; κ = 0 lets it; deciding deliberate is accepted",
  async run(ctx) {
    const cases: { kappa: number; decision: string }[] = [
      { kappa: 0, decision: "fast" },
      { kappa: 1e-6, decision: "fast" },
      { kappa: 0.5, decision: "fast" },
      { kappa: 2, decision: "fast" },
      { kappa: 0.5, decision: "deliberate" },
    ];
    let exercised = 0;
    for (const [n, c] of cases.entries()) {
      await ctx.configure();
      const loopId = await ctx.load(standardLoop("conformance.kappa"), {
        fetch: { output: token("TopologyContext", "$trace", { max_kappa: c.kappa, routing: c.kappa > 0 ? "deliberate" : "fast" }) },
        decide: { output: { decision: c.decision } },
        apply: ACT,
      });
      const it = await ctx.whileAdvancing(ctx.driver.call("iteration.run", { loop_id: loopId, workspace: `ws_kappa_${n}`, trace_id: traceId(n + 1, 4), input: {} }), 10_000);
      const reachedRoute = it.phases.some((p) => p.phase_id === "decide");
      if (!reachedRoute) continue;
      exercised++;
      const acted = it.phases.some((p) => p.phase_id === "apply" && p.status === "completed");
      if (c.decision === "deliberate") ctx.check(`κ = ${c.kappa} with the route deciding deliberate: accepted, the loop goes on`, acted, "act runs", acted ? "act ran" : `stopped: ${it.error?.code ?? it.status}`);
      else if (c.kappa > 0) ctx.check(`κ = ${c.kappa} with the route saying fast: the act does not run on the fast path`, !acted, "act blocked (route must deliberate)", acted ? "act ran on the fast path" : `blocked: ${it.error?.code ?? it.status}`);
      else ctx.check("κ = 0 with the route saying fast: the fast path is allowed", acted, "act runs", acted ? "act ran" : `stopped: ${it.error?.code ?? it.status}`);
    }
    if (exercised === 0) ctx.skip("no iteration reached the route phase");
  },
};

export const quorumBeforeCommit: ConformanceTest = {
  number: 5,
  name: "quorum_before_commit",
  summary: "an act phase after an inner deliberation whose DeliberationResult.confidence is 0.5, 0.659, 0.66 and 0.9: no commit below 0.66, a commit at or above",
  async run(ctx) {
    let exercised = 0;
    for (const [n, confidence] of [0.5, 0.659, 0.66, 0.9].entries()) {
      await ctx.configure();
      const outer = "conformance.quorum";
      const council = "conformance.council";
      await ctx.load(loop(council, [{ id: "gather", kind: "retrieve" }, { id: "vote", kind: "custom", custom_kind: "deliberate" }], { nesting: { parent_loop: outer }, invariants: { append_only_audit: true, trace_id_propagation: true } }), {
        vote: { output: token("DeliberationResult", "$trace", { verdict: "commit", confidence, consensus_type: "conflict_path" }) },
      });
      const manifest = loop(
        outer,
        [
          { id: "fetch", kind: "retrieve" },
          { id: "deliberate", kind: "route" },
          { id: "apply", kind: "act" },
          { id: "learn", kind: "learn" },
        ],
        { nesting: { inner_loops: [{ loop_id: council, trigger: "phase:deliberate", wait: "until_done" }] } },
      );
      (manifest.invariants as Record<string, boolean>).quorum_before_commit = true;
      await ctx.load(manifest, { apply: ACT });
      await ctx.whileAdvancing(ctx.driver.call("iteration.run", { loop_id: outer, workspace: `ws_quorum_${n}`, trace_id: traceId(n + 1, 5), input: {} }), 10_000);
      const calls = await ctx.calls();
      const audit = await ctx.auditEvents();
      if (!audit.some((e) => e.loop_id === council && e.phase_id === "vote" && TRANSITIONS.has(e.event_type))) continue;
      exercised++;
      // The act's commit is its transition audit event: phase atomicity (test 1) is what makes
      // its writes follow it, so this test does not judge the writes themselves.
      const committed = audit.some((e) => e.loop_id === outer && e.phase_id === "apply" && TRANSITIONS.has(e.event_type));
      if (confidence < 0.66) {
        ctx.check(`confidence ${confidence}: the act does not commit`, !committed, "no commit", committed ? "committed" : "no commit");
        if (committed) ctx.attach(audit, calls);
      } else {
        ctx.check(`confidence ${confidence}: the act commits`, committed, "commit", committed ? "committed" : "no commit");
      }
    }
    if (exercised === 0) ctx.skip("the inner deliberation loop never ran");
  },
};
