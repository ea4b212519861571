/**
 * `pulse serve`: the session loop over HTTP: the seed's REST endpoints under /api/pulse and
 * the MCP tools over Streamable HTTP at /mcp, on one port, loopback by default; any other
 * address requires a bearer token. Sessions it starts run in this process.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createSessionMcpServer } from "../serve/mcp-tools.js";
import { errorBody, handleRest, readJson, sendJson } from "../serve/rest.js";
import { SessionApi } from "../serve/session-api.js";
import { SessionInputError } from "../coding/session/service.js";
import { bearerAuthorized, refuseUnauthorized } from "../transports/bearer.js";
import { guardRequest, listenerGuard, type ListenerGuard } from "../transports/listener-guard.js";
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { parseListen } from "./run-command.js";
import { availablePresets } from "../../adapters/agents/create-driver.js";
import { findOnPath } from "../../adapters/agents/cli/probe.js";
import { missingCli, openSessions } from "./session-setup.js";
import { driverFor, openWorkflows } from "./workflow-setup.js";
import { worktreesDir } from "../coding/session/workspace.js";
import { WorkflowApi } from "../serve/workflow-api.js";
import { handleWorkflowRest } from "../serve/workflow-rest.js";
import { registerWorkflowTools } from "../serve/workflow-mcp.js";
import { handleRunsRest, registerRunTools } from "../serve/runs-rest.js";
import type { RunRecords } from "../coding/run-records.js";
import { ComposedRunRecords } from "../coding/run-views.js";
import { openRunRecords } from "./runs-command.js";
import { parseMaxSessions, parseScriptDirs, parseStopGrace, type ServeOptions } from "./serve-options.js";

export async function runServe(opts: ServeOptions, io: CliIO, stop: { onStop: (fn: () => void) => void }): Promise<number> {
  const listen = parseListen(opts.listen ?? "3002");
  const token = opts.token ?? (io.env.PULSE_TOKEN || undefined);
  if (token !== undefined && token.length < 16) throw new UsageError("--token (or PULSE_TOKEN) must be at least 16 characters, e.g. $(openssl rand -hex 32)");
  if (!listen.loopback && token === undefined) throw new UsageError(`--listen ${opts.listen} serves sessions to other machines: give it a --token (or PULSE_TOKEN), which clients must send`);
  const maxSessions = parseMaxSessions(opts.maxSessions);
  const stopGraceMs = parseStopGrace(opts.stopGrace);
  const scriptDirs = parseScriptDirs(opts.allowScripts, io.cwd);
  const sessions = await openSessions(opts, io);
  // A profile channel that cannot be built (its secret missing here) is the user's to fix: exit 2.
  const { runner, notifier } = await sessions.runner({ io }).catch(async (e: unknown) => {
    await sessions.close();
    throw e instanceof SessionInputError ? new UsageError(e.message) : e;
  });
  const api = new SessionApi(sessions.service, runner, { scriptDirs, maxSessions, notify: { allowFromRequests: sessions.profile.notify.allowFromRequests, channelsOf: (specs) => sessions.notifyChannels(specs, "notify", false), notifier }, onError: (id, e) => io.stderr(`pulse serve: session ${id}: ${e.message}\n`) });

  // Workflows beside sessions, in the same store (none with memory:, which no other command could steer).
  const workflows = await openWorkflows(opts.store !== undefined ? { store: opts.store } : {}, io).catch((e: unknown) => {
    if (!(e instanceof UsageError)) throw e;
    io.stderr(`pulse serve: no workflows here: ${e.message}\n`);
    return undefined;
  });
  // Every loop's runs, read through the common view of the same store (GET /api/runs).
  // A PostgreSQL store migrated before the run views: sessions and workflows still listed, from their own records.
  const runs: RunRecords = await openRunRecords(opts.store, io).catch((e: unknown) => {
    if (!(e instanceof UsageError)) throw e;
    io.stderr(`pulse serve: /api/runs lists sessions and workflows only: ${e.message}\n`);
    return new ComposedRunRecords({ sessions: sessions.records, ...(workflows ? { workflows: workflows.records } : {}) });
  });
  const flows = workflows ? new WorkflowApi(workflows.records, await workflows.runner(), { profile: workflows.profile, worktreesDir: worktreesDir(io.env), checkDriver: (driver) => missingCli(driver.name, io.env, availablePresets, findOnPath) ?? void driverFor({ driver }, "run_pulse", workflows.storePath, io) }, { scriptDirs, maxRunning: maxSessions, onError: (id, e) => io.stderr(`pulse serve: workflow ${id}: ${e.message}\n`) }) : undefined;

  const server = createServer((req, res) => {
    // Host and Origin first: a web page is refused before anything else reads its request.
    if (guardRequest(guard, req, res)) return;
    if (token !== undefined && !bearerAuthorized(req, token)) return refuseUnauthorized(res);
    void route(api, flows, runs, guard, req, res).catch((e: unknown) => {
      const { status, body, headers } = errorBody(e);
      if (!res.headersSent) sendJson(res, status, body, headers);
      else res.end();
    });
  });
  server.keepAliveTimeout = 65_000;
  let guard: ListenerGuard;
  try {
    guard = listenerGuard(server, { allowHosts: opts.allowHost ?? [], allowOrigins: opts.allowOrigin ?? [] });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const url = await new Promise<string>((resolve, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) =>
      reject(e.code === "EADDRINUSE" ? new UsageError(`--listen ${opts.listen}: port ${listen.port} on ${listen.host} is already in use (try --listen 0 for a free one)`) : e.code === "EADDRNOTAVAIL" ? new UsageError(`--listen ${opts.listen}: ${listen.host} is not an address of this machine`) : e),
    );
    server.listen(listen.port, listen.host, () => {
      const a = server.address() as AddressInfo;
      resolve(`http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}`);
    });
  });
  io.stdout(`serving sessions at ${url}/api/pulse${flows ? `, workflows at ${url}/api/workflows` : ""}, every run at ${url}/api/runs and MCP at ${url}/mcp (${token !== undefined ? "bearer token required; " : ""}at most ${maxSessions} running at once; ${scriptDirs.length ? `scripts from ${scriptDirs.join(", ")}` : "no scripts"}; Ctrl-C stops)\n`);
  await new Promise<void>((resolve) => stop.onStop(resolve));
  io.stdout(`stopping: sessions running here pause; a turn still going in ${stopGraceMs / 1000} s is stopped, its work kept in a recovery commit\n`);
  await api.interruptAll(`interrupted by a signal to pulse serve (process ${process.pid})`, stopGraceMs);
  flows?.stopAll(`stopped by a signal to pulse serve (process ${process.pid})`);
  await api.settled();
  await flows?.settled();
  await notifier.flush();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  await sessions.close();
  await workflows?.close();
  await runs.close();
  return EXIT.ok;
}

async function route(api: SessionApi, flows: WorkflowApi | undefined, runs: RunRecords, guard: ListenerGuard, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (await handleRunsRest(runs, req, res)) return;
  if (await handleWorkflowRest(flows, req, res)) return;
  if (await handleRest(api, req, res)) return;
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  if (path !== "/mcp") return sendJson(res, 404, { error: { code: "NOT_FOUND", message: `no such endpoint: ${path} (REST under /api/pulse, /api/workflows and /api/runs, MCP at /mcp)` } });
  if (req.method !== "POST") return sendJson(res, 405, { error: { code: "METHOD_NOT_ALLOWED", message: "this MCP endpoint is stateless: POST JSON-RPC messages to /mcp" } });
  // Stateless: one server and transport per request, so nothing is kept between calls.
  const body = await readJson(req);
  const mcp = createSessionMcpServer(api);
  if (flows) registerWorkflowTools(mcp, flows);
  registerRunTools(mcp, runs);
  // The SDK's own DNS-rebinding protection too, as the MCP specification asks of servers.
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableDnsRebindingProtection: true, allowedHosts: guard.hostHeaders(), allowedOrigins: guard.origins() });
  res.on("close", () => {
    void transport.close();
    void mcp.close();
  });
  await mcp.connect(transport);
  await transport.handleRequest(req, res, body);
}
