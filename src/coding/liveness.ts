/**
 * Whether a process still runs, read where records meet the process table: a runner's pid in a
 * session, workflow or agent run record, a lock holder, the groups the reaper stops. A pid and its
 * start time name one process for good; a zombie (exited, not yet collected) runs nothing.
 */
import { readdirSync, readFileSync } from "node:fs";

/**
 * The fields of /proc/<pid>/stat after the command name (field 3, the state, first); undefined
 * when the process is gone or /proc is absent.
 */
export function statFields(pid: number | string): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may itself hold spaces or parentheses.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/**
 * A zombie has exited and runs nothing; it only waits for its parent (or, orphaned, for init) to
 * collect it, which some inits (a container's PID 1) do late or never. Counted alive, it would
 * keep a dead pulse "running" and its killed agent "left behind".
 */
const exited = (state: string | undefined) => state === "Z" || state === "X";

/** True while any process of the group runs (zombies are not counted). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true; // no /proc: the signal's answer is all we have
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const fields = statFields(name);
    // Field 5, the process group, is the third after the state.
    if (fields && Number(fields[2]) === pgid && !exited(fields[0])) return true;
  }
  return false;
}

/** True while the process runs: not gone, and not a zombie. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
  return !exited(statFields(pid)?.[0]);
}

/**
 * When `pid` started, in clock ticks since boot (/proc/<pid>/stat field 22); undefined when it is
 * gone or /proc is absent. A pid and its start time name one process for good: a pid the kernel
 * reuses for another process comes with another start time.
 */
export function procStart(pid: number): number | undefined {
  // After "pid (comm) " come fields 3, 4, …: field 22 is the 20th of them.
  const v = Number(statFields(pid)?.[19]);
  return Number.isFinite(v) ? v : undefined;
}
