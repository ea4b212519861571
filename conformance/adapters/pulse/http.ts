#!/usr/bin/env node
/**
 * Our runtime as an already-running service speaking the driver protocol over HTTP: each POST
 * body is one JSON-RPC request, each response body one JSON-RPC response. This is what
 * `pulse-conform --attach <url>` talks to:
 *
 *   node dist/conformance/adapters/pulse/http.js --port 7357   →   listening http://127.0.0.1:7357
 *
 * The service outlives sessions: `shutdown` stops the runtime, not the server (SIGINT/SIGTERM do).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { RPC } from "../../driver/protocol.js";
import { rpcError } from "../../driver/jsonrpc.js";
import { PulseAdapter } from "./adapter.js";
import { answer } from "./rpc-server.js";

/** Manifests with scripts are small, but a limit keeps one bad client from exhausting memory. */
const MAX_BODY_BYTES = 16 << 20;

export async function serveAdapter(port: number, host = "127.0.0.1"): Promise<{ url: string; close(): Promise<void> }> {
  const adapter = new PulseAdapter();
  const server = createServer((req, res) => {
    handle(adapter, req, res).catch(() => {
      if (!res.headersSent) send(res, 500, rpcError(null, RPC.runtimeError, "the adapter failed while reading the request", { code: "INTERNAL" }));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections (fetch pools them) would otherwise hold close() open.
      server.closeAllConnections();
      await closed;
      await adapter.handle("shutdown", {});
    },
  };
}

async function handle(adapter: PulseAdapter, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== "POST") {
    send(res, 405, rpcError(null, RPC.invalidRequest, "POST one JSON-RPC 2.0 request per body"), { allow: "POST" });
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Past the limit, read on without keeping anything: a client still sending would see a
    // reset instead of the 413 if the socket were cut now.
    if (size <= MAX_BODY_BYTES) chunks.push(chunk);
  }
  if (size > MAX_BODY_BYTES) {
    send(res, 413, rpcError(null, RPC.invalidRequest, `the request body exceeds ${MAX_BODY_BYTES} bytes`));
    return;
  }
  // Protocol and runtime errors are JSON-RPC errors in a 200, as over stdio: the status line
  // only says whether a JSON-RPC exchange happened.
  send(res, 200, await answer(adapter, Buffer.concat(chunks).toString("utf8")));
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(data), ...headers });
  res.end(data);
}

function isMain(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  const { values } = parseArgs({ options: { port: { type: "string", default: "0" }, host: { type: "string", default: "127.0.0.1" } } });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`usage: http.js [--port N] [--host H] (got --port ${values.port})\n`);
    process.exit(4);
  }
  const service = await serveAdapter(port, values.host);
  process.stdout.write(`listening ${service.url}\n`);
  const stop = (): void => void service.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}
