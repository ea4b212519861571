/**
 * The session records: what a coding session (seed 000's `pulse_sessions`) and each of its
 * iterations (`pulse_iterations`) keep, every column of the seed's tables plus what a runner
 * needs to survive a crash and be steered from another process (its pid, a control request).
 * A narrow contract: the session loop depends on it, implementations live in adapters/
 * (memory, SQLite in the shared `.pulse/pulse.db`).
 */
import type { CheckBaseline, GateVerdict } from "../gate.js";
import type { Signal, SignalSource } from "../signals.js";
import type { StopReason } from "../limits.js";
import type { LedgerEntry } from "../cost-ledger.js";

/**
 * `interrupted` is never stored: it is what a `running` session whose runner process is gone is
 * shown as (CLI, REST, MCP), so the displayed status is never a lie.
 */
export type SessionStatus = "pending" | "running" | "complete" | "blocked" | "failed" | "aborted" | "paused" | "interrupted";
export const SESSION_STATUSES: readonly SessionStatus[] = ["pending", "running", "complete", "blocked", "failed", "aborted", "paused", "interrupted"];

export type IterationStatus = "pending" | "dispatched" | "running" | "complete" | "rejected" | "failed" | "timeout" | "rate_limited";
export const ITERATION_STATUSES: readonly IterationStatus[] = ["pending", "dispatched", "running", "complete", "rejected", "failed", "timeout", "rate_limited"];

export type AnchorStrategy = "chained" | "explicit" | "semantic" | "temporal" | "none";
export type ContextStrategy = "none" | "prefetch" | "mcp" | "hybrid";
export const CONTEXT_STRATEGIES: readonly ContextStrategy[] = ["none", "prefetch", "mcp", "hybrid"];

/** A request from another process to the runner of a session, observed between polls. */
export type ControlRequest = "pause" | "abort";

export type CreatedBy = "cli" | "api" | "mcp" | "telegram" | "sms";

export interface ProgressEntry {
  iteration: number;
  /** NONE: the turn failed, timed out or was aborted, so the agent said nothing of its work. */
  signal: Signal | "NONE";
  summary: string;
  commit: string | null;
}

export interface SessionRecord {
  // The seed's pulse_sessions columns.
  id: string;
  project_name: string;
  goal: string;
  max_iterations: number;
  current_iteration: number;
  status: SessionStatus;
  last_signal: Signal | null;
  progress_log: ProgressEntry[];
  anchor_turn_id: string | null;
  branch_name: string | null;
  created_by: CreatedBy;
  total_commits: number;
  total_tokens_used: number;
  // Ours: where and how it runs, and what steers it.
  repo_path: string;
  /** The driver and its settings, so another process can resume the session (`{name, script?}`). */
  driver: DriverConfig;
  context_strategy: ContextStrategy;
  total_cost_usd: number;
  stop_reason: StopReason | null;
  /** Why it stopped, blocked or failed, in words. */
  status_reason: string | null;
  control: ControlRequest | null;
  /** The process running it, while one does. */
  runner_pid: number | null;
  /** The session's own git worktree (outside the repository), or null when it works in the user's checkout (--in-place). */
  worktree_path: string | null;
  /** What its branch was created from, as the user named it (a branch, a ref, or HEAD's commit when detached). */
  base_ref: string | null;
  /** The commit its branch was created from. */
  base_sha: string | null;
  /** The checks pulse runs itself (--verify), and their baseline once taken; null: none. */
  verify: VerifyConfig | null;
  /** Budgets: reaching one pauses the session after the turn (null: the profile's limit, if any). Spend counts across resumes. */
  max_cost_usd: number | null;
  max_tokens: number | null;
  /** The time its turns may take in all, across resumes (from the iterations' records). */
  max_wall_ms: number | null;
  created_at: string;
  updated_at: string;
}

export interface VerifyConfig {
  checks: string[];
  /** Run the checks after every iteration, not only on a COMPLETE. */
  each: boolean;
  /** Each check's exit and failures before the first turn. */
  baseline?: CheckBaseline[];
}

export interface DriverConfig {
  name: string;
  script?: string;
  model?: string;
  /** A turn's wall-clock and silence limits given for this session (--turn-timeout, --silence-timeout). */
  timeoutMs?: number;
  silenceTimeoutMs?: number;
}

export interface IterationRecord {
  // The seed's pulse_iterations columns.
  id: string;
  session_id: string;
  iteration_number: number;
  inbox_task_id: string | null;
  task_content: string;
  status: IterationStatus;
  signal: Signal | null;
  output_summary: string | null;
  output_full: string | null;
  commit_hash: string | null;
  files_changed: string[];
  anchor_turn_id: string | null;
  anchor_strategy: AnchorStrategy | null;
  anchor_hint_next: string | null;
  context_tokens: number;
  slice_id: string | null;
  // Ours: how the signal and the anchor were found, what it cost, when.
  signal_source: SignalSource | null;
  signal_reason: string | null;
  anchor_resolution_ms: number | null;
  anchor_salience: number | null;
  anchor_depth: number | null;
  tokens_used: number;
  cost_usd: number;
  error: string | null;
  /** The checks' verdict on this iteration (on a COMPLETE, or every iteration with --verify-each). */
  gate: GateVerdict | null;
  /** What the turn cost, itemised: the model, tokens by kind, dollars and where the price came from. */
  receipt: IterationReceipt | null;
  started_at: string;
  finished_at: string | null;
}

