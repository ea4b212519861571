/** The loop versions of §12 tests 1, 2, 6, 7, 10, 11 and 12: how the loop's phases behave one by one. */
import { validateValue } from "../../src/validator/validate.js";
import { canonicalJson, ManifestRejectedError } from "../../src/index.js";
import { traceId } from "../harness/context.js";
import { effectiveWrites, nodeIdOf, TRANSITIONS } from "../suite/test.js";
import { auditEvents, type LoopContext } from "./context.js";
import type { LoopSession } from "./session.js";
import { MUTATIONS, type LoopCall } from "./substrates.js";
import { actBefore, phasesOf, pick, type LoopTest } from "./test.js";

/** Invokes a phase directly; a learn phase gets the act it needs first, in the same iteration. */
async function invokePrepared(ctx: LoopContext, s: LoopSession, phaseId: string, workspace: string, trace: string) {
  const phase = ctx.profile.phases.get(phaseId)!;
  if (phase.kind === "learn") {
    const act = actBefore(ctx.subject.manifest, phaseId);
    if (act) await s.invoke(act.id, { workspace, traceId: trace, input: ctx.profile.inputOf(act.id) });
  }
  return s.invoke(phaseId, { workspace, traceId: trace, input: ctx.profile.inputOf(phaseId) });
}

const isMutation = (c: LoopCall) => c.slot === "memory" && MUTATIONS.has(c.operation);
const transitions = (calls: LoopCall[], trace: string, phaseId: string, loop: string) =>
  auditEvents(calls).filter((e) => e.trace_id === trace && e.phase_id === phaseId && e.loop_id === loop && TRANSITIONS.has(e.event_type)).length;

export const loopAtomicity: LoopTest = {
  number: 1,
  name: "phase_atomicity_under_concurrency",
  summary: "a phase of the loop that writes memory, invoked twice at once with its writes held back: each invocation's writes become visible together; and made to fail after writing, it leaves none visible",
  notApplicable: (_, profile) => (profile.writers.length === 0 ? "no phase of the loop wrote to memory in its first iteration, so there is nothing that could interleave" : undefined),
  async run(ctx) {
    const phase = pick(ctx.profile.writers.map((id) => ctx.profile.phases.get(id)!), ctx.profile)!;
    const s = await ctx.open();
    s.substrates.holdWritesMs = 25;
    const runs = [
      { ws: "ws_atomic_a", trace: traceId(1, 0x101) },
      { ws: "ws_atomic_b", trace: traceId(2, 0x101) },
    ];
    const outcomes = await Promise.all(runs.map((r) => invokePrepared(ctx, s, phase.id, r.ws, r.trace)));
    const mine = (c: LoopCall) => c.handler?.loop_id === ctx.loopId && c.handler.phase_id === phase.id && isMutation(c);
    const calls = s.substrates.calls.filter((c) => runs.some((r) => r.ws === c.context.workspace_id));
    const visible = effectiveWrites(calls, mine);
    ctx.attach([], calls.filter(mine));
    if (calls.filter(mine).length === 0) return ctx.skip(`neither invocation of ${phase.id} wrote to memory, so nothing could interleave`);
    const owners = visible.map((c) => (c.context.workspace_id === runs[0]!.ws ? "a" : "b")).join("");
    ctx.check(`the writes of each invocation of ${phase.id} become visible together, never interleaved with the other's`, !/a+b+a|b+a+b/.test(owners), "all of one, then all of the other", visible.map((c) => `${c.context.workspace_id}:${nodeIdOf(c) ?? c.operation}`));
    for (const [i, r] of runs.entries()) {
      const attempted = calls.filter((c) => mine(c) && !c.error && c.context.workspace_id === r.ws).length;
      const seen = visible.filter((c) => c.context.workspace_id === r.ws).length;
      if (outcomes[i]!.kind === "completed") ctx.check(`invocation ${i + 1} completed, so all ${attempted} of its writes are visible`, seen === attempted, attempted, seen);
      else ctx.check(`invocation ${i + 1} failed (${outcomes[i]!.kind === "failed" ? outcomes[i]!.error.code : "?"}), so none of its writes is visible`, seen === 0, 0, seen);
    }
    // All or nothing (§5.1): a phase that fails after writing leaves none of its writes visible.
    s.recorder.failAfter.add(`${ctx.loopId}/${phase.id}`);
    s.substrates.holdWritesMs = 0;
    const failing = await invokePrepared(ctx, s, phase.id, "ws_atomic_c", traceId(3, 0x101));
    const all = s.substrates.calls.filter((c) => c.context.workspace_id === "ws_atomic_c");
    const wrote = all.filter((c) => mine(c) && !c.error).length;
    const left = effectiveWrites(all, mine).length;
    if (failing.kind === "failed" && wrote > 0) ctx.check(`an invocation of ${phase.id} that fails after its ${wrote} write${wrote === 1 ? "" : "s"} leaves none of them visible`, left === 0, 0, left);
  },
};

