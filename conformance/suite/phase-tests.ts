/** §12 tests 1, 2, 6 and 7: how a single phase behaves. */
import { canonicalJson } from "../../src/json/canonical-json.js";
import { RuntimeError } from "../driver/driver.js";
import { traceId } from "../harness/context.js";
import { standardLoop, WS, ACT } from "./manifests.js";
import { effectiveWrites, nodeIdOf, type ConformanceTest, TRANSITIONS } from "./test.js";


export const phaseAtomicity: ConformanceTest = {
  number: 1,
  name: "phase_atomicity_under_concurrency",
  summary: "two invocations of one phase run at once, each writing twice with a pause between: the writes of one never become visible interleaved with the other's",
  async run(ctx) {
    await ctx.configure();
    const loopId = await ctx.load(standardLoop("conformance.atomicity"), {
      apply: {
        calls: [
          { slot: "memory", operation: "store_node", args: { node: { id: "$input.first", content: "first half" } } },
          { slot: "memory", operation: "store_node", args: { node: { id: "$input.second", content: "second half" } }, after_delay: true },
        ],
        delay_ms: 500,
        output: { causal_parent_ids: [] },
      },
    });
    const a = ctx.driver.call("phase.invoke", { loop_id: loopId, workspace: WS, trace_id: traceId(1, 1), phase_id: "apply", input: { first: "a1", second: "a2" } });
    const b = ctx.driver.call("phase.invoke", { loop_id: loopId, workspace: WS, trace_id: traceId(2, 1), phase_id: "apply", input: { first: "b1", second: "b2" } });
    const results = await ctx.whileAdvancing(Promise.all([a, b]), 10_000);
    const calls = await ctx.calls();
    const writes = calls.filter((c) => c.slot === "memory" && c.operation === "store_node" && !c.error);
    ctx.attach(await ctx.auditEvents(), writes);
    const wrote = (p: string) => writes.filter((c) => nodeIdOf(c)?.startsWith(p)).length;
    if (results.every((r) => r.status !== "completed") || wrote("a") + wrote("b") === 0) {
      ctx.skip("neither invocation wrote anything, so there was nothing that could interleave");
      return;
    }
    const visible = effectiveWrites(calls, (c) => c.slot === "memory" && c.operation === "store_node").map((c) => nodeIdOf(c) ?? "?");
    const owners = visible.map((id) => id[0]).join("");
    const contiguous = !/a+b+a|b+a+b/.test(owners);
    ctx.check("each invocation's writes become visible together, never interleaved with the other's", contiguous, "a1 a2 then b1 b2 (or b before a)", visible.join(" "));
    for (const [name, r] of [["first", results[0]], ["second", results[1]]] as const) {
      const own = name === "first" ? "a" : "b";
      const seen = visible.filter((id) => id.startsWith(own)).length;
      if (r.status === "completed") ctx.check(`the ${name} invocation completed, so both its writes are visible`, seen === 2, 2, seen);
      else ctx.check(`the ${name} invocation was refused, so none of its writes is visible`, seen === 0, 0, seen);
    }
  },
};

export const feedbackPath: ConformanceTest = {
  number: 2,
  name: "feedback_path_cannot_be_skipped",
  summary: "a learn phase invoked with no act before it in its iteration is rejected; after an act it runs",
  async run(ctx) {
    await ctx.configure();
    const loopId = await ctx.load(standardLoop("conformance.feedback"), { apply: ACT, learn: { output: { learned: true } } });
    const lonely = traceId(1, 2);
    const r = await ctx.driver.call("phase.invoke", { loop_id: loopId, workspace: WS, trace_id: lonely, phase_id: "learn", input: {} });
    ctx.check("learn without a preceding act is rejected with PHASE_ORDER_VIOLATION", r.status === "failed" && r.error?.code === "PHASE_ORDER_VIOLATION", { status: "failed", code: "PHASE_ORDER_VIOLATION" }, { status: r.status, code: r.error?.code });
    const full = await ctx.whileAdvancing(ctx.driver.call("iteration.run", { loop_id: loopId, workspace: WS, trace_id: traceId(2, 2), input: {} }), 10_000);
    const learned = full.phases.find((p) => p.phase_id === "learn");
    ctx.check("control: in an iteration where apply (act) ran, learn completes", learned?.status === "completed", "completed", learned?.status ?? "not reached");
    const audit = await ctx.auditEvents();
    const transitions = audit.filter((e) => e.trace_id === lonely && e.phase_id === "learn" && TRANSITIONS.has(e.event_type));
    ctx.check("the rejected learn left no phase.completed audit event", transitions.length === 0, 0, transitions.length);
    ctx.attach(audit, []);
  },
};

