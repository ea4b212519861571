/** `pulse mcp`: hosted loops as MCP tools (§14) over standard input and output or Streamable HTTP. */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { serveStdio } from "../serve/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { DEFAULT_MAX_BYTES } from "../source/load.js";
import { validateSources } from "../validator/validate.js";
import { compactLine } from "../format/compact.js";
import { createLoopMcpServer } from "../serve/loop-mcp.js";
import { errorBody, readJson, sendJson } from "../serve/rest.js";
import { bearerAuthorized, refuseUnauthorized } from "../transports/bearer.js";
import { guardRequest, listenerGuard, type ListenerGuard } from "../transports/listener-guard.js";
import { EXIT, UsageError } from "./exit-codes.js";
import type { CliIO } from "./io.js";
import { readManifestSources } from "./inputs.js";
import { parseListen } from "./run-command.js";
import { DEFAULT_STORE, openStoreForCli } from "./store-open.js";
import type { McpCliOptions } from "./mcp-options.js";

export async function runMcp(operands: readonly string[], opts: McpCliOptions, io: CliIO, signals: { onStop: (stop: () => void) => void }): Promise<number> {
  if (opts.stdio && opts.http !== undefined) throw new UsageError("--stdio and --http are two transports: give one");
  const listen = opts.http === undefined ? undefined : parseListen(opts.http);
  const token = opts.token ?? (io.env.PULSE_TOKEN || undefined);
  if (opts.token !== undefined && listen === undefined) throw new UsageError("--token guards --http: standard input and output need none");
  if (token !== undefined && token.length < 16) throw new UsageError("--token (or PULSE_TOKEN) must be at least 16 characters, e.g. $(openssl rand -hex 32)");
  if (listen && !listen.loopback && token === undefined) throw new UsageError(`--http ${opts.http} serves the loops to other machines: give it a --token (or PULSE_TOKEN), which clients must send`);
  if (operands.length === 0) throw new UsageError("pulse mcp needs manifests to serve, e.g. pulse mcp manifests/examples/hello.loop.yaml");
  const sources = await readManifestSources(operands, undefined, io, DEFAULT_MAX_BYTES);
  const errors = validateSources(sources).flatMap((r) => r.diagnostics.filter((d) => d.severity === "error").map((d) => compactLine(r.file, d)));
  if (errors.length > 0) {
    io.stderr(`${errors.join("\n")}\npulse mcp: ${errors.length} error${errors.length === 1 ? "" : "s"}; fix the manifests (pulse validate shows the details)\n`);
    return EXIT.problems;
  }
  const chosen = opts.store ?? (io.env.PULSE_STORE || undefined);
  const store = await openStoreForCli(chosen ?? DEFAULT_STORE, io, "pulse mcp", { memoryWithoutDriver: chosen === undefined, flag: opts.store !== undefined ? "--store" : "PULSE_STORE" });
  if (!store) return EXIT.problems;
  const { createHost, recordingHandler } = await import("../host/index.js");
  const host = await createHost({ workspace: opts.workspace ?? "default", store, defaultHandler: recordingHandler({ emits: (loopId, phaseId) => (host.loop(loopId)?.compiled.connections ?? []).filter((c) => c.connection.emit_phase === phaseId).map((c) => c.connection.token as never) }), onEscalation: () => undefined });
  try {
    for (const source of sources) {
      try {
        await host.load(source.value as Record<string, unknown>, { name: source.file });
      } catch (error) {
        io.stderr(`pulse mcp: ${source.file}: ${(error as Error).message}\n`);
        return EXIT.problems;
      }
    }
    const style = opts.style ?? "grouped";
    if (!listen) {
      const server = createLoopMcpServer(host, style);
      await serveStdio(server, (stop) => signals.onStop(stop));
      await server.close();
      return EXIT.ok;
    }
    let guard: ListenerGuard;
    const http = createServer((req, res) => {
      if (guardRequest(guard, req, res)) return;
      if (token !== undefined && !bearerAuthorized(req, token)) return refuseUnauthorized(res);
      void (async () => {
        const path = new URL(req.url ?? "/", "http://localhost").pathname;
        if (path !== "/mcp") return sendJson(res, 404, { error: { code: "NOT_FOUND", message: `no such endpoint: ${path.slice(0, 200)} (MCP at /mcp)` } });
        if (req.method !== "POST") return sendJson(res, 405, { error: { code: "METHOD_NOT_ALLOWED", message: "this MCP endpoint is stateless: POST JSON-RPC messages to /mcp" } });
        const body = await readJson(req);
        // Stateless: one server and transport per request, nothing kept between calls.
        const mcp = createLoopMcpServer(host, style);
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableDnsRebindingProtection: true, allowedHosts: guard.hostHeaders(), allowedOrigins: guard.origins() });
        res.on("close", () => {
          void transport.close();
          void mcp.close();
        });
        await mcp.connect(transport);
        await transport.handleRequest(req, res, body);
      })().catch((e: unknown) => {
        const { status, body, headers } = errorBody(e);
        if (!res.headersSent) sendJson(res, status, body, headers);
        else res.end();
      });
    });
    try {
      guard = listenerGuard(http, { allowHosts: opts.allowHost ?? [], allowOrigins: opts.allowOrigin ?? [] });
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    const url = await new Promise<string>((resolve, reject) => {
      http.once("error", (e: NodeJS.ErrnoException) => reject(e.code === "EADDRINUSE" ? new UsageError(`--http ${opts.http}: port ${listen.port} on ${listen.host} is already in use (--http 0 takes a free one)`) : e.code === "EADDRNOTAVAIL" ? new UsageError(`--http ${opts.http}: ${listen.host} is not an address of this machine`) : e));
      http.listen(listen.port, listen.host, () => {
        const a = http.address() as AddressInfo;
        resolve(`http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}`);
      });
    });
    io.stdout(`pulse mcp at ${url}/mcp (${style} tools of ${host.loops.map((l) => l.id).join(", ")}${token !== undefined ? "; bearer token required" : ""}; Ctrl-C stops)\n`);
    await new Promise<void>((resolve) => signals.onStop(resolve));
    await new Promise<void>((resolve) => {
      http.close(() => resolve());
      http.closeAllConnections();
    });
    return EXIT.ok;
  } finally {
    await host.stop({ timeoutMs: 10_000 });
    await store.close();
  }
}