export const loopFeedback: LoopTest = {
  number: 2,
  name: "feedback_path_cannot_be_skipped",
  summary: "the loop's learn phase invoked in a fresh iteration with no act before it is refused; in a full iteration it runs after the act",
  notApplicable(m) {
    const kinds = new Set(phasesOf(m).map((p) => p.kind));
    if (!kinds.has("learn")) return "the loop has no learn phase";
    if (!kinds.has("act")) return "the loop has no act phase, and the feedback path guards the learn phases of loops that act";
    return undefined;
  },
  async run(ctx) {
    const learn = phasesOf(ctx.subject.manifest).find((p) => p.kind === "learn")!;
    const s = await ctx.open();
    const lonely = traceId(1, 0x102);
    const r = await s.invoke(learn.id, { workspace: "ws_feedback", traceId: lonely, input: {} });
    const code = r.kind === "failed" ? r.error.code : undefined;
    ctx.check(`${learn.id} (learn) with no act before it is refused with PHASE_ORDER_VIOLATION`, code === "PHASE_ORDER_VIOLATION", { status: "failed", code: "PHASE_ORDER_VIOLATION" }, { status: r.kind, code });
    ctx.check(`the refused ${learn.id} left no transition audit event`, transitions(s.substrates.calls, lonely, learn.id, ctx.loopId) === 0, 0, transitions(s.substrates.calls, lonely, learn.id, ctx.loopId));
    // Control: the guard must not block the feedback path itself. A learn that fails here is the
    // loop's own failure (its feedback path never completes); one never reached says nothing.
    const full = await s.run({ workspace: "ws_feedback_control", traceId: traceId(2, 0x102) });
    const learned = full.phases.find((p) => p.phase_id === learn.id);
    if (!learned) return ctx.skip(`the control iteration never reached ${learn.id} (${full.error?.code ?? full.status}${full.error ? `: ${full.error.message}` : ""}), so the feedback path was not shown to work`);
    ctx.check(`control: in an iteration where an act ran first, ${learn.id} completes`, learned.status === "completed", "completed", `${learned.status}${learned.error ? ` (${learned.error.code}: ${learned.error.message})` : ""}`);
  },
};

