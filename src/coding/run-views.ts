/**
 * Each loop's records as the common run view (run-records.ts), in TypeScript: what the memory
 * implementation is, and what the SQL views (adapters/sqlite/run-records.ts,
 * adapters/postgres/run-schema.ts) compute the same way (the contract test holds them to the same
 * answers). The payload keys are listed once here; the SQL views are built from these lists.
 */
import type { AgentRunRecord, AgentRunRecords, AgentStepRecord } from "./agent/run-records.js";
import { byNewest, LOOP_OF, shownRun, type RunFilter, type RunKind, type RunRecords, type RunStepView, type RunView } from "./run-records.js";
import type { IterationRecord, SessionRecord, SessionRecords } from "./session/records.js";
import type { PulseRecord, WorkflowRecord, WorkflowRecords } from "./workflow/records.js";

/** The loop's own fields each kind's payload carries (JSON columns marked), the same in every implementation. */
export const PAYLOAD_KEYS = {
  session: { keys: ["project_name", "repo_path", "branch_name", "worktree_path", "base_ref", "base_sha", "driver", "context_strategy", "control", "created_by", "max_cost_usd", "max_tokens", "max_wall_ms"], json: ["driver"] },
  workflow: { keys: ["plan_path", "repo_path", "base_ref", "base_sha", "base_note", "branch_name", "worktree_path", "merge", "driver", "control", "turns", "artifacts"], json: ["driver", "artifacts"] },
  agent: { keys: ["mode", "workdir", "report_path", "actions_used", "max_actions"], json: [] },
  iteration: { keys: ["signal_source", "signal_reason", "anchor_strategy", "context_tokens", "receipt"], json: ["receipt"] },
  pulse: { keys: ["planned_pulse_id", "description", "pulse_branch", "turns", "rejections", "nudges", "extensions", "is_recovery_checkpoint", "has_unresolved_issues", "unresolved_issues", "feedback"], json: ["unresolved_issues"], bool: ["is_recovery_checkpoint", "has_unresolved_issues"] },
  step: { keys: ["decision", "action", "action_run_id", "args", "feedback", "advisory_reason", "progress"], json: ["decision", "args", "feedback", "progress"] },
} as const;

/** Session statuses nothing continues without a person: their last update is when they ended. */
export const SESSION_ENDED = ["complete", "aborted", "failed", "blocked"] as const;
/** Pulses that ran to an end (a workflow's iteration count). */
export const PULSES_DONE = ["succeeded", "failed", "stopped"] as const;

function pick(record: object, keys: readonly string[]): Record<string, unknown> {
  const r = record as Record<string, unknown>;
  return Object.fromEntries(keys.map((k) => [k, r[k] ?? null]));
}

const uniqueSorted = (lists: readonly (readonly string[])[]): string[] => [...new Set(lists.flat())].sort();
const commitsOf = (shas: readonly (string | null)[]): string[] => shas.filter((s): s is string => s !== null);

export function sessionRunView(s: SessionRecord, iterations: readonly IterationRecord[]): RunView {
  return {
    kind: "session",
    id: s.id,
    loop_id: LOOP_OF.session,
    status: s.status,
    goal: s.goal,
    iteration: s.current_iteration,
    max_iterations: s.max_iterations,
    signal: s.last_signal,
    commits: commitsOf(iterations.map((i) => i.commit_hash)),
    files_changed: uniqueSorted(iterations.map((i) => i.files_changed)),
    tokens: s.total_tokens_used,
    cost_usd: s.total_cost_usd,
    stop_reason: s.stop_reason,
    status_reason: s.status_reason,
    runner_pid: s.runner_pid,
    created_at: s.created_at,
    updated_at: s.updated_at,
    finished_at: (SESSION_ENDED as readonly string[]).includes(s.status) ? s.updated_at : null,
    payload: pick(s, PAYLOAD_KEYS.session.keys),
  };
}

export function workflowRunView(w: WorkflowRecord, pulses: readonly PulseRecord[]): RunView {
  return {
    kind: "workflow",
    id: w.id,
    loop_id: LOOP_OF.workflow,
    status: w.status,
    goal: w.title,
    iteration: pulses.filter((p) => (PULSES_DONE as readonly string[]).includes(p.status)).length,
    max_iterations: pulses.length,
    signal: null,
    commits: commitsOf(pulses.map((p) => p.checkpoint_commit_sha)),
    files_changed: uniqueSorted(pulses.map((p) => p.files_changed)),
    tokens: w.total_tokens_used,
    cost_usd: w.total_cost_usd,
    stop_reason: null,
    status_reason: w.status_reason,
    runner_pid: w.runner_pid,
    created_at: w.created_at,
    updated_at: w.updated_at,
    finished_at: w.finished_at,
    payload: pick(w, PAYLOAD_KEYS.workflow.keys),
  };
}

