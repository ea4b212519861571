/**
 * The phase handlers of `coding.pulse_session`, closing over the coding kit: build_context
 * (anchor resolution and the prompt), dispatch_agent (one agent turn, persisted as dispatched
 * before the call), extract_evidence (exactly one signal, git evidence, anchor hint, summary),
 * record_branch (the iteration's record and the guard's verdict), learn (the iteration kept as a
 * turn of the memory substrate, for later anchors).
 */
import { PULSE_SIGNAL_TOOL } from "../completion-tools.js";
import { randomUUID } from "node:crypto";
import { createHash } from "node:crypto";
import type { PhaseContext, PhaseHandler } from "../../runtime/handler-context.js";
import { totalTokens } from "../../agents/contract.js";
import { collectEvidence, startEvidence } from "../evidence.js";
import { resolveSignal } from "../signals.js";
import { resolveAnchor, type Turn } from "./anchors.js";
import { anchorHint, estimateTokens, summarize } from "./extract.js";
import { buildIterationPrompt } from "./prompt.js";
import { SESSION_LOOP_ID } from "./profile.js";
import type { IterationStatus } from "./records.js";
import type { IterationInFlight, SessionRun, SessionRuns } from "./run-state.js";
import { workdirOf } from "./workspace.js";

export const SESSION_PHASES = ["build_context", "dispatch_agent", "extract_evidence", "record_branch", "learn"] as const;

function runOf(runs: SessionRuns, ctx: PhaseContext): { run: SessionRun; it: IterationInFlight } {
  const run = runs.get(ctx.workspace_id);
  if (!run?.current) throw new Error(`no session ${ctx.workspace_id} is running in this process`);
  return { run, it: run.current };
}

/** Turns the memory substrate holds for this session, with those of earlier runs it does not. */
async function turnsOf(ctx: PhaseContext, run: SessionRun): Promise<Turn[]> {
  const found = await ctx.substrates.memory.retrieve_context({ query: { type: "turn" }, k: 10_000 });
  const turns = new Map<number, Turn>();
  for (const t of run.priorTurns) turns.set(t.iteration, t);
  for (const node of found.nodes) {
    const c = node.content as Turn | undefined;
    if (c && typeof c.iteration === "number") turns.set(c.iteration, { ...c, id: String(node.id) });
  }
  return [...turns.values()].sort((a, b) => a.iteration - b.iteration);
}

export function turnId(iteration: number): string {
  return `turn-${iteration}`;
}