export const loopAudit: LoopTest = {
  number: 6,
  name: "audit_event_per_phase",
  summary: "an iteration of the loop with a phase that fails once and is retried, a replayed idempotent phase and a failing phase: one transition audit event per phase that ran, none for a failure or a replay",
  notApplicable: () => undefined,
  async run(ctx) {
    const { profile } = ctx;
    if (profile.completed.length === 0) return ctx.skip(`the loop's first iteration completed no phase (${profile.result.error?.code ?? profile.result.status})`);
    const s = await ctx.open();
    const retried = phasesOf(ctx.subject.manifest).find((p) => p.on_failure === "retry" && (p.max_retries ?? 3) > 0 && profile.completed.includes(p.id));
    if (retried) s.recorder.failures.set(`${ctx.loopId}/${retried.id}`, 1);
    const t = traceId(1, 0x106);
    const it = await s.run({ workspace: "ws_audit", traceId: t });
    await s.settle();
    const ran = it.phases.filter((p) => p.status === "completed").map((p) => p.phase_id);
    if (ran.length === 0) return ctx.skip(`the iteration completed no phase (${it.error?.code ?? it.status})`);
    for (const phase of ran) {
      const n = transitions(s.substrates.calls, t, phase, ctx.loopId);
      ctx.check(`one transition audit event for ${phase}${phase === retried?.id ? " (it failed once and was retried)" : ""}`, n === 1, 1, n);
    }
    if (retried && !ran.includes(retried.id)) ctx.check(`${retried.id} completed on its retry`, false, "completed", it.phases.find((p) => p.phase_id === retried.id)?.status ?? "not reached");
    for (const failed of it.phases.filter((p) => p.status === "failed")) ctx.check(`no transition event for ${failed.phase_id}, which failed`, transitions(s.substrates.calls, t, failed.phase_id, ctx.loopId) === 0, 0, transitions(s.substrates.calls, t, failed.phase_id, ctx.loopId));
    const idem = pick(phasesOf(ctx.subject.manifest).filter((p) => p.idempotent), profile);
    if (idem) {
      const replay = traceId(2, 0x106);
      await invokePrepared(ctx, s, idem.id, "ws_audit_replay", replay);
      const again = await s.invoke(idem.id, { workspace: "ws_audit_replay", traceId: replay, input: profile.inputOf(idem.id) });
      if (again.kind === "completed" && again.replayed) ctx.check(`a replay of ${idem.id} (idempotent) adds no second transition event`, transitions(s.substrates.calls, replay, idem.id, ctx.loopId) === 1, 1, transitions(s.substrates.calls, replay, idem.id, ctx.loopId));
      else ctx.note(`the second invocation of ${idem.id} was not a replay (${again.kind}); test 7 judges replays`);
    }
    const first = phasesOf(ctx.subject.manifest)[0]!;
    s.recorder.failures.set(`${ctx.loopId}/${first.id}`, 1_000);
    const failing = traceId(3, 0x106);
    const refused = await s.invoke(first.id, { workspace: "ws_audit_failing", traceId: failing, input: profile.inputOf(first.id) });
    if (refused.kind === "failed") ctx.check(`an invocation of ${first.id} whose handler fails produces no transition event`, transitions(s.substrates.calls, failing, first.id, ctx.loopId) === 0, 0, transitions(s.substrates.calls, failing, first.id, ctx.loopId));
    const events = auditEvents(s.substrates.calls).filter((e) => e.trace_id === t);
    const complete = events.every((e) => typeof e.timestamp === "string" && typeof e.signature === "string" && "phase_id" in e);
    ctx.check("every audit event of the iteration carries trace_id, phase_id, timestamp and signature (§7.3)", complete, true, complete);
    if (ctx.checks.some((c) => c.outcome === "fail")) ctx.attach(events, []);
  },
};

export const loopIdempotent: LoopTest = {
  number: 7,
  name: "idempotent_retry_identical",
  summary: "an idempotent phase of the loop invoked again with the same signature, one after another and three at once: identical output, its handler and its memory writes run once",
  notApplicable: (m) => (phasesOf(m).some((p) => p.idempotent) ? undefined : "no phase of the loop is idempotent"),
  async run(ctx) {
    const phase = pick(phasesOf(ctx.subject.manifest).filter((p) => p.idempotent), ctx.profile);
    if (!phase) return ctx.skip("no idempotent phase completed in the loop's first iteration");
    const s = await ctx.open();
    const runsIn = (ws: string) => s.recorder.of(ctx.loopId, phase.id).filter((i) => i.workspace_id === ws).length;
    const writesIn = (ws: string, trace?: string) => s.substrates.calls.filter((c) => c.handler?.loop_id === ctx.loopId && c.handler.phase_id === phase.id && isMutation(c) && !c.error && c.context.workspace_id === ws && (trace === undefined || c.handler.trace_id === trace)).length;
    const first = await invokePrepared(ctx, s, phase.id, "ws_idem", traceId(1, 0x107));
    const second = await invokePrepared(ctx, s, phase.id, "ws_idem", traceId(2, 0x107));
    if (first.kind !== "completed" || second.kind !== "completed") return ctx.skip(`${phase.id} did not complete when invoked (${first.kind === "failed" ? first.error.code : second.kind === "failed" ? second.error.code : "?"})`);
    const canon = (v: unknown) => canonicalJson(v ?? null);
    ctx.check(`${phase.id}: the same signature both times`, first.signature === second.signature, first.signature, second.signature);
    ctx.check(`${phase.id}: a sequential retry returns the canonical-JSON-identical output`, canon(first.output) === canon(second.output), canon(first.output), canon(second.output));
    ctx.check(`${phase.id}: its handler ran once for the sequential pair`, runsIn("ws_idem") === 1, 1, runsIn("ws_idem"));
    ctx.check(`${phase.id}: its memory writes happened once, not per invocation`, writesIn("ws_idem") === writesIn("ws_idem", traceId(1, 0x107)), `the first invocation's ${writesIn("ws_idem", traceId(1, 0x107))} only`, writesIn("ws_idem"));
    const together = await Promise.all([3, 4, 5].map((n) => invokePrepared(ctx, s, phase.id, "ws_idem_concurrent", traceId(n, 0x107))));
    const outputs = together.map((r) => (r.kind === "completed" ? canon(r.output) : `failed: ${r.error.code}`));
    ctx.check(`${phase.id}: three concurrent invocations return one identical output`, new Set(outputs).size === 1 && together.every((r) => r.kind === "completed"), "one output", outputs);
    ctx.check(`${phase.id}: its handler ran at most once for the concurrent three`, runsIn("ws_idem_concurrent") <= 1, "≤ 1", runsIn("ws_idem_concurrent"));
  },
};

