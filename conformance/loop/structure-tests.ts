/**
 * The loop versions of §12 tests 3, 4, 5, 8 and 9: where the loop's structure (inner loops, route
 * and act phases, connections, substrates) decides what the runtime must do. Inner loops are
 * played by scripted stand-ins, so a test controls what they report; `when` conditions are made
 * to hold (satisfy.ts), so the structure runs.
 */
import type { IterationResult } from "../../src/index.js";
import { traceId } from "../harness/context.js";
import { loop, token } from "../suite/manifests.js";
import { TRANSITIONS } from "../suite/test.js";
import { auditEvents, until, type LoopContext } from "./context.js";
import type { LoopSession } from "./session.js";
import { patchOutput, satisfy, triggerOf, type Bend } from "./satisfy.js";
import type { LoadedManifest, ManifestValue } from "./subject.js";
import { phasesOf, type LoopTest } from "./test.js";

type InnerLoop = { loop_id: string; trigger: string; wait?: string; timeout_ms?: number };
const innerLoops = (m: ManifestValue): InnerLoop[] => m.nesting?.inner_loops ?? [];

/** Bends a session so `condition` holds after `phaseId` of the loop under test; the reason it cannot, otherwise. */
function bendFor(ctx: LoopContext, s: LoopSession, phaseId: string, condition: string | undefined): string | undefined {
  if (!condition) return undefined;
  const solved = satisfy(condition);
  if (!solved.ok) return `its condition "${condition}" cannot be made to hold: ${solved.reason}`;
  apply(ctx, s, phaseId, solved.bend);
  if (solved.bend.fields.length > 0 || solved.bend.kappa !== undefined) ctx.note(`to make "${condition}" hold, ${describe(solved.bend, phaseId)}`);
  return undefined;
}

function apply(ctx: LoopContext, s: LoopSession, phaseId: string, bend: Bend): void {
  if (bend.kappa !== undefined) s.substrates.kappa = bend.kappa;
  if (bend.fields.length > 0) s.recorder.patches.set(`${ctx.loopId}/${phaseId}`, (out) => patchOutput(out, bend));
}

function describe(bend: Bend, phaseId: string): string {
  const parts = bend.fields.map((f) => `${phaseId}'s output ${f.path.join(".")} was set to ${JSON.stringify(f.value)}`);
  if (bend.kappa !== undefined) parts.push(`memory reported a TopologyContext with max_kappa ${bend.kappa}`);
  return parts.join(", ");
}

const consolidation = (status: string) => token("ConsolidationEvent", "$trace", { timescale: "fast", convergence_status: status });
const transitionsOf = (s: LoopSession, loopId: string, phaseId?: string) =>
  auditEvents(s.substrates.calls)
    .map((e, i) => ({ e, i }))
    .filter(({ e }) => e.loop_id === loopId && (phaseId === undefined || e.phase_id === phaseId) && TRANSITIONS.has(e.event_type));

