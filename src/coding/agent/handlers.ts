/**
 * The phase handlers of `coding.plan_decide_act`, closing over the kit: screen (guides,
 * knowledge and candidate actions, re-scored by recent feedback), plan (built once, then carried),
 * decide (the route phase: its output is the decision), perform_action (the act: confirmation by
 * policy, the action's subprocess, recorded while it lives; ask, wait and terminate pass as a
 * recorded no-op) and evaluate_progress (the learn phase: feedback once per action run, the plan
 * updated, the advisory). Each output carries what the next phase, and the next iteration, needs.
 */
import type { PhaseContext, PhaseHandler } from "../../runtime/handler-context.js";
import { phaseAuditSink } from "../audit-sink.js";
import { failedResult, newActionRunId, performAction } from "./actions/executor.js";
import { decide, type Candidate } from "./decider.js";
import { feedbackStats, implicitFeedback, rescore, validateFeedback } from "./feedback.js";
import { buildPlan, planMarkdown, progressOf, updateFromAction } from "./planner.js";
import { GuidanceGate, whatChanged, type HeldReplan } from "../guidance/gate.js";
import type { AckDecision } from "../guidance/policy.js";
import { rerank } from "./retrieval/rerank.js";
import { screen as screenDocs } from "./retrieval/screen.js";
import type { AgentRun, AgentRuns, IterationState, Planned, Screened } from "./run-state.js";
import type { ActionResult, Advisory, Decision, EnvelopeType, Feedback, Plan } from "./types.js";

export const AGENT_LOOP_ID = "coding.plan_decide_act";
export const AGENT_PHASES = ["screen", "plan", "decide", "perform_action", "evaluate_progress"] as const;

/** decide (the route phase) → perform_action: `decision` is the type, for the runtime's audit; `choice` the whole of it. */
export interface Decided extends Planned {
  decision: Decision["type"];
  choice: Decision & { question?: string };
  thinkSupported?: boolean;
}

/** perform_action (the act phase) → evaluate_progress. */
export interface Acted extends Decided {
  action_id: string;
  causal_parent_ids: string[];
  result: ActionResult | null;
  /** ask: the user's answer (null: nobody answered). */
  answer?: string | null;
  /** The action quota was spent before this action could start. */
  quota?: boolean;
}

/** evaluate_progress (the learn phase) → the runner, and the next iteration's input. */
export interface Learned extends IterationState {
  action_id: string;
  status: "success" | "partial" | "failure";
  causal_parent_ids: string[];
  advisory: Advisory;
  quota?: boolean;
}

function runOf(runs: AgentRuns, ctx: PhaseContext): AgentRun {
  const run = runs.get(ctx.workspace_id);
  if (!run) throw new Error(`no agent run ${ctx.workspace_id} in this process`);
  return run;
}

/** An envelope into the run's report and the loop's audit trail at once. */
async function emit(run: AgentRun, ctx: PhaseContext, type: EnvelopeType, payload: Record<string, unknown>): Promise<void> {
  const e = run.emit(type, payload);
  await phaseAuditSink(ctx)(`agent.${type}`, { envelope_id: e.id, ...payload });
}

/** The replan the run is held for, if the workdir has a `.pulse/` (pulse agent never creates one: `pulse guidance init` does). */
async function heldReplan(run: AgentRun): Promise<HeldReplan | null> {
  if (run.guidance === undefined) run.guidance = (await GuidanceGate.existing(run.workdir, undefined, { gitExclude: false })) ?? undefined;
  return run.guidance ? run.guidance.held() : null;
}

/** plan.md written with the new plan, then the held event acknowledged (judged by the sidecar: a change made meanwhile stays pending). */
async function acknowledge(gate: GuidanceGate, held: HeldReplan, plan: Plan): Promise<AckDecision> {
  gate.writePlan(planMarkdown(plan));
  return gate.sidecar.ack(held.event_id);
}

