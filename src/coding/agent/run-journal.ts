/**
 * The agent's runs, kept durably so that a run whose pulse died can be resumed from its last
 * recorded step (`pulse agent resume RUN_ID`): what the run was asked (request, files, mode,
 * online, workdir), where it stands (the next iteration's input, or the output of an action
 * that completed in an iteration that did not), what it has spent (actions, tokens, time alive)
 * and which pulse runs it. Every write is done before the call returns (kill -9 loses nothing
 * written). `interrupted` is never stored: it is what a `running` run whose pulse is gone is.
 */
import type { ExecutionMode } from "./run-state.js";
import type { IterationState } from "./run-state.js";
import type { RunStatus } from "./types.js";

export type StoredRunStatus = "running" | RunStatus;
export type AgentRunStatus = StoredRunStatus | "interrupted";

export interface AgentRunRecord {
  runId: string;
  request: string;
  files: string[];
  mode: ExecutionMode;
  workdir: string;
  online: boolean;
  /** The models it was started with (`--driver`, `--script` as an absolute path): what `resume` uses unless told otherwise. */
  driver?: { name: string; script?: string };
  status: StoredRunStatus;
  reason?: string;
  /** The pulse process running it, and that process's start time (a reused pid is not it). */
  runnerPid: number;
  runnerStart?: number;
  /** Iterations completed. */
  iteration: number;
  /** The next iteration's input (the last completed iteration's output). */
  state: IterationState;
  /**
   * An iteration whose action completed but whose evaluation did not: it continues at
   * perform_action with `input` (the decision), which replays `output` (the finished action)
   * instead of running it again, so the act phase completes and the learn phase follows it.
   */
  pending?: { entry: "perform_action"; input: unknown; output: unknown } | null;
  /** An action started and not finished (its pulse died while it ran). */
  inFlight?: { actionRunId: string; name: string } | null;
  actionsUsed: number;
  tokensUsed: number;
  /** Time the run was alive (not the time its pulse was dead), for the wall-time cap. */
  elapsedMs: number;
  resumes: number;
  startedAt: string;
  updatedAt: string;
}

export type RunPatch = Partial<Omit<AgentRunRecord, "runId" | "startedAt">>;

export interface RunJournal {
  begin(record: AgentRunRecord): Promise<void>;
  update(runId: string, patch: RunPatch): Promise<void>;
  get(runId: string): Promise<AgentRunRecord | undefined>;
  /** Newest first. */
  list(limit?: number): Promise<AgentRunRecord[]>;
  close(): Promise<void>;
}

export class ResumeError extends Error {}

/** A run's status as a person sees it: a `running` run whose pulse is gone is `interrupted`. */
export function statusOf(r: Pick<AgentRunRecord, "status" | "runnerPid" | "runnerStart">, alive: (pid: number, start?: number) => boolean): AgentRunStatus {
  return r.status === "running" && !alive(r.runnerPid, r.runnerStart) ? "interrupted" : r.status;
}

/** Why a run cannot be resumed now, or undefined when it can (it is interrupted). */
export function resumeRefusal(runId: string, r: AgentRunRecord | undefined, alive: (pid: number, start?: number) => boolean, self: number): string | undefined {
  if (!r) return `run ${runId}: no such run in this home's agent.db`;
  const status = statusOf(r, alive);
  if (status === "interrupted") return undefined;
  if (status === "running") return `run ${runId} is running in pulse process ${r.runnerPid}${r.runnerPid === self ? " (this one)" : ""}: nothing to resume`;
  return `run ${runId} ended ${status}${r.reason ? ` (${r.reason})` : ""}: there is nothing to resume`;
}