export const loopNesting: LoopTest = {
  number: 3,
  name: "nesting_wait_until_stable",
  summary: "the loop's phase that triggers an inner loop waiting until_stable, with the inner loop played by a stand-in that reports stable only on its third iteration: the loop moves on only after it",
  notApplicable: (m) => (innerLoops(m).some((i) => (i.wait ?? "until_stable") === "until_stable") ? undefined : "the loop has no inner loop that it waits for until_stable"),
  async run(ctx) {
    const inner = innerLoops(ctx.subject.manifest).find((i) => (i.wait ?? "until_stable") === "until_stable")!;
    const trigger = triggerOf(inner.trigger);
    if (!trigger) return ctx.skip(`the trigger "${inner.trigger}" does not parse`);
    const standIn: LoadedManifest = {
      file: "stand-in",
      manifest: loop(inner.loop_id, [{ id: "observe", kind: "retrieve" }, { id: "converge", kind: "consolidate" }], { nesting: { parent_loop: ctx.loopId } }),
      // Slow enough (3 × 500 ms) that a runtime which waits "a while" rather than for stability gives up first.
      scripts: { converge: { delay_ms: 500, outputs: [consolidation("unstable"), consolidation("unstable"), consolidation("stable")] } },
    };
    const s = await ctx.open({ replace: [standIn] });
    const unbendable = bendFor(ctx, s, trigger.phase, trigger.condition);
    if (unbendable) return ctx.skip(`the inner loop ${inner.loop_id} could not be triggered: ${unbendable}`);
    ctx.note(`${inner.loop_id} was played by a scripted stand-in that reports unstable, unstable, then stable`);
    const it = await s.run({ workspace: "ws_nesting", traceId: traceId(1, 0x103) });
    await s.settle();
    const converged = transitionsOf(s, inner.loop_id, "converge");
    if (converged.length === 0) return ctx.skip(`the inner loop never ran: ${trigger.phase} ${it.phases.some((p) => p.phase_id === trigger.phase) ? "ran but did not trigger it" : `was not reached (${it.error?.code ?? it.status})`}`);
    const stableAt = converged[2]?.i ?? Number.POSITIVE_INFINITY;
    const waited = transitionsOf(s, ctx.loopId, trigger.phase)[0]?.i;
    const order = it.phases.map((p) => p.phase_id);
    const next = order[order.indexOf(trigger.phase) + 1];
    const nextAt = next === undefined ? undefined : transitionsOf(s, ctx.loopId, next)[0]?.i;
    ctx.check(`${inner.loop_id} iterated until its stable ConsolidationEvent (3 iterations)`, converged.length >= 3, 3, converged.length);
    ctx.check(`${trigger.phase} completed only after the inner loop reported stable`, waited !== undefined && waited > stableAt, `${trigger.phase} after the 3rd inner iteration`, waited === undefined ? `${trigger.phase} never completed (${it.error?.code ?? it.status})` : `at audit #${waited}, stable at #${stableAt === Number.POSITIVE_INFINITY ? "never" : stableAt}`);
    if (next !== undefined) ctx.check(`after stability the loop went on: ${next} ran after it`, nextAt !== undefined && nextAt > stableAt, `${next} after stability`, nextAt === undefined ? "never ran" : `at audit #${nextAt}`);
    else ctx.check(`after stability the iteration ended at ${trigger.phase} without failing`, it.status === "completed", "completed", it.status);
  },
};

/** Whether an act phase after `routeId` ran in the iteration. */
const actedAfter = (m: ManifestValue, it: IterationResult, routeId: string) => {
  const at = it.phases.findIndex((p) => p.phase_id === routeId);
  const acts = new Set(phasesOf(m).filter((p) => p.kind === "act").map((p) => p.id));
  return at >= 0 && it.phases.slice(at + 1).some((p) => acts.has(p.phase_id) && p.status === "completed");
};