export const auditPerPhase: ConformanceTest = {
  number: 6,
  name: "audit_event_per_phase",
  summary: "a full iteration with a retried phase, a replayed idempotent phase and a failed phase: exactly one transition audit event per phase that ran, none for a failure or a replay",
  async run(ctx) {
    await ctx.configure();
    const loopId = await ctx.load(standardLoop("conformance.audit", {}, { fetch: { idempotent: true }, apply: { on_failure: "retry", max_retries: 2 } }), {
      fetch: { output: { found: 1 } },
      apply: { fail_times: 1, output: { causal_parent_ids: [] } },
    });
    const broken = await ctx.load(standardLoop("conformance.audit_failing"), { fetch: { fail_times: 1_000 } });
    const t = traceId(1, 6);
    const it = await ctx.whileAdvancing(ctx.driver.call("iteration.run", { loop_id: loopId, workspace: WS, trace_id: t, input: { q: 1 } }), 30_000);
    const replay = traceId(2, 6);
    await ctx.driver.call("phase.invoke", { loop_id: loopId, workspace: WS, trace_id: replay, phase_id: "fetch", input: { q: 2 } });
    const again = await ctx.driver.call("phase.invoke", { loop_id: loopId, workspace: WS, trace_id: replay, phase_id: "fetch", input: { q: 2 } });
    const failing = traceId(3, 6);
    const refused = await ctx.driver.call("phase.invoke", { loop_id: broken, workspace: WS, trace_id: failing, phase_id: "fetch", input: {} });
    const audit = await ctx.auditEvents();
    ctx.attach(audit.filter((e) => [t, replay, failing].includes(e.trace_id)), []);
    const ran = it.phases.filter((p) => p.status === "completed").map((p) => p.phase_id);
    if (!ran.includes("apply")) {
      ctx.skip(`the iteration did not get through the retried phase (phases: ${ran.join(", ") || "none"})`);
      return;
    }
    const count = (trace: string, phase: string) => audit.filter((e) => e.trace_id === trace && e.phase_id === phase && TRANSITIONS.has(e.event_type)).length;
    for (const phase of ran) ctx.check(`one transition audit event for ${phase}${phase === "apply" ? " (retried once)" : ""}`, count(t, phase) === 1, 1, count(t, phase));
    if (again.replayed) ctx.check("a replayed idempotent invocation adds no second transition event", count(replay, "fetch") === 1, 1, count(replay, "fetch"));
    else ctx.note("the second invocation of the idempotent phase was not a replay; test 7 judges that");
    if (refused.status === "failed") ctx.check("a failed invocation produces no transition event", count(failing, "fetch") === 0, 0, count(failing, "fetch"));
    const everyCarries = audit.filter((e) => e.trace_id === t).every((e) => typeof e.timestamp === "string" && typeof e.signature === "string" && "phase_id" in e);
    ctx.check("every audit event carries trace_id, phase_id, timestamp and signature (§7.3)", everyCarries, true, everyCarries);
  },
};

export const idempotentRetry: ConformanceTest = {
  number: 7,
  name: "idempotent_retry_identical",
  summary: "an idempotent phase invoked again with the same signature, one after another and three at once: identical output, side effect seen once",
  async run(ctx) {
    await ctx.configure();
    const loopId = await ctx.load(standardLoop("conformance.idempotent", {}, { fetch: { idempotent: true } }), {
      fetch: { calls: [{ slot: "memory", operation: "store_node", args: { node: { id: "side-$input.q-$invocation" } } }], delay_ms: 200, output: { run: "$invocation", q: "$input.q" } },
    });
    const invoke = (n: number, q: number) => ctx.driver.call("phase.invoke", { loop_id: loopId, workspace: WS, trace_id: traceId(n, 7), phase_id: "fetch", input: { q } });
    const first = await ctx.whileAdvancing(invoke(1, 1), 5_000);
    const second = await ctx.whileAdvancing(invoke(2, 1), 5_000);
    const concurrent = await ctx.whileAdvancing(Promise.all([invoke(3, 2), invoke(4, 2), invoke(5, 2)]), 5_000);
    const calls = await ctx.calls();
    const sideEffects = (q: number) => effectiveWrites(calls, (c) => c.operation === "store_node").filter((c) => nodeIdOf(c)?.startsWith(`side-${q}-`)).length;
    ctx.attach(await ctx.auditEvents(), calls.filter((c) => c.operation === "store_node"));
    if (first.status !== "completed") {
      ctx.skip(`the phase did not complete (${first.error?.code ?? first.status}), so there was nothing to retry`);
      return;
    }
    const canon = (v: unknown) => canonicalJson(v ?? null);
    ctx.check("same signature both times", first.signature === second.signature, first.signature, second.signature);
    ctx.check("a sequential retry returns the canonical-JSON-identical output", canon(first.output) === canon(second.output), canon(first.output), canon(second.output));
    ctx.check("the side effect reached the substrate once for the sequential pair", sideEffects(1) === 1, 1, sideEffects(1));
    const outputs = concurrent.map((r) => canon(r.output));
    ctx.check("three concurrent invocations return one identical output", new Set(outputs).size === 1 && concurrent.every((r) => r.status === "completed"), "one output", outputs);
    ctx.check("the side effect reached the substrate once for the concurrent three", sideEffects(2) === 1, 1, sideEffects(2));
  },
};

export function isRuntimeError(e: unknown, code?: string): e is RuntimeError {
  return e instanceof RuntimeError && (code === undefined || e.code === code);
}
