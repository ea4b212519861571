/** `pulse serve`'s options and help, apart from the server so `pulse --help` stays light. */
import type { Command } from "commander";

export const STORE_HELP = "where sessions are recorded: a SQLite file (default $PULSE_STORE or .pulse/pulse.db), or memory: (nothing kept)";

export interface ServeOptions {
  listen?: string;
  token?: string;
  store?: string;
  profile?: string;
}

export const SERVE_DESCRIPTION = "Serve coding sessions over HTTP: REST at /api/pulse and MCP (Streamable HTTP) at /mcp.";

export const SERVE_HELP = `
Endpoints (JSON):
  POST /api/pulse/start          {"goal": "…", "repo": "/path", "maxIterations": 10, "driver": "claude", …}
  GET  /api/pulse/:id            the session and its iterations
  GET  /api/pulse?status=running sessions, newest first
  POST /api/pulse/:id/pause|resume|abort
  POST /mcp                      MCP tools pulse_start, pulse_status, pulse_pause, pulse_resume, pulse_abort, pulse_list

It listens on 127.0.0.1 unless --listen names another address, which needs --token (or
PULSE_TOKEN): clients then send "Authorization: Bearer <token>". Ctrl-C pauses the sessions it
runs after their current iteration and stops; pulse session resume ID continues them.`;

export function addServeOptions(cmd: Command): Command {
  return cmd
    .option("--listen <[host:]port>", "where to listen (127.0.0.1 unless a host is given; any other host needs --token)", "3002")
    .option("--token <token>", "bearer token clients must send (default $PULSE_TOKEN); required off loopback")
    .option("--store <path>", STORE_HELP)
    .option("--profile <file>", "a loop profile instead of profiles/coding/session.profile.json");
}