export const loopKappa: LoopTest = {
  number: 4,
  name: "kappa_routes_to_deliberate",
  summary: "the loop's route phase after a TopologyContext with max_kappa 0 and 0.5 (from memory and the phase before it): κ > 0 keeps the act off the fast path, whether the route's handler decides or says fast anyway",
  notApplicable(m) {
    if (!phasesOf(m).some((p) => p.kind === "route")) return "the loop has no route phase";
    if (m.invariants?.kappa_routing !== true) return "the loop does not declare the kappa_routing invariant, so its route may take the fast path whatever κ";
    return undefined;
  },
  async run(ctx) {
    const phases = phasesOf(ctx.subject.manifest);
    const route = phases.find((p) => p.kind === "route" && ctx.profile.completed.includes(p.id)) ?? phases.find((p) => p.kind === "route")!;
    const before = phases[phases.findIndex((p) => p.id === route.id) - 1];
    let exercised = 0;
    for (const [n, { kappa, force }] of [{ kappa: 0.5, force: false }, { kappa: 0.5, force: true }, { kappa: 0, force: true }].entries()) {
      const s = await ctx.open();
      s.substrates.kappa = kappa;
      if (before) s.recorder.patches.set(`${ctx.loopId}/${before.id}`, (out, pc) => patchOutput(out, { fields: [{ path: ["pulse_conform_topology"], value: token("TopologyContext", pc.trace_id, { max_kappa: kappa, routing: kappa > 0 ? "deliberate" : "fast" }) }] }));
      if (force) s.recorder.patches.set(`${ctx.loopId}/${route.id}`, (out) => patchOutput(out, { fields: [{ path: ["decision"], value: "fast" }, { path: ["routing"], value: "fast" }] }));
      const it = await s.run({ workspace: `ws_kappa_${n}`, traceId: traceId(n + 1, 0x104) });
      await s.settle();
      if (!it.phases.some((p) => p.phase_id === route.id)) continue;
      const seen = it.tokens.find((t) => t.token === "TopologyContext") as { max_kappa?: number } | undefined;
      if (seen?.max_kappa !== kappa) {
        ctx.note(`κ = ${kappa}: the iteration saw ${seen ? `max_kappa ${seen.max_kappa}` : "no TopologyContext"} before ${route.id}`);
        continue;
      }
      exercised++;
      const decision = s.recorder.of(ctx.loopId, route.id).find((i) => i.trace_id === it.trace_id)?.output as { decision?: unknown; routing?: unknown } | undefined;
      const decided = decision?.decision ?? decision?.routing;
      const acted = actedAfter(ctx.subject.manifest, it, route.id);
      const refused = it.error?.invariant === "kappa_routing";
      const outcome = refused ? "refused (kappa_routing)" : acted ? `an act ran after ${route.id} decided ${JSON.stringify(decided)}` : `no act ran (${it.error?.code ?? it.status})`;
      if (kappa > 0 && force) ctx.check(`κ = ${kappa} and ${route.id} says "fast" anyway: refused, no act runs on the fast path`, refused && !acted, "refused by kappa_routing", outcome);
      else if (kappa > 0) ctx.check(`κ = ${kappa} with the loop's own ${route.id}: it decides "deliberate", or the fast path is refused`, decided === "deliberate" || (refused && !acted), "deliberate, or refused", outcome);
      else ctx.check(`κ = 0 and ${route.id} says "fast": allowed`, !refused, "not refused by kappa_routing", outcome);
    }
    if (exercised === 0) ctx.skip(`no iteration reached ${route.id} with the TopologyContext the harness provided`);
  },
};

/** Where the loop's DeliberationResult comes from: an inner loop before its first act, or a phase of its own. */
function deliberationSource(ctx: LoopContext): { inner: InnerLoop } | { phase: string } | undefined {
  const phases = phasesOf(ctx.subject.manifest);
  const firstAct = phases.findIndex((p) => p.kind === "act");
  const upTo = new Set(phases.slice(0, firstAct + 1).map((p) => p.id));
  const inner = innerLoops(ctx.subject.manifest).find((i) => i.wait !== "fire_forget" && upTo.has(triggerOf(i.trigger)?.phase ?? ""));
  if (inner) return { inner };
  const carries = (out: unknown) => out !== null && typeof out === "object" && ((out as { token?: unknown }).token === "DeliberationResult" || Object.values(out).some((v) => (v as { token?: unknown } | null)?.token === "DeliberationResult"));
  const own = ctx.profile.invocations.find((i) => upTo.has(i.phase_id) && carries(i.output));
  if (own) return { phase: own.phase_id };
  const guard = phases.find((p) => p.invariant === "quorum_before_commit" && upTo.has(p.id));
  return guard ? { phase: guard.id } : undefined;
}

/** The output with its DeliberationResult's confidence set (or made one, if it carries none). */
function withConfidence(out: unknown, confidence: number, trace: string): unknown {
  const result = token("DeliberationResult", trace, { verdict: "commit", confidence, consensus_type: "conflict_path" });
  if (out === null || typeof out !== "object" || Array.isArray(out)) return result;
  if ((out as { token?: unknown }).token === "DeliberationResult") return { ...out, confidence };
  const key = Object.keys(out).find((k) => ((out as Record<string, { token?: unknown }>)[k] as { token?: unknown } | null)?.token === "DeliberationResult");
  return key ? { ...out, [key]: { ...(out as Record<string, object>)[key], confidence } } : result;
}

