/**
 * Ending everything an adapter started. The adapter runs in a process group of its own (spawn's
 * `detached`), but a group is not enough: a grandchild that calls setsid() leaves it, and a
 * daemon that double-forks is re-parented to init, out of reach of a parent-child walk too. So
 * the harness gives each adapter a session mark in its environment (PULSE_CONFORM_SESSION),
 * which every descendant inherits, and at the end kills, on Linux, the union of: the group, the
 * descendants of the adapter's process (walking /proc by parent pid) and every process of this
 * user whose environment still carries the mark. Only a process that both leaves the group and
 * its parent chain and clears its environment escapes (or one started through a service manager,
 * which is not a descendant at all). Elsewhere only the group is killed.
 *
 * The flip side of a group of its own: a Ctrl-C at the terminal reaches only the harness's group,
 * so the harness ends its adapters itself when it exits or is signalled.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

export const SESSION_VARIABLE = "PULSE_CONFORM_SESSION";

export interface AdapterProcesses {
  /** The adapter's shell: its pid is also the process group's id. */
  pid: number;
  /** The value of PULSE_CONFORM_SESSION in the adapter's environment. */
  mark: string;
}

export function newSessionMark(): string {
  return `${process.pid}-${randomBytes(8).toString("hex")}`;
}

const live = new Map<number, AdapterProcesses>();
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

function kill(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // ESRCH: already gone; EPERM: not ours to end.
  }
}

function pidsInProc(): number[] {
  try {
    return readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number);
  } catch {
    return [];
  }
}

/** Parent pid and process group from /proc/<pid>/stat ("pid (comm) state ppid pgrp …"; comm may hold spaces). */
function statOf(pid: number): { ppid: number; pgrp: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(fields[1]), pgrp: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

function carriesMark(pid: number, entry: Buffer): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`).includes(entry);
  } catch {
    return false; // another user's process, or gone
  }
}

/** Every process that belongs to the adapter's session, as /proc shows it now (Linux). */
export function sessionProcesses(session: AdapterProcesses): number[] {
  const pids = pidsInProc().filter((pid) => pid !== process.pid);
  const entry = Buffer.from(`${SESSION_VARIABLE}=${session.mark}\0`);
  const children = new Map<number, number[]>();
  const found = new Set<number>();
  for (const pid of pids) {
    const stat = statOf(pid);
    if (!stat) continue;
    children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), pid]);
    if (stat.pgrp === session.pid || carriesMark(pid, entry)) found.add(pid);
  }
  // The walk starts from processes known to be the session's, never from the adapter's pid as
  // such: once its shell is gone that pid may belong to someone else.
  const queue = [...found];
  while (queue.length > 0) {
    const pid = queue.pop()!;
    for (const child of children.get(pid) ?? []) {
      if (!found.has(child)) {
        found.add(child);
        queue.push(child);
      }
    }
  }
  return [...found];
}

/**
 * SIGKILL to the group and to every process of the session. Repeated while new ones appear, so
 * a process forking as it dies does not leave its child behind.
 */
export function killSession(session: AdapterProcesses): void {
  if (process.platform === "win32") {
    kill(session.pid); // no process groups: the shell alone is what can be killed
    return;
  }
  kill(-session.pid);
  for (let round = 0; round < 5; round++) {
    const remaining = sessionProcesses(session);
    if (remaining.length === 0) return;
    for (const pid of remaining) kill(pid);
  }
}

function killAll(): void {
  for (const session of live.values()) killSession(session);
}

function onSignal(signal: NodeJS.Signals): void {
  killAll();
  for (const s of SIGNALS) process.removeListener(s, onSignal);
  // Die of the signal as if no handler had been installed (exit status 128 + n for the caller).
  process.kill(process.pid, signal);
}

/** Registers a session to be killed if the harness exits or is signalled before closing it. */
export function endSessionOnExit(session: AdapterProcesses): void {
  if (live.size === 0) {
    process.on("exit", killAll);
    for (const s of SIGNALS) process.on(s, onSignal);
  }
  live.set(session.pid, session);
}

export function releaseSession(session: AdapterProcesses): void {
  if (!live.delete(session.pid) || live.size > 0) return;
  process.removeListener("exit", killAll);
  for (const s of SIGNALS) process.removeListener(s, onSignal);
}
