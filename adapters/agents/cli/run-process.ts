/**
 * Runs one agent process with the hygiene peers got wrong (coding-loops.md §3, §5): stdin
 * closed at once (after the prompt, when it goes by stdin), its own process group, SIGTERM then
 * SIGKILL to the group and every descendant, a wall-clock timeout and a silence watchdog, capped
 * output, and no wait on a pipe a leftover grandchild still holds.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { HeadTailBuffer, LineSplitter } from "./output-cap.js";
import { groupAlive, procStart } from "../../../src/coding/liveness.js";
import { descendantsOf, processesMarked, signalAll } from "./process-tree.js";
import { startWatchdog, type Watchdog } from "./watchdog.js";

/** Set in every agent's environment; whatever it starts inherits it, so nothing escapes the kill. */
export const RUN_MARKER = "PULSE_AGENT_RUN";

export interface ProcessSpec {
  command: string;
  args: string[];
  cwd: string;
  /** The complete environment: nothing is inherited. */
  env: Record<string, string>;
  /** Written to stdin, which is then closed; without it stdin is /dev/null. */
  stdin?: string;
  timeoutMs?: number;
  silenceTimeoutMs?: number;
  /** Time between SIGTERM and SIGKILL. */
  killGraceMs?: number;
  /** After the process exits, how long its pipes may stay open (a grandchild holding them) before they are destroyed. */
  pipeGraceMs?: number;
  /** Bytes of stdout and of stderr kept (head + tail). */
  maxOutputBytes?: number;
  /** After the agent's final event, how long it may take to exit before it is stopped. */
  lingerMs?: number;
}

export interface ProcessHandlers {
  /** Returns true for the line that carries the agent's final event. */
  onStdoutLine?: (line: string) => boolean | void;
  onStderrLine?: (line: string) => void;
  signal?: AbortSignal;
  /** The process as it starts (pid, group, start time, run marker): what a caller records. */
  onSpawn?: (info: { pid: number; pgid: number; startTime: number; marker: string }) => void;
  /** The run marker to set (RunOptions.marker); else a new one. */
  marker?: string;
}

/** `lingered`: it printed its final event but did not exit, and was stopped. */
export type EndReason = "exited" | "lingered" | "timeout" | "silence" | "aborted" | "spawn_error";

export interface ProcessOutcome {
  reason: EndReason;
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Bytes dropped from the middle of each stream by the cap. */
  truncated: { stdout: number; stderr: number };
  pid?: number;
  durationMs: number;
  /** From spawn to the first byte of output; undefined when there was none. */
  firstOutputMs?: number;
  /** The spawn error (command not found, …) when reason is spawn_error. */
  error?: string;
}

export const DEFAULT_KILL_GRACE_MS = 3_000;
export const DEFAULT_PIPE_GRACE_MS = 2_000;
export const DEFAULT_MAX_OUTPUT_BYTES = 4 << 20;

