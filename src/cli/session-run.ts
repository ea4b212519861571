/**
 * Running a session from the terminal: in the foreground with its live view (a first SIGTERM or
 * Ctrl-C pauses it, the turn stopped after --stop-grace; a second stops the turn at once), or
 * detached as `pulse session resume ID` in its own process group, its output in a log file.
 */
import { spawn } from "node:child_process";
import { mkdirSync, openSync } from "node:fs";
import { dirname, join } from "node:path";
import type { SessionRecord } from "../coding/session/records.js";
import { SessionInputError } from "../coding/session/service.js";
import { EXIT } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import type { Sessions } from "./session-setup.js";
import { parseStopGrace } from "./serve-options.js";
import { viewLine } from "./session-view.js";

/** Exit codes of a session run in the foreground, beyond the shared ones. */
export const SESSION_EXIT = { blocked: 4 } as const;

export interface StoreOpts {
  store?: string;
  profile?: string;
}

export interface RunOpts extends StoreOpts {
  detach?: boolean;
  json?: boolean;
  notify?: string[];
  maxIterations?: string;
  stopGrace?: string;
}

/** --stop-grace, checked before anything is recorded. */
export function stopGraceOf(opts: RunOpts): number {
  try {
    return parseStopGrace(opts.stopGrace);
  } catch (e) {
    throw new SessionInputError("--stop-grace", (e as Error).message.replace(/^--stop-grace /, ""));
  }
}

export async function runOrDetach(sessions: Sessions, s: SessionRecord, opts: RunOpts, io: CliIO): Promise<number> {
  if (opts.detach) return detach(sessions, s, opts, io);
  const graceMs = stopGraceOf(opts);
  const { runner, notifier } = await sessions.runner({ ...(opts.notify ? { notify: opts.notify } : {}), terminal: !opts.json, io });
  const print = (text: string | undefined) => text !== undefined && io.stdout(`${text}\n`);
  // A first SIGTERM or Ctrl-C: pause, the turn stopped if still going after the grace; a second: stop it now.
  let interrupts = 0;
  const onInterrupt = (signal: NodeJS.Signals) => {
    interrupts++;
    if (interrupts === 1) io.stderr(`pulse session: ${signal}: pausing; the current turn is stopped if still going in ${graceMs / 1000} s, its work kept in a recovery commit (again stops it now)\n`);
    else io.stderr(`pulse session: ${signal} again: stopping the turn now\n`);
    // Not yet running here (still setting up): the runner reads the pause from the records.
    if (!runner.interrupt(s.id, `interrupted by ${signal}`, graceMs)) void sessions.records.requestControl(s.id, "pause");
  };
  process.on("SIGINT", onInterrupt);
  process.on("SIGTERM", onInterrupt);
  try {
    const final = await runner.run(s.id, { onEvent: (e) => print(opts.json ? JSON.stringify(e) : viewLine(e)) });
    await notifier.flush();
    return final.status === "complete" || final.status === "paused" ? EXIT.ok : final.status === "blocked" ? SESSION_EXIT.blocked : EXIT.problems;
  } finally {
    process.off("SIGINT", onInterrupt);
    process.off("SIGTERM", onInterrupt);
  }
}

/** Starts `pulse session resume ID` in its own process group, its output in a log file. */
async function detach(sessions: Sessions, s: SessionRecord, opts: RunOpts, io: CliIO): Promise<number> {
  if (!sessions.storeArg || !sessions.stateDir) throw new SessionInputError("--detach", "needs a durable store (a session in memory: dies with this process)");
  const logFile = join(sessions.stateDir, "sessions", `${s.id}.log`);
  mkdirSync(dirname(logFile), { recursive: true });
  const out = openSync(logFile, "a");
  const args = [process.argv[1]!, "session", "resume", s.id, "--store", sessions.storeArg, ...(opts.profile ? ["--profile", opts.profile] : []), ...(opts.notify ?? []).flatMap((u) => ["--notify", u]), ...(opts.stopGrace !== undefined ? ["--stop-grace", opts.stopGrace] : [])];
  const child = spawn(process.execPath, args, { detached: true, stdio: ["ignore", out, out], cwd: io.cwd, env: process.env });
  // Claimed for the child before it starts, so a pause or abort right now goes through the records.
  await sessions.records.update(s.id, { status: "running", runner_pid: child.pid ?? null });
  child.unref();
  io.stdout(`session ${s.id} started in the background (process ${child.pid}); its output: ${logFile}\nfollow it with: pulse session logs ${s.id} --follow --events\n`);
  return EXIT.ok;
}
