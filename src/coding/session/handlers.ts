/**
 * The phase handlers of `coding.pulse_session`, closing over the coding kit: build_context
 * (anchor resolution and the prompt), dispatch_agent (one agent turn, persisted as dispatched
 * before the call), extract_evidence (exactly one signal, git evidence, anchor hint, summary),
 * record_branch (the iteration's record and the guard's verdict), learn (the iteration kept as a
 * turn of the memory substrate, for later anchors).
 *
 * Each phase's output carries what the next one needs, and the route phase's decision reaches
 * the runner through learn's output: nothing of an iteration is handed on the side, so a phase
 * run again with the same input (extract_evidence is idempotent) returns the same thing. What a
 * run shares across its iterations (its record, driver, guard, ledger, abort) is the run's.
 */
import type { LedgerEntry } from "../cost-ledger.js";
import { compareToBaseline, describeVerdict, type GateVerdict } from "../gate.js";
import { PULSE_ACK_REPLAN_TOOL, PULSE_SIGNAL_TOOL } from "../completion-tools.js";
import { applyDeferredSteers } from "../guidance/deferred.js";
import { GuidanceGate, replanBriefing, type HeldReplan, type ReplanAck } from "../guidance/gate.js";
import { randomUUID } from "node:crypto";
import { createHash } from "node:crypto";
import type { PhaseContext, PhaseHandler } from "../../runtime/handler-context.js";
import { totalTokens } from "../../agents/contract.js";
import { recordProcesses, type ProcessRecording } from "../agent-processes.js";
import { collectEvidence, startEvidence, uncommittedSince } from "../evidence.js";
import { phaseAuditSink } from "../audit-sink.js";
import { resolveSignal } from "../signals.js";
import { resolveAnchor, type Turn } from "./anchors.js";
import { anchorHint, estimateTokens, summarize } from "./extract.js";
import { buildIterationPrompt } from "./prompt.js";
import { SESSION_LOOP_ID } from "./profile.js";
import type { IterationRecord, IterationStatus } from "./records.js";
import type { AgentResult } from "../../agents/contract.js";
import type { CommitFirst, EvidenceStart, WorkspaceEvidence } from "../evidence.js";
import type { ResolvedSignal } from "../signals.js";
import type { Verdict } from "../progress-breaker.js";
import type { SessionRun, SessionRuns } from "./run-state.js";
import { workdirOf } from "./workspace.js";

export const SESSION_PHASES = ["build_context", "dispatch_agent", "extract_evidence", "record_branch", "learn"] as const;

/** The iteration's identity, carried by every phase's output. */
export interface IterationRef {
  session_id: string;
  iteration: number;
  /** The iteration's record (pulse_iterations.id). */
  iteration_id: string;
  /** Turns this iteration was anchored on: the outcome's causal parents. */
  slice_ids: string[];
  anchor_depth: number;
  /** The guidance change this iteration's turn must replan for (it holds the session), or null. */
  replan: HeldReplan | null;
}

/** build_context → dispatch_agent. */
export interface IterationPlan extends IterationRef {
  prompt: string;
  query: string;
  node_ids: string[];
  anchor_strategy: string;
  anchor_turn_id: string | null;
  slice_id: string | null;
  /**
   * The tree as the iteration started, taken before its turn: a turn dispatched again after a
   * crash (its first attempt's leftovers in a recovery commit) is judged from here, so what the
   * first attempt did stays this iteration's work.
   */
  start: EvidenceStart;
}

/** dispatch_agent (the act phase) → extract_evidence: the action, which learn's outcome is grounded on. */
export interface AgentTurn extends IterationRef {
  action_id: string;
  status: "success" | "failure" | "timeout";
  agent_status: AgentResult["status"];
  causal_parent_ids: string[];
  start: EvidenceStart;
  result: AgentResult;
}