/** The actions the decider chooses among for the plan's next open step (the request while there is no plan), re-scored by recent feedback. */
async function candidatesFor(run: AgentRun, plan: Plan | null): Promise<Candidate[]> {
  const { strategy, k } = run.config.screening;
  const open = plan?.steps.find((x) => x.status !== "done" && x.status !== "blocked");
  const query = open ? `${open.desc} ${run.request}` : run.request;
  const docs = run.actions.map((a) => ({ id: a.name, text: `${a.name.replace(/[-_]/g, " ")}\n${a.description}\n${a.arguments.map((x) => `${x.name} ${x.description ?? ""}`).join("\n")}`, entry: a }));
  const hits = await screenDocs(docs, query, { strategy, k: docs.length, signal: run.controller.signal, ...(run.embeddings ? { embeddings: run.embeddings } : {}) });
  // Every action stays a candidate: screening orders them, it does not hide the one the plan needs.
  const ranked = [...hits.map((h) => h.entry), ...run.actions.filter((a) => !hits.some((h) => h.id === a.name))];
  const stats = feedbackStats(await run.feedback.recent(run.config.feedback.recent));
  return ranked
    .map((a, i) => ({ name: a.name, description: a.description, tags: a.tags, arguments: a.arguments, ...rescore(i + 1, stats.get(a.name)), ...(stats.has(a.name) ? { recent: stats.get(a.name)! } : {}) }))
    .sort((a, b) => b.score - a.score || a.name.localeCompare(b.name))
    .slice(0, Math.max(k, 1));
}