export const loopQuorum: LoopTest = {
  number: 5,
  name: "quorum_before_commit",
  summary: "the loop's deliberation (its inner loop, played by a stand-in, or its own phase) reports confidence 0.5, 0.659, 0.66 and 0.9: its act commits only at 0.66 and above",
  notApplicable(m) {
    if (!phasesOf(m).some((p) => p.kind === "act")) return "the loop has no act phase";
    if (m.invariants?.quorum_before_commit !== true) return "the loop does not declare the quorum_before_commit invariant";
    return undefined;
  },
  async run(ctx) {
    const source = deliberationSource(ctx);
    if (!source) return ctx.skip("nothing in the loop produces a DeliberationResult before its act (no inner loop triggered before it, no phase output carrying one), so its acts can never commit");
    const act = phasesOf(ctx.subject.manifest).find((p) => p.kind === "act")!;
    ctx.note("inner" in source ? `the DeliberationResult came from a scripted stand-in for ${source.inner.loop_id}` : `the DeliberationResult of ${source.phase} had its confidence set by the harness`);
    let exercised = 0;
    for (const [n, confidence] of [0.5, 0.659, 0.66, 0.9].entries()) {
      let s: LoopSession;
      if ("inner" in source) {
        const result = token("DeliberationResult", "$trace", { verdict: "commit", confidence, consensus_type: "conflict_path" });
        const settle = (source.inner.wait ?? "until_stable") === "until_stable";
        const standIn: LoadedManifest = {
          file: "stand-in",
          manifest: loop(source.inner.loop_id, [{ id: "gather", kind: "retrieve" }, { id: "vote", kind: "custom", custom_kind: "deliberate" }], { nesting: { parent_loop: ctx.loopId } }),
          scripts: { vote: { output: settle ? { ...result, convergence: consolidation("stable") } : result } },
        };
        s = await ctx.open({ replace: [standIn] });
        const trigger = triggerOf(source.inner.trigger)!;
        const unbendable = bendFor(ctx, s, trigger.phase, trigger.condition);
        if (unbendable) return ctx.skip(`the deliberating inner loop ${source.inner.loop_id} could not be triggered: ${unbendable}`);
      } else {
        s = await ctx.open();
        s.recorder.patches.set(`${ctx.loopId}/${source.phase}`, (out, pc) => withConfidence(out, confidence, pc.trace_id));
      }
      const it = await s.run({ workspace: `ws_quorum_${n}`, traceId: traceId(n + 1, 0x105) });
      await s.settle();
      const deliberated = it.tokens.some((t) => t.token === "DeliberationResult" && (t as { confidence?: number }).confidence === confidence);
      if (!deliberated) {
        ctx.note(`confidence ${confidence}: the iteration never saw the DeliberationResult (${it.error?.code ?? it.status})`);
        continue;
      }
      exercised++;
      const committed = transitionsOf(s, ctx.loopId, act.id).some(({ e }) => e.trace_id === it.trace_id);
      if (confidence < 0.66) ctx.check(`confidence ${confidence}: ${act.id} does not commit`, !committed, "no commit", committed ? "committed" : `no commit (${it.error?.code ?? it.status})`);
      else ctx.check(`confidence ${confidence}: ${act.id} commits`, committed, "commit", committed ? "committed" : `no commit (${it.error?.code ?? it.status}${it.error ? `: ${it.error.message}` : ""})`);
    }
    if (exercised === 0) ctx.skip("no iteration saw the DeliberationResult the harness provided");
  },
};

type Connection = { id: string; emit_phase: string; emit_condition?: string; token: string; to_loop: string; to_phase?: string; cadence?: string };