/** extract_evidence → record_branch. */
export interface IterationEvidence extends AgentTurn {
  evidence: WorkspaceEvidence;
  signal: ResolvedSignal;
  hint: string | null;
  summary: string;
  /** The checks' verdict (on a COMPLETE, or every turn with --verify-each); null when none ran. */
  gate: GateVerdict | null;
  /** What the agent named as unresolved (`<unresolved>…</unresolved>`), for the escape hatch. */
  unresolved: string | null;
  /** How the replan this turn was held for ended (null: none was held). */
  ack: ReplanAck | null;
}

/** record_branch (the route phase) → learn, and learn → the runner. */
export interface Branch extends IterationRef {
  /** What the route phase decided: continue, wait, or stop with a reason. */
  decision: Verdict;
  record: IterationRecord;
  /** What the turn cost: model, tokens by kind, dollars and where the price came from. */
  receipt: LedgerEntry;
  progress: boolean;
  warnings: string[];
}

export interface Learned extends Branch {
  action_id: string;
  status: "success" | "partial" | "failure" | "timeout";
  causal_parent_ids: string[];
}

function runOf(runs: SessionRuns, ctx: PhaseContext): SessionRun {
  const run = runs.get(ctx.workspace_id);
  if (!run) throw new Error(`no session ${ctx.workspace_id} is running in this process`);
  return run;
}

/**
 * What an iteration starts (the agent, its tools, the checks) is in the store while it lives: its
 * marker is recorded before anything starts (a pulse killed between a spawn and its record still
 * leaves the reaper a way to find it), each process as it starts; `done` forgets them.
 */
export function recordedProcesses(run: SessionRun, iteration: number): Promise<ProcessRecording> {
  return recordProcesses(run.processes, run.session.id, iteration, "pulse-session");
}

