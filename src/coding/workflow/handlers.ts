/**
 * The phase handlers of `coding.pulsing_workflow`, closing over the coding kit. One iteration is
 * one agent turn of the current pulse: select_pulse finds it, prepare_worktree puts the worktree
 * on its branch, run_pulse runs the turn, validate_completion (the route) judges it and chooses
 * checkpoint (the pulse ends: landed, or shelved with a recovery commit) or record_outcome (the
 * pulse goes on), and record_outcome records the turn and says what the workflow does next.
 * Each phase's output carries what the next needs; the decision reaches the runner in
 * record_outcome's output.
 */
import { randomUUID } from "node:crypto";
import type { PhaseContext, PhaseHandler } from "../../runtime/handler-context.js";
import type { AgentResult, ToolCall } from "../../agents/contract.js";
import { recordProcesses } from "../agent-processes.js";
import { git } from "../git.js";
import { PULSE_ACK_REPLAN_TOOL, pulseDoneTool, REQUEST_EXTENSION_TOOL } from "../completion-tools.js";
import { applyDeferredSteers } from "../guidance/deferred.js";
import { GUIDANCE_DIR } from "../guidance/files.js";
import { GuidanceGate, replanBriefing, type HeldReplan, type ReplanAck } from "../guidance/gate.js";
import { baselineOf, compareToBaseline, excuseKnown, type CheckBaseline, type CheckRun, type GateVerdict } from "../gate.js";
import { phaseAuditSink } from "../audit-sink.js";
import { changedSince, landPulse, openPulseBranch, pulseBranch, shelvePulse } from "./branches.js";
import { completionOf, extensionOf, judgeReplan, judgeTurn, standingFailures, type ToolOutcome, type TurnVerdict } from "./decide.js";
import { runPreflight, type PreflightResult } from "./preflight.js";
import { WORKFLOW_LOOP_ID } from "./profile.js";
import { pulsePrompt } from "./prompt.js";
import type { PulseRecord, WorkflowStatus } from "./records.js";
import type { WorkflowRun, WorkflowRuns } from "./run-state.js";

/** The guidance sidecar's directory, as the workflow lists its artifacts (what `git ls-files --directory` names). */
const GUIDANCE_ARTIFACT = `${GUIDANCE_DIR}/`;

/** Whether git ignores `path` already (a .gitignore of the project): then it needs no exclusion, and git refuses a pathspec naming it. */
async function ignored(cwd: string, path: string): Promise<boolean> {
  return (await git(cwd, ["check-ignore", "-q", path], { allowFail: true })).code === 0;
}

export const WORKFLOW_PHASES = ["preflight", "select_pulse", "prepare_worktree", "run_pulse", "validate_completion", "checkpoint", "record_outcome"] as const;

/** What the workflow does after the iteration: the next turn, or stop in a status. */
export type WorkflowDecision = { action: "continue" } | { action: "stop"; status: Exclude<WorkflowStatus, "pending" | "running" | "interrupted">; reason: string };

/** select_pulse → prepare_worktree: the pulse this turn works on, or the end (and why). */
export interface SelectedPulse {
  workflow_id: string;
  pulse_id: string | null;
  number: number;
  end?: WorkflowDecision;
}

/** prepare_worktree (act) → run_pulse. */
export interface PreparedPulse extends SelectedPulse {
  action_id: string;
  status: "success" | "skipped";
  causal_parent_ids: string[];
  branch: string | null;
  /** The workflow branch's head the pulse is measured from. */
  base: string | null;
}

/** run_pulse (act) → validate_completion. */
export interface PulseTurn extends PreparedPulse {
  turn: number;
  result: AgentResult | null;
  tools: ToolOutcome[];
  /** The guidance changed: this turn was held to replan (and acknowledge) instead of working on the pulse. */
  replan?: HeldReplan;
}

/** validate_completion (route) → checkpoint | record_outcome. */
export interface CompletionVerdict extends PulseTurn {
  next: "checkpoint" | "record_outcome";
  decision: TurnVerdict["decision"] | "end";
  verdict: TurnVerdict | null;
  gate: GateVerdict | null;
  files: string[];
  /** Accepted with unresolved issues: the checks as they stand become the baseline later pulses are held to. */
  rebaseline: CheckBaseline[] | null;
  /** A replan turn's acknowledgement, as the gate judged it. */
  ack?: ReplanAck;
}

