/**
 * The agent processes a coding loop has running, kept in the durable store: recorded as each
 * starts (pid, process group, start time, run marker, the runner's pid), removed when its turn
 * ends. What is still listed for a session no live runner runs was left by a dead one, and is
 * what the reaper (reaper.ts) stops before anything else touches the session's tree.
 */
import type { SpawnInfo } from "../agents/contract.js";

export interface AgentProcessRecord extends SpawnInfo {
  session_id: string;
  iteration: number;
  /** The pulse process that started it. */
  runner_pid: number;
  recorded_at: string;
}

export interface AgentProcesses {
  record(sessionId: string, iteration: number, info: SpawnInfo): Promise<void>;
  /** Forgets a session's processes: of one iteration, or all of them. */
  remove(sessionId: string, iteration?: number): Promise<void>;
  list(sessionId: string): Promise<AgentProcessRecord[]>;
  close(): Promise<void>;
}
