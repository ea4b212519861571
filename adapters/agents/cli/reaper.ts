/**
 * The reaper of agent processes a dead runner left (src/coding/reaper.ts): for each process
 * recorded for the session, its group is signalled only while the group is provably the one we
 * started: its leader has the recorded start time, or the leader is gone but members remain (a
 * group id is not reused while it has members). Processes carrying the run's marker are ours
 * whatever their pid. SIGTERM, a short grace, then SIGKILL; the records are dropped after.
 */
import type { AgentProcesses } from "../../../src/coding/agent-processes.js";
import type { ReapReport, Reaper } from "../../../src/coding/reaper.js";
import { groupAlive, pidAlive, procStart } from "../../../src/coding/liveness.js";
import { processesMarked } from "./process-tree.js";
import { RUN_MARKER } from "./run-process.js";

export const DEFAULT_REAP_GRACE_MS = 2_000;

export class ProcessReaper implements Reaper {
  constructor(
    private readonly processes: AgentProcesses,
    private readonly defaults: { graceMs?: number } = {},
  ) {}

  async reap(sessionId: string, options: { graceMs?: number } = {}): Promise<ReapReport> {
    const grace = options.graceMs ?? this.defaults.graceMs ?? DEFAULT_REAP_GRACE_MS;
    const recorded = await this.processes.list(sessionId);
    const report: ReapReport = { killed: [], skipped: [] };
    if (recorded.length === 0) return report;
    /** What is ours to signal now: groups whose leader is (or was) ours, and marked pids. */
    const targets = () => {
      const groups: number[] = [];
      const pids = new Set<number>();
      for (const r of recorded) {
        // A marker recorded before its turn started a process has no group (pid 0): found by marker only.
        if (r.pgid > 1) {
          const start = procStart(r.pgid);
          if (start === r.startTime || (start === undefined && groupAlive(r.pgid))) groups.push(r.pgid);
        }
        for (const p of processesMarked(RUN_MARKER, r.marker)) if (p !== process.pid) pids.add(p);
      }
      return { groups, pids: [...pids] };
    };
    const send = (t: { groups: number[]; pids: number[] }, signal: NodeJS.Signals) => {
      for (const g of t.groups) tryKill(-g, signal);
      for (const p of t.pids) tryKill(p, signal);
    };
    const first = targets();
    for (const r of recorded) if (r.pid > 0 && !first.groups.includes(r.pgid) && !first.pids.includes(r.pid)) report.skipped.push(r.pid);
    report.killed = [...new Set([...first.groups, ...first.pids])];
    if (report.killed.length > 0) {
      send(first, "SIGTERM");
      const end = Date.now() + grace;
      while (Date.now() < end && (first.groups.some(groupAlive) || first.pids.some(pidAlive))) await new Promise((r) => setTimeout(r, 50));
      const left = targets();
      if (left.groups.length > 0 || left.pids.length > 0) send(left, "SIGKILL");
    }
    await this.processes.remove(sessionId);
    return report;
  }
}

/**
 * Reaps every run whose recorded processes were all started by runners that are gone (not this
 * process, not alive): what a killed pulse left, found by a later one. A run another live
 * process is running is left alone. Returns the runs reaped.
 */
export async function reapDeadRunners(processes: AgentProcesses, reaper: Reaper = new ProcessReaper(processes)): Promise<string[]> {
  const reaped: string[] = [];
  for (const run of await processes.runs()) {
    const recorded = await processes.list(run);
    if (recorded.length === 0 || recorded.some((r) => r.runner_pid === process.pid || pidAlive(r.runner_pid))) continue;
    await reaper.reap(run);
    reaped.push(run);
  }
  return reaped;
}

function tryKill(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // gone already
  }
}
