/**
 * Adapters run in their own process group (spawn's `detached`), so that ending one ends every
 * process its command started. The flip side: a Ctrl-C at the terminal reaches only the
 * harness's group, so the harness ends the adapters' groups itself when it exits or is signalled.
 */
const live = new Set<number>();
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** SIGKILL to the whole group; a group that is already gone is fine. */
export function killGroup(pgid: number | undefined): void {
  if (pgid === undefined) return;
  try {
    // Windows has no process groups: there the shell alone is what can be killed.
    if (process.platform === "win32") process.kill(pgid, "SIGKILL");
    else process.kill(-pgid, "SIGKILL");
  } catch {
    // ESRCH: nothing left in the group.
  }
}

function killAll(): void {
  for (const pgid of live) killGroup(pgid);
}

function onSignal(signal: NodeJS.Signals): void {
  killAll();
  for (const s of SIGNALS) process.removeListener(s, onSignal);
  // Die of the signal as if no handler had been installed (exit status 128 + n for the caller).
  process.kill(process.pid, signal);
}

/** Registers a group to be killed if the harness exits or is signalled before closing it. */
export function endGroupOnExit(pgid: number | undefined): void {
  if (pgid === undefined) return;
  if (live.size === 0) {
    process.on("exit", killAll);
    for (const s of SIGNALS) process.on(s, onSignal);
  }
  live.add(pgid);
}

export function releaseGroup(pgid: number | undefined): void {
  if (pgid === undefined || !live.delete(pgid) || live.size > 0) return;
  process.removeListener("exit", killAll);
  for (const s of SIGNALS) process.removeListener(s, onSignal);
}
