/** Which processes are still running, for tests that check a killed adapter left nothing behind. */
import { readdirSync, readFileSync } from "node:fs";

interface ProcessStat {
  pid: number;
  state: string;
  pgrp: number;
}

function statOf(pid: number): ProcessStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { pid, state: state!, pgrp: Number(pgrp) };
  } catch {
    return undefined;
  }
}

/** A zombie has ended; only its exit status waits to be collected. */
export function isRunning(pid: number): boolean {
  const stat = statOf(pid);
  if (stat) return stat.state !== "Z";
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The running members of a process group (Linux: /proc; elsewhere whether the group answers at all). */
export function runningInGroup(pgid: number): number[] {
  let pids: number[];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number);
  } catch {
    try {
      process.kill(-pgid, 0);
      return [pgid];
    } catch {
      return [];
    }
  }
  return pids.map(statOf).filter((s): s is ProcessStat => s !== undefined && s.pgrp === pgid && s.state !== "Z").map((s) => s.pid);
}

/** The pid and process group misbehaving-adapter.mjs logs on stderr as it starts. */
export function adapterProcess(stderr: string): { pid: number; pgid: number } | undefined {
  const m = /started \(pid (\d+), process group (\d+)\)/.exec(stderr);
  return m ? { pid: Number(m[1]), pgid: Number(m[2]) } : undefined;
}