function refOf(x: IterationRef): IterationRef {
  return { session_id: x.session_id, iteration: x.iteration, iteration_id: x.iteration_id, slice_ids: x.slice_ids, anchor_depth: x.anchor_depth, replan: x.replan };
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

/** What the agent of a turn dispatched again is told. */
export function redispatchNote(commit: string | null): string {
  return `Note: an earlier attempt at this iteration was interrupted when pulse stopped, and is being run again.${commit ? ` What it left is in commit ${commit.slice(0, 8)} on this branch: check it and carry on from there.` : " It left no changes."}`;
}

export function turnId(iteration: number): string {
  return `turn-${iteration}`;
}

export function sessionHandlers(runs: SessionRuns): Record<(typeof SESSION_PHASES)[number], PhaseHandler> {
  return {
    build_context: async (ctx): Promise<IterationPlan> => {
      const run = runOf(runs, ctx);
      const { iteration } = ctx.input as { session_id: string; iteration: number };
      const s = run.session;
      // Read once: the previous iteration (its anchor hint, a rejection), the rejections so far, a rate-limited attempt to retry.
      const earlier = await run.records.iterations(s.id);
      const previous = earlier.filter((i) => i.iteration_number < iteration).at(-1);
      const turns = await turnsOf(ctx, run);
      const anchor = resolveAnchor({ chained: previous?.anchor_hint_next ?? null, explicit: s.anchor_turn_id, goal: s.goal, turns, minSalience: run.profile.buildContext.semanticMinSalience });
      // The gate, before anything else: a pending guidance change holds the session, and this turn replans.
      if (!run.guidance) {
        run.guidance = await GuidanceGate.open(workdirOf(s));
        // Steers given while the session had no working directory (blocked in its own worktree) go in now.
        await applyDeferredSteers(run.records, s.id, run.guidance, { session_id: s.id });
      }
      const replan = await run.guidance.held();
      const prefetched = run.profile.buildContext.contextStrategy === "none" || run.profile.buildContext.contextStrategy === "mcp" ? [] : s.progress_log.slice(-run.profile.buildContext.prefetchTurns);
      const prompt = buildIterationPrompt({
        goal: s.goal,
        iteration,
        maxIterations: s.max_iterations,
        strategy: s.context_strategy,
        anchor,
        progress: s.progress_log,
        prefetchTurns: run.profile.buildContext.prefetchTurns,
        ...(replan ? { replan: replanBriefing(replan) } : {}),
        ...(run.resumedAfter && iteration === s.current_iteration + 1 ? { resumedAfter: run.resumedAfter } : {}),
        ...(previous?.status === "rejected" && previous.gate ? { rejected: { failures: describeVerdict(previous.gate), escape: earlier.filter((i) => i.status === "rejected").length >= run.profile.verify.maxRejections } } : {}),
      });
      const sliceIds = [...new Set([...(anchor.turn ? [anchor.turn.id] : []), ...prefetched.map((e) => turnId(e.iteration))])].filter((id) => turns.some((t) => t.id === id));
      const slice = sliceIds.length > 0 ? `slice_${createHash("sha256").update(sliceIds.join(",")).digest("hex").slice(0, 12)}` : null;
      // A rate-limited attempt of this number is retried in its own row (iteration numbers stay unique),
      // as is one a dead runner left before its turn (still pending: no agent ran for it).
      const retried = earlier.find((i) => i.iteration_number === iteration && (i.status === "rate_limited" || i.status === "pending"));
      const fresh = { inbox_task_id: randomUUID(), error: null, finished_at: null, started_at: new Date().toISOString(), tokens_used: 0, cost_usd: 0, output_summary: null, output_full: null };
      const fields = {
        task_content: prompt,
        status: "pending",
        anchor_turn_id: anchor.turnId,
        anchor_strategy: anchor.strategy,
        anchor_resolution_ms: Math.round(anchor.ms * 1000) / 1000,
        anchor_salience: anchor.salience,
        anchor_depth: anchor.depth,
        context_tokens: estimateTokens(prompt),
        slice_id: slice,
      } as const;
      const record = retried ? await run.records.updateIteration(retried.id, { ...fresh, ...fields }) : await run.records.addIteration({ id: randomUUID(), session_id: s.id, iteration_number: iteration, ...fresh, ...fields });
      run.session = await run.records.update(s.id, { current_iteration: iteration });
      run.emit({ type: "iteration.started", session_id: s.id, iteration, max: s.max_iterations, anchor });
      if (replan) {
        await phaseAuditSink(ctx)("guidance.held", { event_id: replan.event_id, files: replan.files, iteration });
        run.emit({ type: "guidance.held", session_id: s.id, iteration, event_id: replan.event_id, files: replan.files });
      }
      const start = await startEvidence(workdirOf(s));
      return { session_id: s.id, iteration, iteration_id: record.id, slice_ids: sliceIds, anchor_depth: anchor.depth, replan, prompt, query: s.goal, node_ids: sliceIds, anchor_strategy: anchor.strategy, anchor_turn_id: anchor.turnId, slice_id: slice, start };
    },

    dispatch_agent: async (ctx): Promise<AgentTurn> => {
      const run = runOf(runs, ctx);
      const plan = ctx.input as IterationPlan;
      const d = run.profile.dispatch;
      // A turn a dead runner left (its agent reaped, its leftovers in a recovery commit) is dispatched
      // again under the same iteration: the agent is told, and the audit trail says so once.
      const again = run.redispatch?.iteration === plan.iteration ? run.redispatch : undefined;
      if (again) delete run.redispatch;
      const prompt = again ? `${plan.prompt}\n\n${redispatchNote(again.commit)}` : plan.prompt;
      if (again) await phaseAuditSink(ctx)("session.turn_redispatched", { iteration: plan.iteration, iteration_id: plan.iteration_id, recovery_commit: again.commit, runner_pid: again.runnerPid });
      // Persisted before the call: a host that dies during it leaves a dispatched iteration to recover.
      await run.records.updateIteration(plan.iteration_id, { status: "dispatched", ...(again ? { task_content: prompt } : {}) });
      const start = plan.start;
      await run.records.updateIteration(plan.iteration_id, { status: "running" });
      // Each process the agent starts is in the records from its first moment to the turn's end.
      const { onSpawn, marker, done } = await recordedProcesses(run, plan.iteration);
      let result: AgentResult;
      try {
        result = await run.driver.run(
          {
            prompt,
            cwd: workdirOf(run.session),
            loopId: SESSION_LOOP_ID,
            phaseId: "dispatch_agent",
            iteration: plan.iteration,
            // The session's own limits, else the profile's, else (left out) the driver's: a preset's, or its default.
            ...((run.session.driver.timeoutMs ?? d.timeoutMs) ? { timeoutMs: (run.session.driver.timeoutMs ?? d.timeoutMs)! } : {}),
            ...((run.session.driver.silenceTimeoutMs ?? d.silenceTimeoutMs) ? { silenceTimeoutMs: (run.session.driver.silenceTimeoutMs ?? d.silenceTimeoutMs)! } : {}),
            ...(d.maxTurns ? { maxTurns: d.maxTurns } : {}),
            terminalTools: plan.replan ? [PULSE_SIGNAL_TOOL, PULSE_ACK_REPLAN_TOOL] : [PULSE_SIGNAL_TOOL],
            ...((run.session.driver.model ?? d.model) ? { model: (run.session.driver.model ?? d.model)! } : {}),
          },
          { signal: AbortSignal.any([run.controller.signal, ctx.signal]), onEvent: (event) => run.emit({ type: "agent", session_id: run.session.id, iteration: plan.iteration, event }), onSpawn, marker },
        );
      } finally {
        await done();
      }
      const status = result.status === "ok" ? "success" : result.status === "timeout" ? "timeout" : "failure";
      return { ...refOf(plan), action_id: `agent_${plan.iteration_id}`, status, agent_status: result.status, causal_parent_ids: plan.slice_ids, start, result };
    },

    extract_evidence: async (ctx): Promise<IterationEvidence> => {
      const run = runOf(runs, ctx);
      const turn = ctx.input as AgentTurn;
      const { result } = turn;
      const s = run.session;
      const cwd = workdirOf(s);
      const words = result.transcript || result.text;
      const signal = resolveSignal({ text: words, toolCalls: result.toolCalls, allowInference: run.profile.extract.allowInference });
      // Every iteration leaves a commit: what the agent left uncommitted is committed on the session's
      // branch (never in a user's checkout that was dirty when the turn started). Run again, it finds
      // nothing left to commit, so the output is the same.
      const mayCommit = s.worktree_path !== null || Object.keys(turn.start.dirtyAtStart).length === 0;
      // A turn stopped by abort or a signal to pulse leaves its work to the recovery commit, which says so.
      const stopped = result.status === "aborted" || run.controller.signal.aborted || run.interrupted !== undefined;
      let commitFirst: CommitFirst | undefined;
      if (run.profile.extract.autoCommit && mayCommit && !stopped) {
        const what = summarize(result.text || words, result.error?.message ?? "work in progress", 72);
        const message = `chore(pulse): iteration ${turn.iteration}: ${what}\n\nPulse-Session: ${s.id}\nPulse-Iteration: ${turn.iteration}`;
        // Nothing dirty at the start: whatever status lists is left over, and the evidence's own process checks.
        if (Object.keys(turn.start.dirtyAtStart).length === 0) commitFirst = { message, ifChanged: true };
        else if ((await uncommittedSince(cwd, turn.start)).length > 0) commitFirst = { message };
      }
      const evidence = await collectEvidence(cwd, turn.start, commitFirst ? { commitFirst } : {});
      const subject = evidence.commits.at(-1)?.subject ?? "";
      const summary = summarize(result.text || words, subject || (result.error?.message ?? "no output"), run.profile.extract.summaryChars);
      // Done means verified: a COMPLETE (or every turn, with --verify-each) is judged by the checks.
      let gate: GateVerdict | null = null;
      if (s.verify && result.status === "ok" && (signal.signal === "COMPLETE" || s.verify.each)) {
        if (!run.checks) throw new Error("this runner cannot run the session's checks (--verify)");
        const recording = await recordedProcesses(run, turn.iteration);
        const runs = await run.checks(s.verify.checks, { cwd, timeoutMs: run.profile.verify.timeoutMs, signal: AbortSignal.any([run.controller.signal, ctx.signal]), onSpawn: recording.onSpawn, marker: recording.marker }).finally(recording.done);
        gate = compareToBaseline(runs, s.verify.baseline ?? []);
      }
      const unresolved = /<unresolved>([\s\S]*?)<\/unresolved>/i.exec(words)?.[1]?.trim() || null;
      // A held replan is settled by the turn: its pulse_ack_replan call judged, or an ack made through the served tool found.
      const ack = turn.replan && run.guidance ? await run.guidance.settle(turn.replan, result.toolCalls) : null;
      return { ...turn, evidence, signal, hint: anchorHint(words)?.turnId ?? null, summary, gate, unresolved, ack };
    },

    record_branch: async (ctx): Promise<Branch> => {
      const run = runOf(runs, ctx);
      const x = ctx.input as IterationEvidence;
      const { result, evidence, signal } = x;
      const s = run.session;
      const entry = await run.ledger.record({ loopId: SESSION_LOOP_ID, sessionId: s.id, iteration: x.iteration, driver: run.driver.name, ...(result.model ? { model: result.model } : {}), ...(result.usage ? { usage: result.usage } : {}), ...(result.costUsd !== undefined ? { costUsd: result.costUsd } : {}) }, phaseAuditSink(ctx));
      // A turn the agent did not finish (failed, timed out, aborted, rate limited) has no signal: the
      // resolver's BLOCKED default would claim the agent asked for a person when it never spoke.
      let said = result.status === "ok" ? signal : null;
      // No COMPLETE under guidance the agent has not acknowledged (changed during the turn, or a replan left unacknowledged);
      // a replan turn that acknowledged but gave no signal goes on.
      const pendingNow = run.guidance ? (await run.guidance.held()) !== null : false;
      if (said && pendingNow && said.signal === "COMPLETE") said = { ...said, signal: "CONTINUE", reason: "the guidance changed and is not acknowledged yet: COMPLETE waits for the replan", warnings: [...said.warnings, "COMPLETE held: a guidance change is pending"] };
      else if (said && x.ack?.accepted && (said.source === "default" || said.source === "inferred")) said = { ...said, signal: "CONTINUE", reason: "replan acknowledged" };
      if (x.ack) {
        await phaseAuditSink(ctx)(x.ack.accepted ? "guidance.acknowledged" : "guidance.ack_refused", { event_id: x.ack.event_id, accepted: x.ack.accepted, acknowledged_event_id: x.ack.acknowledged_event_id, plan_sha256: x.ack.plan_sha256, via: x.ack.via, reason: x.ack.reason, iteration: x.iteration });
        run.emit({ type: "guidance.acknowledged", session_id: s.id, iteration: x.iteration, ack: x.ack });
      }
      const limited = result.status === "rate_limited";
      // A COMPLETE the checks refuse is rejected (the next turn is told why), until the agent has been
      // refused maxRejections times: then a COMPLETE ends the session blocked with what is unresolved.
      const refused = said?.signal === "COMPLETE" && x.gate !== null && !x.gate.passed;
      const rejections = refused ? (await run.records.iterations(s.id)).filter((i) => i.status === "rejected").length : 0;
      const escape = refused && rejections >= run.profile.verify.maxRejections;
      const status: IterationStatus = refused && !escape ? "rejected" : result.status === "ok" ? "complete" : result.status === "timeout" ? "timeout" : limited ? "rate_limited" : "failed";
      const commit = evidence.commits.length > 0 ? evidence.headSha : null;
      const record = await run.records.updateIteration(x.iteration_id, {
        status,
        signal: said?.signal ?? null,
        signal_source: said?.source ?? null,
        signal_reason: said?.reason ?? null,
        output_summary: x.summary,
        output_full: result.transcript || result.text,
        commit_hash: commit,
        files_changed: evidence.filesChanged,
        anchor_hint_next: x.hint,
        tokens_used: entry.tokens || totalTokens(result.usage),
        cost_usd: entry.costUsd,
        error: result.status === "ok" ? (status === "rejected" ? `COMPLETE rejected: the checks gained failures:\n${describeVerdict(x.gate!)}` : null) : (result.error?.message ?? result.status),
        gate: x.gate,
        receipt: { driver: entry.driver, ...(entry.model !== undefined ? { model: entry.model } : {}), usage: entry.usage, tokens: entry.tokens, costUsd: entry.costUsd, costSource: entry.costSource },
        finished_at: new Date().toISOString(),
      });
      const unresolved = escape ? `completed with unresolved issues (the checks still fail after ${rejections} rejected COMPLETEs): ${x.unresolved ?? describeVerdict(x.gate!).replace(/\n\s*/g, "; ")}` : undefined;
      const decision = run.guard.afterIteration({
        status: result.status,
        ...(said ? { signal: escape ? "BLOCKED" : refused ? "CONTINUE" : said.signal } : {}),
        ...(unresolved ? { signalReason: unresolved } : said?.reason ? { signalReason: said.reason } : {}),
        // An acknowledged replan is progress, though it commits nothing.
        progress: evidence.progress || x.ack?.accepted === true,
        tokens: entry.tokens,
        costUsd: entry.costUsd,
        ...(result.error ? { error: result.error.message } : {}),
        ...(result.error?.kind === "permission_denied" ? { permissionDenials: 1 } : {}),
        ...(result.retryAfterMs !== undefined ? { retryAfterMs: result.retryAfterMs } : {}),
      });
      // Run again after a crash that came after this update (the journal had not committed the phase):
      // the session's totals already hold this iteration, and are not counted twice.
      const counted = !limited && s.progress_log.some((e) => e.iteration === x.iteration);
      if (!counted) run.session = await run.records.update(s.id, {
        // The agent's last real signal stays; a rate-limited turn is no turn (its number is reused).
        last_signal: said?.signal ?? s.last_signal,
        progress_log: limited ? s.progress_log : [...s.progress_log, { iteration: x.iteration, signal: said?.signal ?? "NONE", summary: x.summary, commit }],
        total_commits: s.total_commits + evidence.commits.length,
        total_tokens_used: s.total_tokens_used + entry.tokens,
        total_cost_usd: s.total_cost_usd + entry.costUsd,
      });
      return { ...refOf(x), decision, record, receipt: entry, progress: evidence.progress, warnings: [...signal.warnings, ...result.warnings] };
    },

    learn: async (ctx): Promise<Learned> => {
      const run = runOf(runs, ctx);
      const b = ctx.input as Branch;
      const memory = ctx.substrates.memory;
      // A resumed session's earlier turns join this process's memory once, in order.
      if (!run.priorStored) {
        const known = new Set((await memory.retrieve_context({ query: { type: "turn" }, k: 10_000 })).nodes.map((n) => n.id));
        for (const t of run.priorTurns) if (!known.has(t.id)) await memory.store_node({ node: { id: t.id, type: "turn", content: { ...t } } });
        run.priorStored = true;
      }
      const r = b.record;
      // A rate-limited attempt is no turn: the retry under the same number is the one remembered.
      if (r.status === "rate_limited") return { ...b, action_id: `agent_${r.id}`, status: "failure", causal_parent_ids: b.slice_ids };
      const turn: Turn = { id: turnId(b.iteration), iteration: b.iteration, summary: r.output_summary ?? "", signal: r.signal ?? "NONE", commit: r.commit_hash, files: r.files_changed, depth: b.anchor_depth };
      await memory.store_node({ node: { id: turn.id, type: "turn", content: { ...turn }, causal_parent_ids: b.slice_ids } });
      const status: Learned["status"] = r.status === "complete" ? (b.progress || r.signal === "COMPLETE" ? "success" : "partial") : r.status === "timeout" ? "timeout" : "failure";
      // The turns this iteration was anchored on gain or lose confidence by how it went.
      const outcome = { token: "OutcomeSignal" as const, version: "0.1" as const, trace_id: ctx.trace_id, action_id: turn.id, status, causal_parent_ids: b.slice_ids };
      if (b.slice_ids.length > 0) await memory.learn_from_outcome({ outcome });
      // The route phase's decision goes on to the runner unchanged.
      return { ...b, action_id: `agent_${r.id}`, status, causal_parent_ids: b.slice_ids };
    },
  };
}