/** checkpoint (act) → record_outcome. */
export interface Checkpoint extends CompletionVerdict {
  commit: string | null;
  recovery: boolean;
}

/** record_outcome (learn) → the runner. */
export interface Outcome {
  workflow_id: string;
  action_id: string;
  status: "success" | "partial" | "failure";
  causal_parent_ids: string[];
  workflow: WorkflowDecision;
}

function runOf(runs: WorkflowRuns, ctx: PhaseContext): WorkflowRun {
  const run = runs.get(ctx.workspace_id);
  if (!run) throw new Error(`no workflow ${ctx.workspace_id} is running in this process`);
  return run;
}

async function pulseOf(run: WorkflowRun, id: string | null): Promise<PulseRecord | undefined> {
  return id ? (await run.records.pulses(run.workflow.id)).find((p) => p.id === id) : undefined;
}

function commitMessage(run: WorkflowRun, p: PulseRecord, v: TurnVerdict): string {
  const lines = [v.summary!.trim()];
  if (v.unresolvedIssues.length > 0) lines.push("", "Unresolved issues:", ...v.unresolvedIssues.map((i) => `- ${i.issue}: ${i.reason}`));
  lines.push("", `Pulse-Workflow: ${run.workflow.id}`, `Pulse: ${p.number}${p.planned_pulse_id ? ` (${p.planned_pulse_id})` : ""}`);
  return lines.join("\n");
}

