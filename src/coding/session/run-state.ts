/**
 * What the session loop's phase handlers share within one process: for each running session
 * (the workspace of its iterations), what lasts across its iterations: its record, its driver,
 * its guard and ledger, its abort, and where live events go. An iteration's own data goes from
 * phase to phase in their outputs, never through here.
 */
import type { LedgerEntry } from "../cost-ledger.js";
import type { CheckBaseline, CheckRunner } from "../gate.js";
import type { AgentDriver, AgentEvent } from "../../agents/contract.js";
import type { AgentProcesses } from "../agent-processes.js";
import type { CostLedger } from "../cost-ledger.js";
import type { LoopGuard, Verdict } from "../progress-breaker.js";
import type { ResolvedAnchor, Turn } from "./anchors.js";
import type { SessionProfile } from "./profile.js";
import type { GuidanceGate, ReplanAck } from "../guidance/gate.js";
import type { IterationRecord, SessionRecord, SessionRecords } from "./records.js";

/** What a live view (terminal, REST, MCP) is told while a session runs. */
export type SessionEvent =
  | { type: "session.started"; session: SessionRecord; resumed: boolean; recovered?: string }
  | { type: "iteration.started"; session_id: string; iteration: number; max: number; anchor: ResolvedAnchor }
  | { type: "agent"; session_id: string; iteration: number; event: AgentEvent }
  | { type: "iteration.finished"; session_id: string; iteration: IterationRecord; verdict: Verdict; warnings: string[]; receipt?: LedgerEntry }
  | { type: "verify.baseline"; session_id: string; checks: CheckBaseline[] }
  | { type: "session.waiting"; session_id: string; iteration: number; until: string; message: string }
  | { type: "guidance.steered"; session_id: string; event_id: string | null; by: string; text: string; file: string; sha256?: string | null; deferred?: boolean; signal_id?: string; signal_source?: string }
  | { type: "guidance.steer_applied"; session_id: string; steer_seq: number; event_id: string; sha256: string }
  | { type: "guidance.held"; session_id: string; iteration: number; event_id: string; files: string[] }
  | { type: "guidance.acknowledged"; session_id: string; iteration: number; ack: ReplanAck }
  | { type: "session.finished"; session: SessionRecord };

export interface SessionRun {
  session: SessionRecord;
  records: SessionRecords;
  driver: AgentDriver;
  profile: SessionProfile;
  guard: LoopGuard;
  ledger: CostLedger;
  /** Aborting it stops the agent at once. */
  controller: AbortController;
  /** Turns of earlier runs of this session (from the records), for a process that did not see them. */
  priorTurns: Turn[];
  /** Whether this process has written the prior turns into its memory substrate yet. */
  priorStored: boolean;
  /** The reason the session stopped before it was resumed, told to the next iteration. */
  resumedAfter?: string;
  /** Where each agent process is recorded as it starts, for a later pulse to reap if this one dies. */
  processes?: AgentProcesses;
  /** Runs the session's checks (--verify). */
  checks?: CheckRunner;
  /** Why a signal to this process stopped the session (it ends paused, its work kept). */
  interrupted?: string;
  /** Stops the current turn when a signal's grace runs out. */
  interruptTimer?: NodeJS.Timeout;
  /**
   * A turn a dead runner left interrupted, to be dispatched again under its iteration when the
   * journal resumes it: the recovery commit of what its agent left (null: nothing), that runner's pid.
   */
  redispatch?: { iteration: number; commit: string | null; runnerPid: number | null };
  /** The guidance gate of the session's working directory (its `.pulse/`), opened by the first iteration. */
  guidance?: GuidanceGate;
  emit(event: SessionEvent): void;
}

export type SessionRuns = Map<string, SessionRun>;