export function runProcess(spec: ProcessSpec, handlers: ProcessHandlers = {}): Promise<ProcessOutcome> {
  const started = performance.now();
  const stdout = new HeadTailBuffer(spec.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES);
  const stderr = new HeadTailBuffer(spec.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES);
  let onFinal = () => {};
  const outLines = new LineSplitter((l) => {
    if (handlers.onStdoutLine?.(l) === true) onFinal();
  });
  const errLines = new LineSplitter((l) => handlers.onStderrLine?.(l));
  const killGrace = spec.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const pipeGrace = spec.pipeGraceMs ?? DEFAULT_PIPE_GRACE_MS;

  return new Promise<ProcessOutcome>((resolve) => {
    let reason: EndReason = "exited";
    let firstOutputMs: number | undefined;
    let exit: { code: number | null; signal: string | null } | undefined;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    let silenceTimer: NodeJS.Timeout | undefined;

    const marker = handlers.marker ?? randomUUID();
    const child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: { ...spec.env, [RUN_MARKER]: marker },
      detached: true, // own process group: one kill reaches everything it started
      stdio: [spec.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      windowsHide: true,
    });
    const pid = child.pid;
    let streamsOpen = 2;
    // An agent never outlives this pulse for long: the watchdog stops it when pulse dies.
    let watchdog: Watchdog | undefined;
    let pendingKills = 0;
    if (pid !== undefined) {
      const startTime = procStart(pid) ?? 0;
      watchdog = startWatchdog(pid, startTime, marker);
      try {
        handlers.onSpawn?.({ pid, pgid: pid, startTime, marker });
      } catch {
        // a recorder's failure must not leave the agent without its kill path
      }
    }
    /** Runs a delayed kill, and lets the watchdog go once no kill is pending and the run settled. */
    const later = (fn: () => void, ms: number) => {
      pendingKills++;
      setTimeout(() => {
        fn();
        if (--pendingKills === 0 && settled) watchdog?.release();
      }, ms);
    };

    const finish = (error?: string) => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      if (silenceTimer) clearTimeout(silenceTimer);
      handlers.signal?.removeEventListener("abort", onAbort);
      outLines.end();
      errLines.end();
      const outcome: ProcessOutcome = {
        reason,
        code: exit?.code ?? null,
        signal: exit?.signal ?? null,
        stdout: stdout.toString(),
        stderr: stderr.toString(),
        truncated: { stdout: stdout.truncated, stderr: stderr.truncated },
        durationMs: performance.now() - started,
      };
      if (pid !== undefined) outcome.pid = pid;
      if (firstOutputMs !== undefined) outcome.firstOutputMs = firstOutputMs;
      if (error !== undefined) outcome.error = error;
      if (pendingKills === 0) watchdog?.release();
      resolve(outcome);
    };

    /** SIGTERM to the group and all descendants now, SIGKILL to whatever is left after the grace. */
    let killing = false;
    const kill = (why: EndReason) => {
      if (reason === "exited") reason = why;
      if (killing || pid === undefined) return;
      killing = true;
      const tree = [...descendantsOf(pid), ...processesMarked(RUN_MARKER, marker)];
      signalAll(pid, tree, "SIGTERM");
      // Not cleared when the run settles: what ignores SIGTERM must still get SIGKILL.
      later(() => {
        signalAll(pid, [...new Set([...tree, ...descendantsOf(pid), ...processesMarked(RUN_MARKER, marker)])], "SIGKILL");
      }, killGrace);
    };

    const onAbort = () => kill("aborted");

    const armSilence = () => {
      if (!spec.silenceTimeoutMs || exit) return;
      if (silenceTimer) silenceTimer.refresh();
      else silenceTimer = setTimeout(() => kill("silence"), spec.silenceTimeoutMs);
    };

    const onData = (buffer: HeadTailBuffer, lines: LineSplitter) => (chunk: Buffer) => {
      if (firstOutputMs === undefined) firstOutputMs = performance.now() - started;
      buffer.push(chunk);
      lines.push(chunk);
      armSilence();
    };
    child.stdout!.on("data", onData(stdout, outLines));
    child.stderr!.on("data", onData(stderr, errLines));
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.on("error", () => {});
      stream.on("close", () => {
        if (--streamsOpen === 0 && exit) finish();
      });
    }

    child.on("error", (e) => {
      reason = "spawn_error";
      finish(e.message);
    });

    onFinal = () => {
      if (exit || spec.lingerMs === undefined) return;
      const t = setTimeout(() => kill("lingered"), spec.lingerMs);
      timers.push(t);
    };

    child.on("exit", (code, signal) => {
      exit = { code, signal };
      if (silenceTimer) clearTimeout(silenceTimer);
      // Whatever the agent left running is an orphan now: its group, and anything carrying the
      // run's marker that escaped the group, even detached from every pipe (`setsid cmd &`): its
      // records are dropped when the turn ends, so nothing would find it later.
      const left = pid === undefined ? [] : processesMarked(RUN_MARKER, marker);
      if (pid !== undefined && (groupAlive(pid) || streamsOpen > 0 || left.length > 0)) {
        signalAll(pid, left, "SIGTERM");
        later(() => signalAll(pid, [...new Set([...left, ...processesMarked(RUN_MARKER, marker)])], "SIGKILL"), killGrace);
      }
      if (streamsOpen === 0) return finish();
      // A descendant outside the group may still hold stdout: do not wait on it for ever.
      const teardown = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, pipeGrace);
      timers.push(teardown);
    });

    if (spec.stdin !== undefined && child.stdin) {
      child.stdin.on("error", () => {}); // an agent that exits without reading its stdin
      child.stdin.end(spec.stdin);
    }
    if (handlers.signal?.aborted) onAbort();
    else handlers.signal?.addEventListener("abort", onAbort, { once: true });
    if (spec.timeoutMs) timers.push(setTimeout(() => kill("timeout"), spec.timeoutMs));
    armSilence();
  });
}