export const loopSignals: LoopTest = {
  number: 8,
  name: "cross_loop_signal_delivery",
  summary: "each connection of the loop delivers its token to the target loop (given, or a stand-in) as that iteration's input, after the emitting phase, audited; a cross_loop_signal cadence starts the loop on a signal",
  notApplicable: (m) => ((m.connections ?? []).length > 0 || cadences(m).some((c) => c.type === "cross_loop_signal") ? undefined : "the loop has no connection and no cross_loop_signal cadence"),
  async run(ctx) {
    let exercised = 0;
    for (const [n, c] of ((ctx.subject.manifest.connections ?? []) as Connection[]).entries()) {
      const s = await ctx.open();
      const unbendable = bendFor(ctx, s, c.emit_phase, c.emit_condition);
      if (unbendable) {
        ctx.note(`connection ${c.id}: ${unbendable}`);
        continue;
      }
      const it = await s.run({ workspace: `ws_signal_${n}`, traceId: traceId(n + 1, 0x108) });
      const emitted = s.recorder.of(ctx.loopId, c.emit_phase).find((i) => i.trace_id === it.trace_id && i.output !== undefined);
      if (!emitted) {
        ctx.note(`connection ${c.id}: ${c.emit_phase} did not complete (${it.error?.code ?? it.status}), so nothing was emitted`);
        continue;
      }
      exercised++;
      const arrival = () => s.recorder.of(c.to_loop).find((i) => (i.input as { token?: unknown; trace_id?: unknown } | null)?.token === c.token && (i.input as { trace_id?: unknown }).trace_id === it.trace_id);
      await until(() => arrival() !== undefined, 2_000);
      await s.settle();
      const got = arrival();
      const standIn = ctx.subject.standIns.some((m) => m.manifest.loop_id === c.to_loop);
      ctx.check(`connection ${c.id}: ${c.to_loop}${standIn ? " (a stand-in)" : ""} received the ${c.token} itself as its iteration's input`, got !== undefined, `an input with token ${c.token} and the emitting trace id`, got ? `${got.phase_id} got it` : "never delivered within 2 s");
      if (got) ctx.check(`connection ${c.id}: delivered after ${c.emit_phase} emitted it, never before`, got.began >= (emitted.ended ?? emitted.began), "after", `${Math.round(got.began - (emitted.ended ?? emitted.began))} ms after`);
      const audited = auditEvents(s.substrates.calls).filter((e) => e.event_type.startsWith("signal.") && (e.trace_id === it.trace_id || e.loop_id === c.to_loop));
      ctx.check(`connection ${c.id}: the signal was audited (§7.3)`, audited.length >= 1, "≥ 1 signal.* audit event", audited.map((e) => `${e.loop_id}: ${e.event_type}`));
    }
    const incoming = cadences(ctx.subject.manifest).find((c) => c.type === "cross_loop_signal");
    if (incoming) exercised += await receive(ctx, incoming.params ?? {});
    if (exercised === 0) ctx.skip("no signal was emitted: see the notes");
  },
};

function cadences(m: ManifestValue): { type: string; params?: Record<string, unknown> }[] {
  const out = [];
  for (let c = m.cadence; c; c = c.fallback) out.push(c);
  return out;
}

/** The loop's cross_loop_signal cadence: a scripted sender emits to it; it must start with the token as input. */
async function receive(ctx: LoopContext, params: Record<string, unknown>): Promise<number> {
  const from = String(params.from_loop);
  const phase = typeof params.from_phase === "string" ? params.from_phase : "emit";
  const tokenName = typeof params.token === "string" ? params.token : "OutcomeSignal";
  const fields: Record<string, Record<string, unknown>> = {
    OutcomeSignal: { action_id: "act_pulse_conform_8", status: "success" },
    DeliberationResult: { verdict: "commit", confidence: 0.9 },
    ConsolidationEvent: { timescale: "fast", convergence_status: "stable" },
    ReputationUpdate: { subject_id: "agent_pulse_conform", subject_type: "agent", domain: "code", delta: 0.01, source_loop: from, evidence_ref: "trace_id:$trace" },
    TopologyContext: { max_kappa: 0 },
    SurpriseSignal: { surprise_magnitude: 0.5, surprise_kind: "other" },
  };
  const phases = [{ id: phase === "start" ? "begin" : "start", kind: "retrieve" }, { id: phase, kind: "learn" }];
  const sender: LoadedManifest = {
    file: "stand-in",
    manifest: loop(from, phases, { connections: [{ id: "pulse_conform_signal", emit_phase: phase, envelope: "cloudevents.v1", token: tokenName, to_loop: ctx.loopId, delivery: "at_least_once" }] }),
    scripts: { [phase]: { output: token(tokenName, "$trace", fields[tokenName] ?? {}) } },
  };
  const s = await ctx.open({ replace: [sender] });
  const it = await s.run({ loop: from, workspace: "ws_signal_in", traceId: traceId(9, 0x108), input: {} });
  const arrival = () => s.recorder.of(ctx.loopId).find((i) => (i.input as { token?: unknown } | null)?.token === tokenName && (i.input as { trace_id?: unknown }).trace_id === it.trace_id);
  await until(() => arrival() !== undefined, 2_000);
  await s.settle();
  const got = arrival();
  ctx.note(`the signal into ${ctx.loopId} came from a scripted stand-in for ${from}`);
  ctx.check(`a ${tokenName} from ${from} starts ${ctx.loopId} (cadence cross_loop_signal), the token itself as its input`, got !== undefined, `an iteration of ${ctx.loopId} with the token as input`, got ? `${got.phase_id} got it` : "never delivered within 2 s");
  return 1;
}