export const loopTenants: LoopTest = {
  number: 10,
  name: "multi_tenant_isolation",
  summary: "a phase of the loop invoked in two workspaces with the same trace id and input: neither sees the other's output, substrate context or audit events",
  notApplicable: () => undefined,
  async run(ctx) {
    const phase = pick(phasesOf(ctx.subject.manifest).filter((p) => p.idempotent), ctx.profile) ?? pick(phasesOf(ctx.subject.manifest), ctx.profile);
    if (!phase) return ctx.skip("no phase completed in the loop's first iteration");
    const s = await ctx.open();
    const trace = traceId(1, 0x10a);
    const a = await invokePrepared(ctx, s, phase.id, "tenant_a", trace);
    const b = await invokePrepared(ctx, s, phase.id, "tenant_b", trace);
    if (a.kind !== "completed" || b.kind !== "completed") return ctx.skip(`${phase.id} did not complete in both workspaces (${a.kind === "failed" ? a.error.code : a.kind}, ${b.kind === "failed" ? b.error.code : b.kind})`);
    const ranInB = s.recorder.of(ctx.loopId, phase.id).some((i) => i.workspace_id === "tenant_b");
    ctx.check(`tenant_b's ${phase.id} ran its own handler, not a replay of tenant_a's${phase.idempotent ? " (it is idempotent, and the inputs are the same)" : ""}`, ranInB, "ran in tenant_b", ranInB ? "ran" : "replayed tenant_a's output");
    const calls = s.substrates.calls.filter((c) => c.context.trace_id === trace);
    const crossed = calls.filter((c) => c.handler && c.handler.workspace_id !== c.context.workspace_id);
    ctx.check("every substrate call a handler made carries the workspace the handler ran in", crossed.length === 0, 0, crossed.map((c) => `${c.slot}.${c.operation} from ${c.handler!.workspace_id} carried ${c.context.workspace_id}`));
    const audits = auditEvents(s.substrates.calls).filter((e) => e.trace_id === trace);
    const workspaces = [...new Set(audits.map((e) => e.workspace_id))].sort();
    ctx.check("the audit events of the two invocations stay in their own workspaces", workspaces.join() === "tenant_a,tenant_b", ["tenant_a", "tenant_b"], workspaces);
    const contexts = [...new Set(calls.map((c) => c.context.workspace_id))].filter((w) => w !== "tenant_a" && w !== "tenant_b");
    ctx.check("no call of the shared trace carries a third workspace", contexts.length === 0, [], contexts);
  },
};

/** The trace ids an iteration caused (its inner iterations, the iterations its signals started), from iteration.started audit events. */
function causedBy(calls: LoopCall[], trace: string): Set<string> {
  const traces = new Set([trace]);
  const started = calls.filter((c) => c.slot === "audit" && c.operation === "append_event").map((c) => (c.args as { event: { event_type: string; trace_id: string; data?: { cause?: { trace_id?: string } } } }).event);
  for (let grew = true; grew; ) {
    grew = false;
    for (const e of started) {
      if (e.event_type === "iteration.started" && e.data?.cause?.trace_id && traces.has(e.data.cause.trace_id) && !traces.has(e.trace_id)) {
        traces.add(e.trace_id);
        grew = true;
      }
    }
  }
  return traces;
}