export function sessionHandlers(runs: SessionRuns): Record<(typeof SESSION_PHASES)[number], PhaseHandler> {
  return {
    build_context: async (ctx) => {
      const { run, it } = runOf(runs, ctx);
      const s = run.session;
      const previous = (await run.records.iterations(s.id)).filter((i) => i.iteration_number < it.number).at(-1);
      const turns = await turnsOf(ctx, run);
      const anchor = resolveAnchor({ chained: previous?.anchor_hint_next ?? null, explicit: s.anchor_turn_id, goal: s.goal, turns, minSalience: run.profile.buildContext.semanticMinSalience });
      const prefetched = run.profile.buildContext.contextStrategy === "none" || run.profile.buildContext.contextStrategy === "mcp" ? [] : s.progress_log.slice(-run.profile.buildContext.prefetchTurns);
      const prompt = buildIterationPrompt({
        goal: s.goal,
        iteration: it.number,
        maxIterations: s.max_iterations,
        strategy: s.context_strategy,
        anchor,
        progress: s.progress_log,
        prefetchTurns: run.profile.buildContext.prefetchTurns,
        ...(run.resumedAfter && it.number === s.current_iteration + 1 ? { resumedAfter: run.resumedAfter } : {}),
      });
      it.anchor = anchor;
      it.sliceIds = [...new Set([...(anchor.turn ? [anchor.turn.id] : []), ...prefetched.map((e) => turnId(e.iteration))])].filter((id) => turns.some((t) => t.id === id));
      const slice = it.sliceIds.length > 0 ? `slice_${createHash("sha256").update(it.sliceIds.join(",")).digest("hex").slice(0, 12)}` : null;
      it.record = await run.records.addIteration({
        id: randomUUID(),
        session_id: s.id,
        iteration_number: it.number,
        inbox_task_id: randomUUID(),
        task_content: prompt,
        status: "pending",
        anchor_turn_id: anchor.turnId,
        anchor_strategy: anchor.strategy,
        anchor_resolution_ms: Math.round(anchor.ms * 1000) / 1000,
        anchor_salience: anchor.salience,
        anchor_depth: anchor.depth,
        context_tokens: estimateTokens(prompt),
        slice_id: slice,
      });
      run.session = await run.records.update(s.id, { current_iteration: it.number });
      run.emit({ type: "iteration.started", session_id: s.id, iteration: it.number, max: s.max_iterations, anchor });
      return { query: s.goal, node_ids: it.sliceIds, anchor_strategy: anchor.strategy, anchor_turn_id: anchor.turnId, slice_id: slice };
    },

    dispatch_agent: async (ctx) => {
      const { run, it } = runOf(runs, ctx);
      const record = it.record!;
      const d = run.profile.dispatch;
      // Persisted before the call: a host that dies during it leaves a dispatched iteration to recover.
      await run.records.updateIteration(record.id, { status: "dispatched" });
      it.start = await startEvidence(workdirOf(run.session));
      await run.records.updateIteration(record.id, { status: "running" });
      it.result = await run.driver.run(
        {
          prompt: record.task_content,
          cwd: workdirOf(run.session),
          loopId: SESSION_LOOP_ID,
          phaseId: "dispatch_agent",
          iteration: it.number,
          // The session's own limits, else the profile's, else (left out) the driver's: a preset's, or its default.
          ...((run.session.driver.timeoutMs ?? d.timeoutMs) ? { timeoutMs: (run.session.driver.timeoutMs ?? d.timeoutMs)! } : {}),
          ...((run.session.driver.silenceTimeoutMs ?? d.silenceTimeoutMs) ? { silenceTimeoutMs: (run.session.driver.silenceTimeoutMs ?? d.silenceTimeoutMs)! } : {}),
          ...(d.maxTurns ? { maxTurns: d.maxTurns } : {}),
          terminalTools: [PULSE_SIGNAL_TOOL],
          ...((run.session.driver.model ?? d.model) ? { model: (run.session.driver.model ?? d.model)! } : {}),
        },
        { signal: AbortSignal.any([run.controller.signal, ctx.signal]), onEvent: (event) => run.emit({ type: "agent", session_id: run.session.id, iteration: it.number, event }) },
      );
      const ok = it.result.status === "ok";
      return { action_id: `agent_${record.id}`, status: ok ? "success" : it.result.status === "timeout" ? "timeout" : "failure", agent_status: it.result.status, causal_parent_ids: it.sliceIds };
    },

    extract_evidence: async (ctx) => {
      const { run, it } = runOf(runs, ctx);
      const result = it.result!;
      it.evidence = await collectEvidence(workdirOf(run.session), it.start!);
      const words = result.transcript || result.text;
      it.signal = resolveSignal({ text: words, toolCalls: result.toolCalls, allowInference: run.profile.extract.allowInference });
      it.hint = anchorHint(words)?.turnId;
      const subject = it.evidence.commits.at(-1)?.subject ?? "";
      it.summary = summarize(result.text || words, subject || (result.error?.message ?? "no output"), run.profile.extract.summaryChars);
      return { signal: it.signal.signal, source: it.signal.source, commit: it.evidence.commits.length > 0 ? it.evidence.headSha : null, files: it.evidence.filesChanged };
    },

    record_branch: async (ctx) => {
      const { run, it } = runOf(runs, ctx);
      const result = it.result!;
      const evidence = it.evidence!;
      const signal = it.signal!;
      const s = run.session;
      const entry = await run.ledger.record({ loopId: SESSION_LOOP_ID, sessionId: s.id, iteration: it.number, driver: run.driver.name, ...(result.model ? { model: result.model } : {}), ...(result.usage ? { usage: result.usage } : {}), ...(result.costUsd !== undefined ? { costUsd: result.costUsd } : {}) });
      const status: IterationStatus = result.status === "ok" ? "complete" : result.status === "timeout" ? "timeout" : "failed";
      const commit = evidence.commits.length > 0 ? evidence.headSha : null;
      it.record = await run.records.updateIteration(it.record!.id, {
        status,
        signal: signal.signal,
        signal_source: signal.source,
        signal_reason: signal.reason ?? null,
        output_summary: it.summary ?? null,
        output_full: result.transcript || result.text,
        commit_hash: commit,
        files_changed: evidence.filesChanged,
        anchor_hint_next: it.hint ?? null,
        tokens_used: entry.tokens || totalTokens(result.usage),
        cost_usd: entry.costUsd,
        error: result.status === "ok" ? null : (result.error?.message ?? result.status),
        finished_at: new Date().toISOString(),
      });
      it.verdict = run.guard.afterIteration({
        status: result.status,
        signal: signal.signal,
        ...(signal.reason ? { signalReason: signal.reason } : {}),
        progress: evidence.progress,
        tokens: entry.tokens,
        costUsd: entry.costUsd,
        ...(result.error ? { error: result.error.message } : {}),
        ...(result.error?.kind === "permission_denied" ? { permissionDenials: 1 } : {}),
        ...(result.retryAfterMs !== undefined ? { retryAfterMs: result.retryAfterMs } : {}),
      });
      run.session = await run.records.update(s.id, {
        last_signal: signal.signal,
        progress_log: [...s.progress_log, { iteration: it.number, signal: signal.signal, summary: it.summary ?? "", commit }],
        total_commits: s.total_commits + evidence.commits.length,
        total_tokens_used: s.total_tokens_used + entry.tokens,
        total_cost_usd: s.total_cost_usd + entry.costUsd,
      });
      const v = it.verdict;
      return { decision: v.action === "stop" ? v.reason : v.action, signal: signal.signal, status };
    },

    learn: async (ctx) => {
      const { run, it } = runOf(runs, ctx);
      const memory = ctx.substrates.memory;
      // A resumed session's earlier turns join this process's memory once, in order.
      if (!run.priorStored) {
        const known = new Set((await memory.retrieve_context({ query: { type: "turn" }, k: 10_000 })).nodes.map((n) => n.id));
        for (const t of run.priorTurns) if (!known.has(t.id)) await memory.store_node({ node: { id: t.id, type: "turn", content: { ...t } } });
        run.priorStored = true;
      }
      const r = it.record!;
      const turn: Turn = { id: turnId(it.number), iteration: it.number, summary: r.output_summary ?? "", signal: r.signal ?? "BLOCKED", commit: r.commit_hash, files: r.files_changed, depth: it.anchor?.depth ?? 0 };
      await memory.store_node({ node: { id: turn.id, type: "turn", content: { ...turn }, causal_parent_ids: it.sliceIds } });
      const status: "success" | "partial" | "failure" | "timeout" = r.status === "complete" ? (it.evidence?.progress || r.signal === "COMPLETE" ? "success" : "partial") : r.status === "timeout" ? "timeout" : "failure";
      // The turns this iteration was anchored on gain or lose confidence by how it went.
      const outcome = { token: "OutcomeSignal" as const, version: "0.1" as const, trace_id: ctx.trace_id, action_id: turn.id, status, causal_parent_ids: it.sliceIds };
      if (it.sliceIds.length > 0) await memory.learn_from_outcome({ outcome });
      return { action_id: `agent_${r.id}`, status, causal_parent_ids: it.sliceIds };
    },
  };
}