export const loopDegrade: LoopTest = {
  number: 9,
  name: "substrate_unavailable_degrades",
  summary: "the substrate the loop's iterations use (memory, else policy, else auth, else audit) goes unavailable: a bounded number of attempts, the circuit opens, iterations fail fast, and after the cooldown the loop recovers",
  notApplicable: (_, profile) => (slotFor(profile.calls, profile.result.trace_id) ? undefined : "the loop's first iteration called no substrate at all"),
  async run(ctx) {
    const slot = slotFor(ctx.profile.calls, ctx.profile.result.trace_id)!;
    const threshold = 3;
    const cooldownMs = 300;
    const s = await ctx.open({ circuit: { failureThreshold: threshold, cooldownMs } });
    const run = (n: number) => s.run({ workspace: "ws_degrade", traceId: traceId(n, 0x109) });
    const healthy = await run(1);
    if (healthy.status !== "completed") return ctx.skip(`the loop did not complete an iteration with ${slot} available (${healthy.error?.code ?? healthy.status})`);
    await s.settle();
    const before = s.substrates.calls.length;
    s.substrates.fail(slot);
    const outcomes: string[] = [];
    for (let n = 2; n < 12; n++) outcomes.push((await run(n)).error?.code ?? "completed");
    const during = s.substrates.calls.slice(before).filter((c) => c.slot === slot);
    ctx.note(`${slot} was made unavailable (the slot the loop's first iteration used); circuit threshold ${threshold}, cooldown ${cooldownMs} ms`);
    ctx.check(`ten iterations during the outage reach ${slot} a bounded number of times (≤ ${threshold * 2})`, during.length <= threshold * 2, `≤ ${threshold * 2}`, during.length);
    ctx.check(`the ${slot} circuit is open`, s.loop.circuit(slot) === "open", "open", s.loop.circuit(slot) ?? "(none)");
    ctx.check("iterations after it opened fail fast with CIRCUIT_OPEN", outcomes.slice(threshold + 1).every((o) => o === "CIRCUIT_OPEN") && outcomes.includes("CIRCUIT_OPEN"), "CIRCUIT_OPEN", outcomes);
    s.substrates.heal(slot);
    await new Promise((r) => setTimeout(r, cooldownMs + 100));
    const recovered = await run(20);
    ctx.check("after the outage and the cooldown, an iteration completes", recovered.status === "completed", "completed", `${recovered.status}${recovered.error ? ` (${recovered.error.code})` : ""}`);
    ctx.check(`and the ${slot} circuit is closed again`, s.loop.circuit(slot) === "closed", "closed", s.loop.circuit(slot) ?? "(none)");
    if (ctx.checks.some((c) => c.outcome === "fail")) ctx.attach([], during);
  },
};

function slotFor(calls: readonly { slot: string; context: { trace_id?: string } }[], trace: string): "memory" | "policy" | "auth" | "audit" | undefined {
  const used = new Set(calls.filter((c) => c.context.trace_id === trace).map((c) => c.slot));
  return (["memory", "policy", "auth", "audit"] as const).find((slot) => used.has(slot));
}
