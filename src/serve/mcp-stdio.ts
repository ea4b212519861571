/** `pulse session mcp`: the session tools over MCP on standard input and output. */
import { serveStdio } from "./stdio.js";
import { openSessions, type SessionStoreOptions } from "../cli/session-setup.js";
import type { CliIO } from "../cli/io.js";
import { parseMaxSessions, parseScriptDirs } from "../cli/serve-options.js";
import { SessionApi } from "./session-api.js";
import { createSessionMcpServer } from "./mcp-tools.js";

export interface McpStdioOptions extends SessionStoreOptions {
  /** Read-only, this session only: the server an agent of the session is handed. */
  session?: string;
  /** With session: serve pulse_signal only (no history). */
  history?: boolean;
  allowScripts?: string[];
  maxSessions?: string;
}

export async function serveMcpStdio(opts: McpStdioOptions, io: CliIO): Promise<number> {
  const scriptDirs = parseScriptDirs(opts.allowScripts, io.cwd);
  const maxSessions = parseMaxSessions(opts.maxSessions);
  const sessions = await openSessions(opts, io);
  // Standard output is the protocol's: notifications and errors go to standard error.
  const { runner, notifier } = await sessions.runner({ io: { ...io, stdout: (t) => io.stderr(t) } });
  const api = new SessionApi(sessions.service, runner, { scriptDirs, maxSessions, notify: { allowFromRequests: sessions.profile.notify.allowFromRequests, channelsOf: (specs) => sessions.notifyChannels(specs, "notify", false), notifier }, onError: (id, e) => io.stderr(`pulse session mcp: session ${id}: ${e.message}\n`) });
  const server = createSessionMcpServer(api, opts.session === undefined ? {} : { onlySession: opts.session, noHistory: opts.history === false });
  await serveStdio(server);
  await api.pauseAll();
  await api.settled();
  await server.close();
  await sessions.close();
  return 0;
}