/** An iteration's receipt (the cost ledger's entry for its turn, without what the record already says). */
export type IterationReceipt = Pick<LedgerEntry, "driver" | "model" | "usage" | "tokens" | "costUsd" | "costSource">;

export type NewSession = Pick<SessionRecord, "id" | "project_name" | "goal" | "max_iterations" | "repo_path" | "driver" | "context_strategy" | "created_by"> &
  Partial<Pick<SessionRecord, "anchor_turn_id" | "branch_name" | "worktree_path" | "base_ref" | "base_sha" | "verify" | "max_cost_usd" | "max_tokens" | "max_wall_ms">>;

export type SessionPatch = Partial<Omit<SessionRecord, "id" | "created_at" | "updated_at">>;
export type IterationPatch = Partial<Omit<IterationRecord, "id" | "session_id" | "iteration_number">>;
export type NewIteration = Pick<IterationRecord, "id" | "session_id" | "iteration_number" | "task_content"> & IterationPatch;

/** One event of a session's stream as kept: `data` is the event itself (JSON). */
export interface SessionEventRecord {
  seq: number;
  at: string;
  type: string;
  data: unknown;
}
export type NewSessionEventRecord = Omit<SessionEventRecord, "seq">;
export const EVENTS_PAGE = 500;

export class SessionRecordsError extends Error {
  constructor(
    readonly code: "NOT_FOUND" | "EXISTS" | "INVALID",
    message: string,
  ) {
    super(message);
    this.name = "SessionRecordsError";
  }
}

export interface SessionRecords {
  create(session: NewSession): Promise<SessionRecord>;
  /** Undefined when there is none with this id (or unique id prefix). */
  get(id: string): Promise<SessionRecord | undefined>;
  /** Newest first; only those with `status` when given. */
  list(filter?: { status?: SessionStatus }): Promise<SessionRecord[]>;
  /** Changes the given fields; fails with NOT_FOUND for an unknown id. */
  update(id: string, patch: SessionPatch): Promise<SessionRecord>;
  /** Sets (or clears) the control request a runner observes; NOT_FOUND for an unknown id. */
  requestControl(id: string, control: ControlRequest | null): Promise<SessionRecord>;
  addIteration(iteration: NewIteration): Promise<IterationRecord>;
  updateIteration(id: string, patch: IterationPatch): Promise<IterationRecord>;
  /** A session's iterations in order of iteration_number. */
  iterations(sessionId: string): Promise<IterationRecord[]>;
  /**
   * Appends to the session's event stream, numbering the events on from its last (seq 1 first);
   * returns the last seq. NOT_FOUND for an unknown session. One writer per session (its runner).
   */
  appendEvents(sessionId: string, events: NewSessionEventRecord[]): Promise<number>;
  /** The session's events with seq > afterSeq, in order, at most `limit` (default 500). */
  events(sessionId: string, afterSeq?: number, limit?: number): Promise<SessionEventRecord[]>;
  close(): Promise<void>;
}

export function newSessionRecord(s: NewSession, now: string): SessionRecord {
  return {
    id: s.id,
    project_name: s.project_name,
    goal: s.goal,
    max_iterations: s.max_iterations,
    current_iteration: 0,
    status: "pending",
    last_signal: null,
    progress_log: [],
    anchor_turn_id: s.anchor_turn_id ?? null,
    branch_name: s.branch_name ?? null,
    created_by: s.created_by,
    total_commits: 0,
    total_tokens_used: 0,
    repo_path: s.repo_path,
    driver: s.driver,
    context_strategy: s.context_strategy,
    total_cost_usd: 0,
    stop_reason: null,
    status_reason: null,
    control: null,
    runner_pid: null,
    worktree_path: s.worktree_path ?? null,
    base_ref: s.base_ref ?? null,
    base_sha: s.base_sha ?? null,
    verify: s.verify ?? null,
    max_cost_usd: s.max_cost_usd ?? null,
    max_tokens: s.max_tokens ?? null,
    max_wall_ms: s.max_wall_ms ?? null,
    created_at: now,
    updated_at: now,
  };
}

export function newIterationRecord(i: NewIteration, now: string): IterationRecord {
  return {
    inbox_task_id: null,
    status: "pending",
    signal: null,
    output_summary: null,
    output_full: null,
    commit_hash: null,
    files_changed: [],
    anchor_turn_id: null,
    anchor_strategy: null,
    anchor_hint_next: null,
    context_tokens: 0,
    slice_id: null,
    signal_source: null,
    signal_reason: null,
    anchor_resolution_ms: null,
    anchor_salience: null,
    anchor_depth: null,
    tokens_used: 0,
    cost_usd: 0,
    error: null,
    gate: null,
    receipt: null,
    started_at: now,
    finished_at: null,
    ...i,
  };
}

/** Finished sessions: nothing steers them any more. */
export function isFinished(status: SessionStatus): boolean {
  return status === "complete" || status === "aborted";
}