export const loopTrace: LoopTest = {
  number: 11,
  name: "trace_id_propagates_to_substrates",
  summary: "three iterations of the loop at once, each with its own trace id and workspace: every substrate call and audit event of an iteration carries its trace id (iterations it starts carry their own, caused by it)",
  notApplicable: (_, profile) => (profile.calls.length === 0 ? "the loop's first iteration made no substrate call" : undefined),
  async run(ctx) {
    const s = await ctx.open();
    const runs = [1, 2, 3].map((n) => ({ ws: `ws_trace_${n}`, trace: traceId(n, 0x10b) }));
    await Promise.all(runs.map((r) => s.run({ workspace: r.ws, traceId: r.trace })));
    await s.settle();
    const calls = s.substrates.calls.filter((c) => runs.some((r) => r.ws === c.context.workspace_id));
    if (calls.length === 0) return ctx.skip("no substrate call was made");
    const wrong: string[] = [];
    for (const r of runs) {
      const allowed = causedBy(s.substrates.calls, r.trace);
      for (const c of calls.filter((c) => c.context.workspace_id === r.ws)) {
        // A handler's call carries the trace of the invocation that made it; every call one of the iteration's traces.
        const fromHandler = c.handler === undefined || c.handler.trace_id === c.context.trace_id;
        if (!allowed.has(c.context.trace_id ?? "") || !fromHandler) wrong.push(`${c.slot}.${c.operation} in ${r.ws}: ${c.context.trace_id}${fromHandler ? "" : ` from a handler running in ${c.handler!.trace_id}`}`);
      }
    }
    ctx.check("every substrate call carries the trace id of the iteration it belongs to", wrong.length === 0, 0, wrong.length === 0 ? 0 : wrong.slice(0, 5));
    const audit = auditEvents(s.substrates.calls).filter((e) => e.loop_id === ctx.loopId && runs.some((r) => r.ws === e.workspace_id));
    const strays = audit.filter((e) => !causedBy(s.substrates.calls, runs.find((r) => r.ws === e.workspace_id)!.trace).has(e.trace_id));
    ctx.check("every audit event carries its iteration's trace id", strays.length === 0 && audit.length > 0, 0, strays.map((e) => `${e.event_type} ${e.trace_id}`).slice(0, 5));
    if (wrong.length > 0) ctx.attach(audit, calls.slice(-30));
  },
};

export const loopManifest: LoopTest = {
  number: 12,
  name: "manifest_validates_against_schema",
  summary: "the loop's manifest (and every companion) validates against pulse-loop-manifest.v0.1.json and pulse's rules, and loads; a copy broken in one place is refused with the path of the problem",
  notApplicable: () => undefined,
  async run(ctx) {
    for (const m of [{ file: ctx.subject.file, manifest: ctx.subject.manifest }, ...ctx.subject.companions]) {
      const result = validateValue(m.manifest, m.file);
      const errors = result.diagnostics.filter((d) => d.severity === "error");
      ctx.check(`${m.file} validates`, errors.length === 0, "no error", errors.length === 0 ? "no error" : errors.map((d) => `${d.pointer}: ${d.message}`).slice(0, 5));
      for (const w of result.diagnostics.filter((d) => d.severity === "warning")) ctx.note(`${m.file}: warning ${d(w.pointer)}${w.message} [${w.rule}]`);
    }
    // The session opened below loads every one of them on pulse's runtime.
    const s = await ctx.open();
    ctx.check(`${ctx.loopId} loads on pulse's runtime`, s.loop.id === ctx.loopId, ctx.loopId, s.loop.id);
    const broken = structuredClone(ctx.subject.manifest);
    broken.closure = { ...broken.closure, from_phase: "pulse_conform_no_such_phase" };
    const refused = await s.host.load(broken).then(
      () => "loaded",
      (e: unknown) => (e instanceof ManifestRejectedError ? e.diagnostics.filter((x) => x.severity === "error").map((x) => x.pointer) : `refused otherwise: ${(e as Error).message}`),
    );
    ctx.check("near miss: a copy whose closure names a phase that does not exist is refused with the path of the problem", Array.isArray(refused) && refused.includes("/closure/from_phase"), ["/closure/from_phase"], refused);
  },
};

const d = (pointer: string) => (pointer ? `${pointer}: ` : "");
