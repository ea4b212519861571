/**
 * Stops what a dead runner left: every agent process recorded for a session, by process group
 * and by run marker, each checked against its recorded start time so that a pid the kernel gave
 * to another process since is never signalled. Called by `resume`, `abort` and the start of any
 * runner before anything touches the session's tree; the implementation is in
 * adapters/agents/cli/reaper.ts (it reads /proc).
 */
export interface ReapReport {
  /** Pids signalled (group leaders and marked processes). */
  killed: number[];
  /** Recorded processes left alone: gone already, or their pid now names another process. */
  skipped: number[];
}

export interface Reaper {
  reap(sessionId: string, options?: { graceMs?: number }): Promise<ReapReport>;
}