export function agentRunView(a: AgentRunRecord): RunView {
  return {
    kind: "agent",
    id: a.id,
    loop_id: LOOP_OF.agent,
    status: a.status,
    goal: a.request,
    iteration: a.iteration,
    max_iterations: a.max_iterations,
    signal: a.last_signal,
    commits: [],
    files_changed: [],
    tokens: a.tokens_used,
    cost_usd: 0,
    stop_reason: a.reason,
    status_reason: a.message,
    runner_pid: a.runner_pid,
    created_at: a.created_at,
    updated_at: a.updated_at,
    finished_at: a.finished_at,
    payload: pick(a, PAYLOAD_KEYS.agent.keys),
  };
}

export function iterationStepView(i: IterationRecord): RunStepView {
  return { kind: "session", run_id: i.session_id, number: i.iteration_number, status: i.status, task: i.task_content, signal: i.signal, summary: i.output_summary, commit: i.commit_hash, files_changed: i.files_changed, gate: i.gate, tokens: i.tokens_used, cost_usd: i.cost_usd, error: i.error, started_at: i.started_at, finished_at: i.finished_at, payload: pick(i, PAYLOAD_KEYS.iteration.keys) };
}

export function pulseStepView(p: PulseRecord): RunStepView {
  return { kind: "workflow", run_id: p.workflow_id, number: p.number, status: p.status, task: p.title, signal: null, summary: p.summary, commit: p.checkpoint_commit_sha, files_changed: p.files_changed, gate: p.gate, tokens: p.tokens_used, cost_usd: p.cost_usd, error: p.failure_reason, started_at: p.started_at, finished_at: p.ended_at, payload: pick(p, PAYLOAD_KEYS.pulse.keys) };
}

export function agentStepView(s: AgentStepRecord): RunStepView {
  return {
    kind: "agent",
    run_id: s.run_id,
    number: s.number,
    status: s.action_status ?? s.decision?.type ?? "none",
    task: s.plan_step ?? "",
    signal: s.advisory_status,
    summary: s.result,
    commit: null,
    files_changed: [],
    gate: null,
    tokens: s.tokens_used,
    cost_usd: 0,
    error: s.action_status === "error" ? s.result : null,
    started_at: s.started_at,
    finished_at: s.finished_at,
    payload: pick(s, PAYLOAD_KEYS.step.keys),
  };
}

/** The loops' records a composed view reads; a kind without its records lists nothing. */
export interface RunSources {
  sessions?: SessionRecords;
  workflows?: WorkflowRecords;
  agents?: AgentRunRecords;
}

/** The common view over each loop's own records contract (the memory implementation). */
export class ComposedRunRecords implements RunRecords {
  constructor(private readonly sources: RunSources) {}

  async list(filter: RunFilter = {}): Promise<RunView[]> {
    const want = (k: RunKind) => filter.kind === undefined || filter.kind === k;
    const { sessions, workflows, agents } = this.sources;
    const out: RunView[] = [];
    if (sessions && want("session")) for (const s of await sessions.list()) out.push(sessionRunView(s, await sessions.iterations(s.id)));
    if (workflows && want("workflow")) for (const w of await workflows.list()) out.push(workflowRunView(w, await workflows.pulses(w.id)));
    if (agents && want("agent")) for (const a of await agents.list()) out.push(agentRunView(a));
    return out.sort(byNewest).map(shownRun);
  }

  async get(kind: RunKind, id: string): Promise<RunView | undefined> {
    const { sessions, workflows, agents } = this.sources;
    if (kind === "session" && sessions) {
      const s = await sessions.get(id);
      return s && shownRun(sessionRunView(s, await sessions.iterations(s.id)));
    }
    if (kind === "workflow" && workflows) {
      const w = await workflows.get(id);
      return w && shownRun(workflowRunView(w, await workflows.pulses(w.id)));
    }
    if (kind === "agent" && agents) {
      const a = await agents.get(id);
      return a && shownRun(agentRunView(a));
    }
    return undefined;
  }

  async steps(kind: RunKind, runId: string): Promise<RunStepView[]> {
    const { sessions, workflows, agents } = this.sources;
    if (kind === "session" && sessions) return (await sessions.iterations(runId)).map(iterationStepView);
    if (kind === "workflow" && workflows) return (await workflows.pulses(runId)).map(pulseStepView);
    if (kind === "agent" && agents) return (await agents.steps(runId)).map(agentStepView);
    return [];
  }

  async close(): Promise<void> {
    // The sources are their owners' to close.
  }
}
