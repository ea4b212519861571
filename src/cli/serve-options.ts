/** `pulse serve`'s options and help, apart from the server so `pulse --help` stays light. */
import { availableParallelism } from "node:os";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { UsageError } from "./exit-codes.js";

export const STORE_HELP = "where sessions are recorded: a SQLite file (default $PULSE_STORE or .pulse/pulse.db), a PostgreSQL store (postgres://…?schema=name, after pulse store migrate), or memory: (nothing kept)";

export interface ServeOptions {
  listen?: string;
  token?: string;
  store?: string;
  profile?: string;
  allowHost?: string[];
  allowOrigin?: string[];
  allowScripts?: string[];
  maxSessions?: string;
  stopGrace?: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** --max-sessions: a whole number from 1; by default one session per CPU. */
export function parseMaxSessions(text: string | undefined): number {
  if (text === undefined) return availableParallelism();
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`--max-sessions takes a whole number from 1, not ${JSON.stringify(text)}`);
  return Number(text);
}

export const DEFAULT_STOP_GRACE_S = 10;

/** --stop-grace SECONDS: how long a turn may go on after SIGTERM or a first Ctrl-C before it is stopped. */
export function parseStopGrace(text: string | undefined): number {
  if (text === undefined) return DEFAULT_STOP_GRACE_S * 1000;
  if (!/^\d+(\.\d+)?$/.test(text) || Number(text) > 3600) throw new UsageError(`--stop-grace takes seconds from 0 to 3600, not ${JSON.stringify(text)}`);
  return Math.round(Number(text) * 1000);
}

/** --allow-scripts DIR…: existing directories, resolved against the working directory. */
export function parseScriptDirs(dirs: readonly string[] | undefined, cwd: string): string[] {
  return (dirs ?? []).map((d) => {
    const abs = resolve(cwd, d);
    if (!existsSync(abs) || !statSync(abs).isDirectory()) throw new UsageError(`--allow-scripts ${d}: no such directory`);
    return abs;
  });
}

export const SERVE_DESCRIPTION = "Serve coding sessions over HTTP: REST at /api/pulse and MCP (Streamable HTTP) at /mcp.";

export const SERVE_HELP = `
Endpoints (JSON):
  POST /api/pulse/start          {"goal": "…", "repo": "/path", "maxIterations": 10, "driver": "claude", …}
  GET  /api/pulse/:id            the session and its iterations
  GET  /api/pulse?status=running sessions, newest first
  POST /api/pulse/:id/pause|resume|abort
  POST /api/pulse/:id/steer      {"text": "…"}: new guidance; the session replans before going on
  POST /mcp                      MCP tools pulse_start, pulse_status, pulse_pause, pulse_resume, pulse_abort, pulse_steer, pulse_list

It listens on 127.0.0.1 unless --listen names another address, which needs --token (or
PULSE_TOKEN): clients then send "Authorization: Bearer <token>". A web page in a browser must
never start an agent, so requests are refused (403) whose Host is not a loopback name or the
bound address (DNS rebinding) or whose Origin is another site's; --allow-host and --allow-origin
widen that on purpose. POSTs must be application/json (415 otherwise). The scripted driver's
scripts are read only from --allow-scripts directories (403 otherwise). Beyond --max-sessions
running sessions a start is answered 429 with Retry-After. SIGTERM or Ctrl-C pauses the sessions
it runs: a turn still going after --stop-grace seconds (default 10) is stopped, what its agent
left kept in a recovery commit; pulse session resume ID continues them. A second signal stops at once.
See docs/sessions.md, "Who may reach pulse serve".`;

export function addServeOptions(cmd: Command): Command {
  return cmd
    .option("--listen <[host:]port>", "where to listen (127.0.0.1 unless a host is given; any other host needs --token)", "3002")
    .option("--token <token>", "bearer token clients must send (default $PULSE_TOKEN); required off loopback")
    .option("--store <path>", STORE_HELP)
    .option("--profile <file>", "a loop profile instead of profiles/coding/session.profile.json")
    .option("--allow-host <name>", "also accept requests addressed to this host name (name or name:port; repeatable), e.g. the name a proxy forwards", collect)
    .option("--allow-origin <origin>", "also accept requests from web pages of this origin (http://host:port; repeatable); they get CORS headers", collect)
    .option("--allow-scripts <dir>", "let clients run the scripted driver with scripts from this directory (repeatable; default: none)", collect)
    .option("--max-sessions <n>", "sessions running at once; a start beyond it is refused with 429 (default: the number of CPUs)")
    .option("--stop-grace <seconds>", "on SIGTERM or Ctrl-C, how long a running turn may go on before it is stopped (default 10)");
}

