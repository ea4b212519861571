/**
 * The agent processes a coding loop has running, kept in the durable store: recorded as each
 * starts (pid, process group, start time, run marker, the runner's pid), removed when its turn
 * ends. What is still listed for a session no live runner runs was left by a dead one, and is
 * what the reaper (reaper.ts) stops before anything else touches the session's tree.
 */
import { randomUUID } from "node:crypto";
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
  /** The runs (sessions, workflows, agent runs) that have processes recorded, for finding what dead runners left. */
  runs(): Promise<string[]>;
  close(): Promise<void>;
}

/** What a loop step hands a driver or a check runner so that every process it starts is recorded while it lives. */
export interface ProcessRecording {
  onSpawn: (info: SpawnInfo) => void;
  marker: string;
  done: () => Promise<void>;
}

/**
 * Records what one step of a run starts (the agent, its tools, the checks): the marker before
 * anything starts (a pulse killed between a spawn and its record still leaves the reaper a way
 * to find it), each process as it starts; `done` forgets them. `runId` is the run's id in the
 * records (a session's, a workflow's), `prefix` names the loop in the marker.
 */
export async function recordProcesses(processes: AgentProcesses | undefined, runId: string, iteration: number, prefix: string): Promise<ProcessRecording> {
  const recorded: Promise<void>[] = [];
  const marker = `${prefix}-${runId}-${iteration}-${randomUUID().slice(0, 8)}`;
  await processes?.record(runId, iteration, { pid: 0, pgid: 0, startTime: 0, marker });
  return {
    marker,
    onSpawn: (info) => {
      if (processes) recorded.push(processes.record(runId, iteration, info).catch(() => undefined));
    },
    done: async () => {
      await Promise.all(recorded);
      await processes?.remove(runId, iteration).catch(() => undefined);
    },
  };
}