const clip = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}…` : s);

export function agentHandlers(runs: AgentRuns): Record<(typeof AGENT_PHASES)[number], PhaseHandler> {
  const screen: PhaseHandler<IterationState, Screened> = async (ctx) => {
    const run = runOf(runs, ctx);
    // The guidance gate at the start of each step: a pending change of the workdir's .pulse/ guidance
    // holds the run, which screens and plans again (the plan it invalidates carried for the planner).
    const held = await heldReplan(run);
    if (held) await phaseAuditSink(ctx)("guidance.held", { event_id: held.event_id, files: held.files, iteration: ctx.iteration });
    const s: IterationState & Partial<Pick<Screened, "held" | "invalidated">> = held ? { ...ctx.input, plan: null, held, invalidated: ctx.input.plan } : ctx.input;
    const { strategy, k } = run.config.screening;
    const opt = { strategy, k, signal: run.controller.signal, ...(run.embeddings ? { embeddings: run.embeddings } : {}) };
    // Guides and knowledge shape the plan: they are screened (and reranked) while there is none.
    const reranked = async <E>(docs: readonly { id: string; text: string; entry: E }[]) => {
      const hits = await screenDocs(docs, run.request, opt);
      if (!run.reranker) return hits;
      const text = new Map(docs.map((d) => [d.id, d.text]));
      return rerank(run.reranker, run.request, hits, (id) => text.get(id) ?? "", { iteration: ctx.iteration, signal: run.controller.signal });
    };
    const guides = s.plan ? [] : await reranked(run.guides);
    // Online results (opted in) join the home's knowledge and are screened with it by the same strategy.
    const online = !s.plan && run.online ? await run.online.docsFor(run.request, run.controller.signal) : undefined;
    const knowledge = s.plan ? [] : await reranked(online ? [...run.knowledge, ...online.docs] : run.knowledge);
    const candidates = await candidatesFor(run, s.plan);
    return { ...s, guides: guides.map((g) => ({ id: g.id, score: g.score, ranks: g.ranks, entry: g.entry })), knowledge: knowledge.map((g) => ({ id: g.id, score: g.score, ranks: g.ranks, entry: g.entry })), candidates, ...(online ? { online: online.outcome } : {}) };
  };

  const plan: PhaseHandler<Screened, Planned> = async (ctx) => {
    const run = runOf(runs, ctx);
    const { held, invalidated, ...s } = ctx.input;
    if (s.plan) return { ...s, plan: s.plan };
    const role = run.config.llm.find((e) => e.alias === run.planner.alias);
    const built = await buildPlan(run.planner, {
      request: run.request,
      files: run.files,
      guides: s.guides.map((g) => g.entry),
      knowledge: s.knowledge.map((k) => k.entry),
      actions: run.actions.map((a) => ({ name: a.name, description: a.description })),
      iteration: ctx.iteration,
      signal: run.controller.signal,
      ...(role?.temperature !== undefined ? { temperature: role.temperature } : {}),
      ...(role?.think ? { think: true } : {}),
      ...(held ? { replan: { changed: whatChanged(held), previous: invalidated ?? null } } : {}),
    });
    run.tokensUsed += built.usage.inputTokens + built.usage.outputTokens;
    // The new plan is the agent's plan.md, and the replan is acknowledged with its hash.
    const ack = held && run.guidance ? await acknowledge(run.guidance, held, built.plan) : undefined;
    if (held && ack) await phaseAuditSink(ctx)(ack.accepted ? "guidance.acknowledged" : "guidance.ack_refused", { event_id: held.event_id, accepted: ack.accepted, acknowledged_event_id: ack.acknowledged_event_id, plan_sha256: ack.plan_sha256, via: "planner", reason: ack.reason, iteration: ctx.iteration });
    // A replan's first step may need other actions than the step it replaced: the candidates follow the new plan.
    const candidates = held ? await candidatesFor(run, built.plan) : s.candidates;
    await emit(run, ctx, "plan_built", { plan: built.plan, ...(held && ack ? { replan: { event_id: held.event_id, files: held.files, accepted: ack.accepted, plan_sha256: ack.plan_sha256, reason: ack.reason } } : {}), usage: built.usage, guides: s.guides.map((g) => ({ id: g.id, score: g.score, ranks: g.ranks })), knowledge: s.knowledge.map((g) => ({ id: g.id, score: g.score, ranks: g.ranks, ...(g.entry.origin ? { origin: g.entry.origin, name: g.entry.name, ...(g.entry.url ? { url: g.entry.url } : {}) } : {}) })), ...(s.online ? { online: s.online } : {}), strategy: run.config.screening.strategy, ...(run.reranker ? { reranker: run.reranker.alias } : {}), attempts: built.attempts, ...(built.thinkSupported !== undefined ? { thinkSupported: built.thinkSupported } : {}) });
    return { ...s, plan: built.plan, candidates };
  };

  const decideHandler: PhaseHandler<Planned, Decided> = async (ctx) => {
    const run = runOf(runs, ctx);
    const s = ctx.input;
    const role = run.config.llm.find((e) => e.alias === run.decider.alias);
    const d = await decide(run.decider, { plan: s.plan, candidates: s.candidates, observations: s.observations, iteration: ctx.iteration, signal: run.controller.signal, ...(s.advisory ? { advisory: s.advisory } : {}), ...(role?.temperature !== undefined ? { temperature: role.temperature } : {}), ...(role?.think ? { think: true } : {}) });
    run.tokensUsed += d.usage.inputTokens + d.usage.outputTokens;
    await emit(run, ctx, "decision", { decision: d.decision, usage: d.usage, candidates: s.candidates.map((c) => ({ name: c.name, screen: c.screen, feedback: c.feedback, score: c.score, ...(c.recent ? { recent: c.recent } : {}) })), attempts: d.attempts, ...(d.thinkSupported !== undefined ? { thinkSupported: d.thinkSupported } : {}) });
    return { ...s, decision: d.decision.type, choice: d.decision, ...(d.thinkSupported !== undefined ? { thinkSupported: d.thinkSupported } : {}) };
  };

  const perform: PhaseHandler<Decided, Acted> = async (ctx) => {
    const run = runOf(runs, ctx);
    const s = ctx.input;
    const noop = (extra: Partial<Acted> = {}): Acted => ({ ...s, action_id: `noop_${ctx.signature.slice(7, 23)}`, causal_parent_ids: [], result: null, ...extra });
    const choice = s.choice;
    if (choice.type === "ask") {
      const answer = run.hooks.askUser ? await run.hooks.askUser(choice.question ?? choice.reason) : null;
      return noop({ answer });
    }
    if (choice.type === "wait") {
      await run.sleep(Math.min(1000 * 2 ** s.waits, 10_000), run.controller.signal).catch(() => undefined);
      return noop();
    }
    if (choice.type !== "execute" || !choice.action) return noop();
    if (run.actionsUsed >= run.config.execution.max_actions) return noop({ quota: true });
    const spec = run.actions.find((a) => a.name === choice.action!.name);
    const actionRunId = newActionRunId();
    const base: Omit<Acted, "result"> = { ...s, action_id: actionRunId, causal_parent_ids: [] };
    if (!spec) {
      const missing = failedResult({ name: choice.action.name }, actionRunId, "invalid", `no action named ${choice.action.name}`);
      await emit(run, ctx, "action_result", { ...missing });
      return { ...base, result: missing };
    }
    const args = choice.action.args;
    const policy = run.config.execution.confirm_policy;
    const tagged = spec.tags.filter((t) => policy.require_for_tags.includes(t));
    const needs = tagged.length > 0 || (run.mode === "interactive" && policy.default);
    if (needs) {
      const why = tagged.length ? `tagged ${tagged.join(", ")}` : "interactive mode confirms every action";
      const yes = run.hooks.confirm ? await run.hooks.confirm(spec, args, why) : false;
      if (!yes) {
        const declined = failedResult(spec, actionRunId, "declined", `not confirmed (${why})${run.hooks.confirm ? "" : ": nobody to confirm it"}`);
        await emit(run, ctx, "action_result", { ...declined });
        return { ...base, result: declined };
      }
    }
    run.actionsUsed++;
    await emit(run, ctx, "action_started", { actionRunId, name: spec.name, args, tags: spec.tags, layout: spec.layout });
    const marker = `pulse-agent-${run.runId}-${ctx.iteration}-${actionRunId.slice(0, 8)}`;
    const recorded: Promise<void>[] = [];
    await run.processes?.record(run.runId, ctx.iteration, { pid: 0, pgid: 0, startTime: 0, marker }).catch(() => undefined);
    let result: ActionResult;
    try {
      result = await performAction(run.executor, spec, args, {
        runId: run.runId,
        actionRunId,
        workdir: run.workdir,
        files: run.files,
        runsDir: run.runsDir,
        parentEnv: run.parentEnv,
        signal: run.controller.signal,
        marker,
        onSpawn: (info) => {
          if (run.processes) recorded.push(run.processes.record(run.runId, ctx.iteration, info).catch(() => undefined));
        },
      });
    } finally {
      await Promise.all(recorded);
      await run.processes?.remove(run.runId, ctx.iteration).catch(() => undefined);
    }
    if (!run.config.logging.capture_stdout) result.stdout = "";
    if (!run.config.logging.capture_stderr) result.stderr = "";
    await emit(run, ctx, "action_result", { ...result });
    return { ...base, result };
  };

  const evaluate: PhaseHandler<Acted, Learned> = async (ctx) => {
    const run = runOf(runs, ctx);
    const s = ctx.input;
    const r = s.result;
    if (r && r.ended !== "invalid" && r.ended !== "declined" && r.ended !== "aborted") {
      const feedback = await feedbackFor(run, r);
      const stored = await run.feedback.add(feedback, { action: r.name, runId: run.runId });
      if (stored === "inserted") await emit(run, ctx, "feedback_received", { feedback, action: r.name });
    }
    const waits = s.choice.type === "wait" ? s.waits + 1 : 0;
    const updated = updateFromAction(s.plan, s.choice, r);
    let advisory = updated.advisory;
    if (s.quota) advisory = { status: "terminate", reason: "exhausted" };
    else if (waits >= 3) advisory = { status: "blocked", reason: "exhausted" };
    else if (s.choice.type === "ask" && !s.answer) advisory = { status: "blocked", reason: "impossible" };
    if (updated.updatedPlan !== s.plan) await emit(run, ctx, "plan_updated", { plan: updated.updatedPlan, step: updated.step ?? null });
    const progress = progressOf(updated.updatedPlan);
    await emit(run, ctx, "progress_evaluated", { ...advisory, step: updated.step ?? null, progress, decision: s.choice.type, actionsUsed: run.actionsUsed });
    const observation =
      s.choice.type === "execute" && r
        ? `${r.name}(${clip(JSON.stringify(s.choice.action?.args ?? {}), 120)}) → ${r.status}${r.ended !== "exited" ? ` (${r.ended})` : ""}: ${clip(r.status === "ok" ? r.result : (r.error ?? ""))}`
        : s.choice.type === "ask"
          ? `asked "${clip(s.choice.question ?? s.choice.reason, 120)}": ${s.answer ? `answered "${clip(s.answer)}"` : "no answer"}`
          : `${s.choice.type}: ${clip(s.choice.reason, 120)}`;
    const status: Learned["status"] = r ? (r.status === "ok" ? "success" : "failure") : "partial";
    return { runId: s.runId, plan: updated.updatedPlan, observations: [...s.observations, observation], advisory, waits, action_id: s.action_id, status, causal_parent_ids: s.causal_parent_ids, ...(s.quota ? { quota: true } : {}) };
  };

  return { screen, plan, decide: decideHandler, perform_action: perform, evaluate_progress: evaluate } as Record<(typeof AGENT_PHASES)[number], PhaseHandler>;
}

/** Auto mode: implicit (4/success on ok). Interactive: the handler's, else the neutral stub when it gives none in time. */
async function feedbackFor(run: AgentRun, r: ActionResult): Promise<Feedback> {
  const fb = run.config.feedback;
  if (run.mode === "auto" || !fb.enable_user_feedback || !run.hooks.feedbackHandler) {
    return run.mode === "auto" && fb.implicit_success_on_ok ? implicitFeedback(r, "auto") : implicitFeedback(r, "neutral");
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), fb.handler_timeout_sec * 1000)));
  try {
    const given = await Promise.race([run.hooks.feedbackHandler(r).catch(() => null), timeout]);
    if (!given) return implicitFeedback(r, "neutral");
    try {
      return validateFeedback({ ...given, actionRunId: r.actionRunId });
    } catch {
      return implicitFeedback(r, "neutral");
    }
  } finally {
    clearTimeout(timer);
  }
}

