/**
 * `pulse guidance serve`'s listener: MCP over Streamable HTTP at /mcp (stateless, JSON
 * responses, as the seed serves it), loopback by default. The listener rules of every pulse
 * listener apply: Host and Origin checked first (a web page never reaches the agent's inbox),
 * and a bearer token whenever it listens off loopback.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { bearerAuthorized, refuseUnauthorized } from "../transports/bearer.js";
import { guardRequest, listenerGuard, type ListenerGuard } from "../transports/listener-guard.js";
import type { GuidanceSidecar } from "../coding/guidance/sidecar.js";
import { createGuidanceMcpServer } from "./guidance-mcp.js";
import { errorBody, readJson, sendJson } from "./rest.js";

export interface GuidanceHttpOptions {
  host: string;
  port: number;
  /** Required by the caller when host is not loopback. */
  token?: string;
  allowHosts?: readonly string[];
  allowOrigins?: readonly string[];
}

export interface GuidanceHttp {
  url: string;
  close(): Promise<void>;
}

export async function startGuidanceHttp(sidecar: GuidanceSidecar, o: GuidanceHttpOptions): Promise<GuidanceHttp> {
  const server = createServer((req, res) => {
    if (guardRequest(guard, req, res)) return;
    if (o.token !== undefined && !bearerAuthorized(req, o.token)) return refuseUnauthorized(res);
    void route(sidecar, guard, req, res).catch((e: unknown) => {
      const { status, body } = errorBody(e);
      if (!res.headersSent) sendJson(res, status, body);
      else res.end();
    });
  });
  const guard: ListenerGuard = listenerGuard(server, { allowHosts: o.allowHosts ?? [], allowOrigins: o.allowOrigins ?? [] });
  const url = await new Promise<string>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => {
      const a = server.address() as AddressInfo;
      resolve(`http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}/mcp`);
    });
  });
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function route(sidecar: GuidanceSidecar, guard: ListenerGuard, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  if (path !== "/mcp") return sendJson(res, 404, { error: { code: "NOT_FOUND", message: `no such endpoint: ${path} (MCP at /mcp)` } });
  if (req.method !== "POST") return sendJson(res, 405, { error: { code: "METHOD_NOT_ALLOWED", message: "this MCP endpoint is stateless: POST JSON-RPC messages to /mcp" } });
  const body = await readJson(req);
  // Stateless: a server and transport per request, nothing kept between calls.
  const mcp = createGuidanceMcpServer(sidecar);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, enableDnsRebindingProtection: true, allowedHosts: guard.hostHeaders(), allowedOrigins: guard.origins() });
  res.on("close", () => {
    void transport.close();
    void mcp.close();
  });
  await mcp.connect(transport);
  await transport.handleRequest(req, res, body);
}
