/**
 * The pulsing workflow's records: the workflow (its plan, repository, branches, worktree, the
 * driver, the checks and their baselines, what steers it), seed 001's `Pulse`, `PreflightSetup`
 * and `PreflightBaseline`, and the workflow's event stream. A narrow contract: the workflow loop
 * depends on it; the SQLite implementation (the shared `.pulse/pulse.db`) is in adapters/sqlite.
 */
import type { CheckBaseline, GateVerdict, PatternBaseline } from "../gate.js";

/**
 * `halted`: orchestration stopped for a person (a pulse failed, or succeeded with unresolved
 * issues); `resume` goes on. `abandoned`: the preflight failed; nothing is kept. `interrupted`
 * is never stored: it is how a `running` workflow whose runner is gone is shown.
 */
export type WorkflowStatus = "pending" | "running" | "halted" | "stopped" | "failed" | "abandoned" | "completed" | "interrupted";
export type PulseStatus = "proposed" | "running" | "succeeded" | "failed" | "stopped";

export interface WorkflowDriver {
  name: string;
  script?: string;
  model?: string;
  timeoutMs?: number;
}

export type MergeMode = "ff" | "squash" | "rebase";
export const MERGE_MODES: readonly MergeMode[] = ["ff", "squash", "rebase"];

export interface WorkflowRecord {
  id: string;
  title: string;
  plan_path: string | null;
  repo_path: string;
  /** The base as the user named it, and its commit when the workflow started. */
  base_ref: string;
  base_sha: string;
  /** Where the local base stood against its upstream at the start (`behind by 3`), null when it has none or is level. */
  base_note: string | null;
  branch_name: string;
  worktree_path: string;
  /** How the workflow branch goes into the base branch when every pulse succeeded (null: left for review). */
  merge: MergeMode | null;
  driver: WorkflowDriver;
  status: WorkflowStatus;
  status_reason: string | null;
  control: "stop" | null;
  runner_pid: number | null;
  /** Iterations (agent turns) run so far, over all pulses and resumes. */
  turns: number;
  /** The checks every pulse is held to (--verify, then the preflight's), and their baselines once taken. */
  verify: { checks: string[]; baseline?: CheckBaseline[] };
  /** Untracked paths the preflight made (node_modules, build output): never part of a pulse's commit. */
  artifacts: string[];
  total_tokens_used: number;
  total_cost_usd: number;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface UnresolvedIssue {
  issue: string;
  reason: string;
}

/** Seed 001's Pulse, with what a restarted runner needs to continue it (turn counts, the feedback owed). */
export interface PulseRecord {
  id: string;
  workflow_id: string;
  /** 1-based position in the plan. */
  number: number;
  planned_pulse_id: string | null;
  title: string;
  /** What the plan asks of this pulse. */
  description: string;
  status: PulseStatus;
  initiating_message_id: string | null;
  checkpoint_commit_sha: string | null;
  /** The accepted summary: the commit message. */
  summary: string | null;
  pulse_branch: string | null;
  worktree_path: string | null;
  has_unresolved_issues: boolean;
  unresolved_issues: UnresolvedIssue[];
  is_recovery_checkpoint: boolean;
  files_changed: string[];
  turns: number;
  rejections: number;
  nudges: number;
  extensions: number;
  /** What the next turn of this pulse is told (a rejection's reasons, a nudge, "Continue."). */
  feedback: string | null;
  /** The gate's last verdict on this pulse. */
  gate: GateVerdict | null;
  tokens_used: number;
  cost_usd: number;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  failure_reason: string | null;
}

export type PreflightStatus = "running" | "completed" | "failed";

export interface PreflightSetup {
  id: string;
  workflow_id: string;
  status: PreflightStatus;
  progress_message: string | null;
  error_message: string | null;
  summary: string | null;
  setup_commands: string[];
  build_success: boolean | null;
  created_at: string;
  completed_at: string | null;
}

export interface PreflightBaseline extends PatternBaseline {
  id: string;
  workflow_id: string;
}

export interface WorkflowEventRecord {
  seq: number;
  at: string;
  type: string;
  data: unknown;
}

export type NewWorkflow = Pick<WorkflowRecord, "id" | "title" | "plan_path" | "repo_path" | "base_ref" | "base_sha" | "base_note" | "branch_name" | "worktree_path" | "driver" | "verify"> & Partial<Pick<WorkflowRecord, "merge">>;
export type WorkflowPatch = Partial<Omit<WorkflowRecord, "id" | "created_at" | "updated_at">>;
export type NewPulse = Pick<PulseRecord, "id" | "workflow_id" | "number" | "title" | "description"> & Partial<Pick<PulseRecord, "planned_pulse_id">>;
export type PulsePatch = Partial<Omit<PulseRecord, "id" | "workflow_id" | "number" | "created_at">>;

export class WorkflowRecordsError extends Error {
  constructor(
    readonly code: "NOT_FOUND" | "EXISTS" | "INVALID",
    message: string,
  ) {
    super(message);
    this.name = "WorkflowRecordsError";
  }
}

export interface WorkflowRecords {
  /** The workflow and its planned pulses, in one transaction. */
  create(workflow: NewWorkflow, pulses: Omit<NewPulse, "workflow_id">[]): Promise<WorkflowRecord>;
  /** By id or a unique prefix of at least 4 characters. */
  get(id: string): Promise<WorkflowRecord | undefined>;
  /** Newest first. */
  list(): Promise<WorkflowRecord[]>;
  update(id: string, patch: WorkflowPatch): Promise<WorkflowRecord>;
  pulses(workflowId: string): Promise<PulseRecord[]>;
  updatePulse(id: string, patch: PulsePatch): Promise<PulseRecord>;
  preflight(workflowId: string): Promise<PreflightSetup | undefined>;
  /** Creates or replaces the workflow's preflight record. */
  putPreflight(setup: PreflightSetup): Promise<PreflightSetup>;
  addBaselines(baselines: PreflightBaseline[]): Promise<void>;
  baselines(workflowId: string): Promise<PreflightBaseline[]>;
  appendEvents(workflowId: string, events: Omit<WorkflowEventRecord, "seq">[]): Promise<number>;
  events(workflowId: string, afterSeq?: number, limit?: number): Promise<WorkflowEventRecord[]>;
  close(): Promise<void>;
}

export function newWorkflowRecord(w: NewWorkflow, now: string): WorkflowRecord {
  return { merge: null, ...w, status: "pending", status_reason: null, control: null, runner_pid: null, turns: 0, artifacts: [], total_tokens_used: 0, total_cost_usd: 0, created_at: now, updated_at: now, finished_at: null };
}

export function newPulseRecord(p: NewPulse, now: string): PulseRecord {
  return {
    planned_pulse_id: null,
    status: "proposed",
    initiating_message_id: null,
    checkpoint_commit_sha: null,
    summary: null,
    pulse_branch: null,
    worktree_path: null,
    has_unresolved_issues: false,
    unresolved_issues: [],
    is_recovery_checkpoint: false,
    files_changed: [],
    turns: 0,
    rejections: 0,
    nudges: 0,
    extensions: 0,
    feedback: null,
    gate: null,
    tokens_used: 0,
    cost_usd: 0,
    created_at: now,
    started_at: null,
    ended_at: null,
    failure_reason: null,
    ...p,
  };
}

/** Workflows nothing can continue: their worktree may go (`pulse workflow clean`). */
export function isFinished(status: WorkflowStatus): boolean {
  return status === "completed" || status === "abandoned";
}
