/**
 * Finding and killing everything an agent started. An agent runs in its own process group
 * (`detached: true`), but a descendant may start its own group or session and keep our stdout
 * open; so before killing we also walk the process table for the agent's descendants.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Descendants of `root` (not root itself), from /proc; empty where /proc is absent. */
export function descendantsOf(root: number): number[] {
  const children = new Map<number, number[]>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    // The command name is in parentheses and may itself hold spaces or parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ppid = Number(fields[1]);
    const list = children.get(ppid);
    if (list) list.push(Number(name));
    else children.set(ppid, [Number(name)]);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

/**
 * Processes whose environment holds `NAME=value`: the run's marker, inherited by everything the
 * agent starts, even a descendant that left its group and was re-parented after its parent died.
 */
export function processesMarked(name: string, value: string): number[] {
  const needle = Buffer.from(`${name}=${value}\0`);
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`).includes(needle)) out.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

/** Signals the group led by `pgid` and each listed pid; "no such process" is not an error. */
export function signalAll(pgid: number, pids: readonly number[], signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // the group is empty already
  }
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // exited already
    }
  }
}

/** True while any process of the group is alive. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * When `pid` started, in clock ticks since boot (/proc/<pid>/stat field 22); undefined when it is
 * gone or /proc is absent. A pid and its start time name one process for good: a pid the kernel
 * reuses for another process comes with another start time.
 */
export function procStart(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // After "pid (comm) " come fields 3, 4, …: field 22 is the 20th of them.
    const v = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
    return Number.isFinite(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
