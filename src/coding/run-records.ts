/**
 * Records for every coding loop, one view: the runs of sessions (seed 000), pulsing workflows
 * (seed 001) and plan→decide→act agent runs (seed 002), and their iterations (a session's
 * iterations, a workflow's pulses, an agent's steps), each with the columns every loop has
 * (status, goal, iteration x/N, timings, signal, commits, files changed, tokens, cost, stop
 * reason, the runner's pid) and the loop's own fields as `payload`. Read-only: each loop writes
 * its own tables through its own records contract; this view is what `pulse runs`, `GET
 * /api/runs` and the studio read. In SQLite and PostgreSQL it is two SQL views (`pulse_runs`,
 * `pulse_run_steps`) over the loops' tables; in memory, the same mapping over the records.
 */
import { processAlive } from "./session/repo.js";

export type RunKind = "session" | "workflow" | "agent";
export const RUN_KINDS: readonly RunKind[] = ["session", "workflow", "agent"];

/** The loop each kind runs (its manifest's loop_id). */
export const LOOP_OF: Readonly<Record<RunKind, string>> = { session: "coding.pulse_session", workflow: "coding.pulsing_workflow", agent: "coding.plan_decide_act" };

export interface RunView {
  kind: RunKind;
  id: string;
  loop_id: string;
  /** As displayed: a `running` run whose runner process is gone is `interrupted`. */
  status: string;
  /** The session's goal, the workflow's title, the agent's request. */
  goal: string;
  /** Iterations (pulses, steps) done, and how many the run may have (a workflow: its planned pulses). */
  iteration: number;
  max_iterations: number;
  /** The last iteration's signal (a session's COMPLETE…, an agent's advisory), null when none. */
  signal: string | null;
  /** The iterations' commits, in order. */
  commits: string[];
  /** Every file an iteration changed, once each, sorted. */
  files_changed: string[];
  tokens: number;
  cost_usd: number;
  stop_reason: string | null;
  status_reason: string | null;
  runner_pid: number | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  /** The loop's own fields (a session's branch and driver, a workflow's plan and merge mode, an agent's mode and workdir). */
  payload: Record<string, unknown>;
}

export interface RunStepView {
  kind: RunKind;
  run_id: string;
  /** 1-based: a session's iteration number, a pulse's position in the plan, an agent's iteration. */
  number: number;
  status: string;
  /** What the iteration was asked: a session's task, a pulse's title, the plan step an agent worked on. */
  task: string;
  signal: string | null;
  summary: string | null;
  commit: string | null;
  files_changed: string[];
  /** The checks' verdict (sessions and workflows), null when none ran. */
  gate: unknown;
  tokens: number;
  cost_usd: number;
  error: string | null;
  started_at: string | null;
  finished_at: string | null;
  payload: Record<string, unknown>;
}

export interface RunFilter {
  kind?: RunKind;
}

export interface RunRecords {
  /** Newest first (by created_at, then id). */
  list(filter?: RunFilter): Promise<RunView[]>;
  /** By kind and id, or a unique id prefix of at least 4 characters. */
  get(kind: RunKind, id: string): Promise<RunView | undefined>;
  /** A run's iterations in order. */
  steps(kind: RunKind, runId: string): Promise<RunStepView[]>;
  close(): Promise<void>;
}

export class RunRecordsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RunRecordsError";
  }
}

export function isRunKind(v: unknown): v is RunKind {
  return typeof v === "string" && (RUN_KINDS as readonly string[]).includes(v);
}

/** `--kind` / `?kind=` checked: a clear refusal naming the kinds. */
export function runKindOf(v: unknown, field = "kind"): RunKind | undefined {
  if (v === undefined || v === null || v === "") return undefined;
  if (!isRunKind(v)) throw new RunRecordsError(`${field}: must be one of ${RUN_KINDS.join(", ")}, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * The status as displayed, for every loop: a run stored `running` whose runner process is gone
 * is `interrupted` (nothing runs it; resume or abort it). The one place that decides it.
 */
export function displayedStatus(status: string, runnerPid: number | null): string {
  return status === "running" && !processAlive(runnerPid) ? "interrupted" : status;
}

/** A run as displayed (see displayedStatus). */
export function shownRun(run: RunView): RunView {
  const status = displayedStatus(run.status, run.runner_pid);
  return status === run.status ? run : { ...run, status, status_reason: run.status_reason ?? `its runner (process ${run.runner_pid ?? "unknown"}) stopped while it ran` };
}

/** Newest first, then by id: the order every implementation lists in. */
export function byNewest(a: Pick<RunView, "created_at" | "id">, b: Pick<RunView, "created_at" | "id">): number {
  return a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