export function workflowHandlers(runs: WorkflowRuns): Record<(typeof WORKFLOW_PHASES)[number], PhaseHandler> {
  return {
    preflight: async (ctx): Promise<PreflightResult> => runPreflight(ctx, runOf(runs, ctx)),

    select_pulse: async (ctx): Promise<SelectedPulse> => {
      const run = runOf(runs, ctx);
      const id = run.workflow.id;
      const pre = ctx.input as Partial<PreflightResult> | null;
      if (pre && pre.ok === false) return { workflow_id: id, pulse_id: null, number: 0, end: { action: "stop", status: "abandoned", reason: `preflight failed: ${pre.reason}` } };
      const pulses = await run.records.pulses(id);
      const next = pulses.find((p) => p.status === "running") ?? pulses.find((p) => p.status === "proposed");
      if (!next) return { workflow_id: id, pulse_id: null, number: 0, end: { action: "stop", status: "completed", reason: `all ${pulses.length} pulses succeeded: the workflow branch ${run.workflow.branch_name} is ready for review` } };
      return { workflow_id: id, pulse_id: next.id, number: next.number };
    },

    prepare_worktree: async (ctx): Promise<PreparedPulse> => {
      const run = runOf(runs, ctx);
      const s = ctx.input as SelectedPulse;
      const p = await pulseOf(run, s.pulse_id);
      if (!p) return { ...s, action_id: `prepare_${run.workflow.id}_end`, status: "skipped", causal_parent_ids: [], branch: null, base: null };
      const branch = p.pulse_branch ?? pulseBranch(run.workflow.branch_name, p.number);
      const { base, created } = await openPulseBranch(run.workflow.worktree_path, run.workflow.branch_name, branch);
      if (p.status === "proposed") {
        await run.records.updatePulse(p.id, { status: "running", pulse_branch: branch, worktree_path: run.workflow.worktree_path, started_at: new Date().toISOString(), initiating_message_id: randomUUID() });
        run.emit({ type: "pulse.started", workflow_id: run.workflow.id, pulse: p.number, title: p.title, branch, created });
      }
      return { ...s, action_id: `prepare_${p.id}_${p.turns + 1}`, status: "success", causal_parent_ids: [], branch, base };
    },

    run_pulse: async (ctx): Promise<PulseTurn> => {
      const run = runOf(runs, ctx);
      const x = ctx.input as PreparedPulse;
      const p = await pulseOf(run, x.pulse_id);
      if (!p) return { ...x, action_id: `turn_${run.workflow.id}_end`, turn: 0, result: null, tools: [] };
      const w = run.workflow;
      const turn = p.turns + 1;
      // Counted before the call: a runner killed during it has spent the turn.
      await run.records.updatePulse(p.id, { turns: turn });
      run.workflow = await run.records.update(w.id, { turns: w.turns + 1 });
      const total = (await run.records.pulses(w.id)).length;
      const escape = p.rejections >= run.profile.limits.maxRejections;
      // The gate, before the turn: a pending guidance change holds the pulse, and this turn replans.
      // Its files are one of the workflow's artifacts: never committed, the user's repository's exclude file untouched.
      if (!run.guidance) {
        run.guidance = await GuidanceGate.open(w.worktree_path, undefined, { gitExclude: false });
        // Steers given while the workflow had no worktree go in now.
        await applyDeferredSteers(run.records, w.id, run.guidance, { workflow_id: w.id });
      }
      if (!w.artifacts.includes(GUIDANCE_ARTIFACT) && !(await ignored(w.worktree_path, GUIDANCE_ARTIFACT))) run.workflow = await run.records.update(w.id, { artifacts: [...w.artifacts, GUIDANCE_ARTIFACT] });
      const replan = (await run.guidance.held()) ?? undefined;
      if (replan) {
        await phaseAuditSink(ctx)("guidance.held", { event_id: replan.event_id, files: replan.files, pulse: p.number, turn });
        run.emit({ type: "guidance.held", workflow_id: w.id, pulse: p.number, turn, event_id: replan.event_id, files: replan.files });
      }
      const pulseBrief = pulsePrompt(w, p, total, { feedback: p.feedback, escape });
      const calls = new Map<string, ToolCall>();
      const tools: ToolOutcome[] = [];
      const d = run.profile.runPulse;
      const driver = run.driverFor("run_pulse");
      const recording = await recordProcesses(run.processes, w.id, run.workflow.turns, "pulse-workflow");
      run.emit({ type: "turn.started", workflow_id: w.id, pulse: p.number, turn });
      let result: AgentResult;
      try {
        result = await driver.run(
          {
            prompt: replan ? `${replanBriefing(replan, "Then end the turn without pulse_done: the pulse goes on in the next turn, under the new plan.")}\n\nThe pulse you are replanning (as it was given before the change):\n\n${pulseBrief}` : pulseBrief,
            cwd: w.worktree_path,
            loopId: WORKFLOW_LOOP_ID,
            phaseId: "run_pulse",
            iteration: run.workflow.turns,
            terminalTools: replan ? [PULSE_ACK_REPLAN_TOOL] : [pulseDoneTool(escape), REQUEST_EXTENSION_TOOL],
            ...((w.driver.timeoutMs ?? d.timeoutMs) ? { timeoutMs: (w.driver.timeoutMs ?? d.timeoutMs)! } : {}),
            ...(d.silenceTimeoutMs ? { silenceTimeoutMs: d.silenceTimeoutMs } : {}),
            ...(d.maxTurns ? { maxTurns: d.maxTurns } : {}),
            ...((w.driver.model ?? d.model) ? { model: (w.driver.model ?? d.model)! } : {}),
          },
          {
            signal: AbortSignal.any([run.controller.signal, ctx.signal]),
            onEvent: (event) => {
              if (event.type === "tool_call") calls.set(event.call.id, event.call);
              if (event.type === "tool_result") {
                const call = calls.get(event.id);
                const path = call && typeof (call.arguments.path ?? call.arguments.filePath) === "string" ? String(call.arguments.path ?? call.arguments.filePath) : undefined;
                tools.push({ name: event.name ?? call?.name ?? "tool", ok: event.ok, output: event.output, ...(path ? { path } : {}) });
              }
              run.emit({ type: "agent", workflow_id: w.id, pulse: p.number, turn, event });
            },
            onSpawn: recording.onSpawn,
            marker: recording.marker,
          },
        );
      } finally {
        await recording.done();
      }
      return { ...x, action_id: `turn_${p.id}_${turn}`, status: "success", causal_parent_ids: [], turn, result, tools, ...(replan ? { replan } : {}) };
    },

    validate_completion: async (ctx): Promise<CompletionVerdict> => {
      const run = runOf(runs, ctx);
      const t = ctx.input as PulseTurn;
      const p = await pulseOf(run, t.pulse_id);
      if (!p || !t.result) return { ...t, next: "record_outcome", decision: "end", verdict: null, gate: null, files: [], rebaseline: null };
      const w = run.workflow;
      const aborted = run.controller.signal.aborted || run.stopping !== undefined;
      const files = await changedSince(w.worktree_path, t.base!, w.artifacts);
      if (t.replan) {
        // A replan turn is judged on its acknowledgement only: a pulse_done in it is not a completion.
        const ack = await run.guidance!.settle(t.replan, t.result.toolCalls);
        const verdict = judgeReplan({ status: t.result.status, ...(t.result.error ? { error: t.result.error.message } : {}), aborted, accepted: ack.accepted, reason: ack.reason, rejections: p.rejections, nudges: p.nudges, feedback: p.feedback, limits: run.profile.limits });
        const ends = verdict.decision === "fail" || verdict.decision === "stop";
        return { ...t, next: ends ? "checkpoint" : "record_outcome", decision: verdict.decision, verdict, gate: null, files, rebaseline: null, ack };
      }
      const completion = completionOf(t.result.toolCalls);
      // Done means verified: the gate runs on a completion only, against the preflight's baselines.
      let gate: GateVerdict | null = null;
      let checks: CheckRun[] = [];
      if (completion && !aborted && t.result.status === "ok" && w.verify.checks.length > 0) {
        const recording = await recordProcesses(run.processes, w.id, w.turns, "pulse-workflow");
        checks = await run.checks(w.verify.checks, { cwd: w.worktree_path, timeoutMs: run.profile.validate.checksTimeoutMs, signal: run.controller.signal, onSpawn: recording.onSpawn, marker: recording.marker }).finally(recording.done);
        gate = excuseKnown(compareToBaseline(checks, w.verify.baseline ?? []), await run.records.baselines(w.id));
      }
      const verdict = judgeTurn({
        status: t.result.status,
        ...(t.result.error ? { error: t.result.error.message } : {}),
        aborted: aborted || run.controller.signal.aborted,
        ...(completion ? { completion } : {}),
        ...(extensionOf(t.result.toolCalls) ? { extension: extensionOf(t.result.toolCalls)! } : {}),
        failures: standingFailures(t.tools),
        gate,
        turns: t.turn,
        rejections: p.rejections,
        nudges: p.nudges,
        limits: run.profile.limits,
      });
      const ends = verdict.decision === "accept" || verdict.decision === "fail" || verdict.decision === "stop";
      const rebaseline = verdict.decision === "accept" && verdict.unresolvedIssues.length > 0 && gate && !gate.passed ? checks.map(baselineOf) : null;
      return { ...t, next: ends ? "checkpoint" : "record_outcome", decision: verdict.decision, verdict, gate, files, rebaseline };
    },

    checkpoint: async (ctx): Promise<Checkpoint> => {
      const run = runOf(runs, ctx);
      const v = ctx.input as CompletionVerdict;
      const p = (await pulseOf(run, v.pulse_id))!;
      const w = run.workflow;
      if (v.decision === "accept") {
        const commit = await landPulse(w.worktree_path, w.branch_name, v.branch!, v.base!, commitMessage(run, p, v.verdict!), w.artifacts);
        return { ...v, action_id: `checkpoint_${p.id}`, status: "success", causal_parent_ids: [], commit, recovery: false };
      }
      const why = v.decision === "stop" ? `pulse ${p.number} stopped: ${run.stopping ?? "stop requested"}` : `pulse ${p.number} failed: ${v.verdict?.reason ?? "unknown"}`;
      const commit = await shelvePulse(w.worktree_path, w.branch_name, `${why}\n\nPulse-Workflow: ${w.id}\nPulse: ${p.number}`, w.artifacts);
      return { ...v, action_id: `checkpoint_${p.id}`, status: "success", causal_parent_ids: [], commit, recovery: commit !== null };
    },

    record_outcome: async (ctx): Promise<Outcome> => {
      const run = runOf(runs, ctx);
      const x = ctx.input as Partial<Checkpoint> & CompletionVerdict;
      const w = run.workflow;
      const base = { workflow_id: w.id, action_id: x.action_id, causal_parent_ids: [] as string[] };
      if (x.end) return { ...base, status: "partial", workflow: x.end };
      const p = await pulseOf(run, x.pulse_id);
      if (!p || !x.result || !x.verdict) return { ...base, status: "partial", workflow: { action: "stop", status: "completed", reason: "nothing left to run" } };
      const r = x.result;
      const entry = await run.ledger.record({ loopId: WORKFLOW_LOOP_ID, sessionId: w.id, iteration: w.turns, driver: run.driverFor("run_pulse").name, ...(r.model ? { model: r.model } : {}), ...(r.usage ? { usage: r.usage } : {}), ...(r.costUsd !== undefined ? { costUsd: r.costUsd } : {}) }, phaseAuditSink(ctx));
      const v = x.verdict;
      const now = new Date().toISOString();
      if (x.ack) {
        await phaseAuditSink(ctx)(x.ack.accepted ? "guidance.acknowledged" : "guidance.ack_refused", { event_id: x.ack.event_id, accepted: x.ack.accepted, acknowledged_event_id: x.ack.acknowledged_event_id, plan_sha256: x.ack.plan_sha256, via: x.ack.via, reason: x.ack.reason, pulse: p.number, turn: x.turn });
        run.emit({ type: "guidance.acknowledged", workflow_id: w.id, pulse: p.number, turn: x.turn, ack: x.ack });
      }
      const ended = v.decision === "accept" ? "succeeded" : v.decision === "fail" ? "failed" : v.decision === "stop" ? "stopped" : null;
      const pulse = await run.records.updatePulse(p.id, {
        rejections: v.rejections,
        nudges: v.nudges,
        extensions: p.extensions + v.extensions,
        feedback: v.feedback,
        gate: x.gate ?? p.gate,
        files_changed: x.files,
        tokens_used: p.tokens_used + entry.tokens,
        cost_usd: p.cost_usd + entry.costUsd,
        ...(ended ? { status: ended, ended_at: now, checkpoint_commit_sha: x.commit ?? null, is_recovery_checkpoint: x.recovery === true } : {}),
        ...(ended === "succeeded" ? { summary: v.summary, has_unresolved_issues: v.unresolvedIssues.length > 0, unresolved_issues: v.unresolvedIssues } : {}),
        ...(ended === "failed" || ended === "stopped" ? { failure_reason: v.reason } : {}),
      });
      // The issues a person is asked to review are known from now on: later pulses are not blamed for them.
      run.workflow = await run.records.update(w.id, { total_tokens_used: w.total_tokens_used + entry.tokens, total_cost_usd: w.total_cost_usd + entry.costUsd, ...(x.rebaseline ? { verify: { ...w.verify, baseline: x.rebaseline } } : {}) });
      run.emit({ type: "turn.finished", workflow_id: w.id, pulse: p.number, turn: x.turn, decision: v.decision, reason: v.reason, files: x.files, gate: x.gate, commit: x.commit ?? null, receipt: entry, pulse_status: pulse.status });
      const workflow = ((): WorkflowDecision => {
        if (ended === "succeeded" && pulse.has_unresolved_issues) return { action: "stop", status: "halted", reason: `pulse ${p.number} succeeded with unresolved issues (${pulse.unresolved_issues.map((i) => i.issue).join("; ")}): review them, then pulse workflow resume ${w.id.slice(0, 8)}` };
        if (ended === "failed") return { action: "stop", status: "halted", reason: `pulse ${p.number} failed: ${v.reason}; its branch ${x.branch} is kept${x.commit ? ` (recovery commit ${x.commit.slice(0, 8)})` : ""}: fix or retry with pulse workflow resume ${w.id.slice(0, 8)}` };
        if (ended === "stopped") return { action: "stop", status: "stopped", reason: `stopped during pulse ${p.number}${x.commit ? `; its work is kept in recovery commit ${x.commit.slice(0, 8)} on ${x.branch}` : ""}` };
        if (v.decision === "halt") return { action: "stop", status: "halted", reason: v.reason! };
        const cap = run.profile.limits.maxCostUsd;
        if (cap !== undefined && run.workflow.total_cost_usd >= cap) return { action: "stop", status: "halted", reason: `the workflow has spent $${run.workflow.total_cost_usd.toFixed(2)}, its cap is $${cap} (limits.maxCostUsd)` };
        return { action: "continue" };
      })();
      return { ...base, status: ended === "succeeded" ? "success" : ended ? "failure" : "partial", workflow };
    },
  };
}
