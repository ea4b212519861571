/**
 * Finding and killing everything an agent started. An agent runs in its own process group
 * (`detached: true`), but a descendant may start its own group or session and keep our stdout
 * open; so before killing we also walk the process table for the agent's descendants.
 */
import { readdirSync, readFileSync } from "node:fs";
import { statFields } from "../../../src/coding/liveness.js";

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
    const fields = statFields(name);
    if (!fields) continue; // gone meanwhile
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
