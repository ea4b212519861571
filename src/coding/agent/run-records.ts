/**
 * The plan→decide→act agent's run records: a run (its request, mode, counters, limits, outcome
 * and the process running it) and one step per iteration (the plan step, the decision, the
 * action and its result, the feedback, the advisory). The report JSONL stays the full story;
 * these are what another process (`pulse runs`, the studio, `pulse agent runs`) reads without
 * the home's logs. Implementations in adapters/ (memory, SQLite, PostgreSQL).
 */

/** `running` while a runner runs it; `interrupted` is never stored (see displayedStatus). */
export type AgentRunStatus = "running" | "succeeded" | "failed" | "timeout" | "blocked" | "aborted";

export interface AgentRunRecord {
  id: string;
  request: string;
  mode: string;
  workdir: string;
  status: AgentRunStatus;
  /** The outcome's reason (goal_achieved, quota, timeout, exhausted, error…), null while it runs. */
  reason: string | null;
  message: string | null;
  iteration: number;
  max_iterations: number;
  actions_used: number;
  max_actions: number;
  tokens_used: number;
  /** The last advisory's status (continue, terminate, blocked). */
  last_signal: string | null;
  runner_pid: number | null;
  /** The report (JSONL) it writes. */
  report_path: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

export interface AgentStepRecord {
  run_id: string;
  number: number;
  /** The plan step worked on (id and description), null before a plan. */
  plan_step: string | null;
  /** The decision's type (action, ask_user, wait, done…) and reason. */
  decision: { type: string; reason: string | null } | null;
  action: string | null;
  action_run_id: string | null;
  args: Record<string, unknown> | null;
  /** ok, error, declined…; null when no action ran. */
  action_status: string | null;
  /** The action's result or error, at most 2,000 characters. */
  result: string | null;
  feedback: { score: number; signal: string; submittedBy: string } | null;
  advisory_status: string | null;
  advisory_reason: string | null;
  progress: { done: number; total: number } | null;
  tokens_used: number;
  started_at: string;
  finished_at: string;
}

export type NewAgentRun = Pick<AgentRunRecord, "id" | "request" | "mode" | "workdir" | "max_iterations" | "max_actions"> & Partial<Pick<AgentRunRecord, "runner_pid" | "report_path">>;
export type AgentRunPatch = Partial<Omit<AgentRunRecord, "id" | "created_at" | "updated_at">>;

export class AgentRunRecordsError extends Error {
  constructor(
    readonly code: "NOT_FOUND" | "EXISTS" | "INVALID",
    message: string,
  ) {
    super(message);
    this.name = "AgentRunRecordsError";
  }
}

export interface AgentRunRecords {
  create(run: NewAgentRun): Promise<AgentRunRecord>;
  /** By id or a unique prefix of at least 4 characters. */
  get(id: string): Promise<AgentRunRecord | undefined>;
  /** Newest first. */
  list(): Promise<AgentRunRecord[]>;
  update(id: string, patch: AgentRunPatch): Promise<AgentRunRecord>;
  /** EXISTS when the run already has a step with this number (a step is recorded once). */
  addStep(step: AgentStepRecord): Promise<AgentStepRecord>;
  steps(runId: string): Promise<AgentStepRecord[]>;
  close(): Promise<void>;
}

export function newAgentRunRecord(r: NewAgentRun, now: string): AgentRunRecord {
  return { status: "running", reason: null, message: null, iteration: 0, actions_used: 0, tokens_used: 0, last_signal: null, runner_pid: null, report_path: null, ...r, created_at: now, updated_at: now, finished_at: null };
}

/** Every column, in order (the SQL implementations' column lists). */
export const AGENT_RUN_COLUMNS = Object.keys(newAgentRunRecord({ id: "", request: "", mode: "", workdir: "", max_iterations: 0, max_actions: 0 }, "")) as (keyof AgentRunRecord)[];
export const AGENT_STEP_COLUMNS: (keyof AgentStepRecord)[] = ["run_id", "number", "plan_step", "decision", "action", "action_run_id", "args", "action_status", "result", "feedback", "advisory_status", "advisory_reason", "progress", "tokens_used", "started_at", "finished_at"];
export const AGENT_JSON_COLUMNS: ReadonlySet<string> = new Set(["decision", "args", "feedback", "progress"]);
