/**
 * The parent-death watchdog of one agent process: a tiny `/bin/sh` in its own process group
 * that blocks reading a pipe only this pulse holds. When pulse ends in any way (even SIGKILL),
 * the kernel closes the pipe, `read` returns, and the watchdog stops the agent's group and
 * everything carrying its run marker: SIGTERM, then SIGKILL two seconds later. When the run ends
 * normally, pulse writes `done` and the watchdog exits without touching anything.
 */
import { spawn, type ChildProcess } from "node:child_process";

// $1 the agent's pgid, $2 its start time (/proc stat field 22), $3 its run marker. The group is
// signalled only while its leader is the process we started (same start time), or when the
// leader is gone but the group is not: a group id is never reused while the group has members.
const SCRIPT = `
G=$1; T=$2; M=$3
IFS= read -r line || line=
[ "$line" = done ] && exit 0
ours() { [ ! -e /proc/$G ] && return 0; s=$(cat /proc/$G/stat 2>/dev/null) || return 0; s=\${s##*) }; set -- $s; shift 19; [ "$1" = "$T" ]; }
marked() { for e in $(grep -lzx "PULSE_AGENT_RUN=$M" /proc/[0-9]*/environ 2>/dev/null); do p=\${e%/environ}; p=\${p#/proc/}; [ "$p" = "$$" ] || kill -$1 "$p" 2>/dev/null; done; }
if ours; then kill -TERM -- -$G 2>/dev/null; fi
marked TERM
sleep 2
if ours; then kill -KILL -- -$G 2>/dev/null; fi
marked KILL
exit 0
`;

export interface Watchdog {
  /** The run ended here and its processes were dealt with: the watchdog exits doing nothing. */
  release(): void;
}

/** Starts the watchdog of the agent group `pgid`; never throws (no watchdog is better than no agent). */
export function startWatchdog(pgid: number, startTime: number, marker: string): Watchdog {
  let child: ChildProcess | undefined;
  try {
    child = spawn("/bin/sh", ["-c", SCRIPT, "pulse-agent-watchdog", String(pgid), String(startTime), marker], {
      // Its own group: a Ctrl-C to pulse's terminal group must not take it down with pulse.
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    });
    child.on("error", () => undefined);
    child.stdin!.on("error", () => undefined);
    // Neither the watchdog nor its pipe keeps pulse running.
    child.unref();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
  } catch {
    child = undefined;
  }
  let released = false;
  return {
    release() {
      if (released || !child?.stdin) return;
      released = true;
      child.stdin.end("done\n");
    },
  };
}
