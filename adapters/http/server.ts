/**
 * Serves substrates over the HTTP protocol of docs/substrates-http.md, so any process (the
 * conformance harness, a test, a host) can expose a SubstrateSet and watch every call arrive.
 * It validates everything before a substrate sees it and never lets a thrown error reach the
 * wire as more than a code and a message.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { SubstrateRequestError, SubstrateUnavailableError } from "../../src/substrates/contracts.js";
import type { CallContext, SubstrateSet, SubstrateSlotName } from "../../src/substrates/contracts.js";
import { contextProblem } from "../shared/validate.js";
import { API_PREFIX, HEALTH_PATH, isOperationOf, isSlotName, JSON_CONTENT_TYPE, SLOT_NAMES, statusForCode, traceIdOfTraceparent } from "./protocol.js";
import type { WireContext, WireError } from "./protocol.js";

export const DEFAULT_MAX_BODY_BYTES = 1 << 20;

/** One call as the server saw it, reported to `onCall` when it is answered. */
export interface SubstrateCall {
  slot: SubstrateSlotName;
  operation: string;
  args: unknown;
  context: unknown;
  /** The traceparent header as received, if any. */
  traceparent: string | undefined;
  result?: unknown;
  error?: WireError & { status: number };
  /** Milliseconds since the epoch, sub-millisecond precision. */
  startedAt: number;
  endedAt: number;
}

export interface SubstrateServerOptions {
  /** Sees every call that reached a known slot and operation with a JSON body, refused or not. */
  onCall?: (call: SubstrateCall) => void;
  maxBodyBytes?: number;
}

export interface SubstrateServer {
  server: Server;
  /** Port 0 (the default) picks a free port; the returned url is the base for httpSubstrates. */
  listen(port?: number, host?: string): Promise<{ url: string }>;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function createSubstrateServer(substrates: Partial<SubstrateSet>, options: SubstrateServerOptions = {}): SubstrateServer {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const served = SLOT_NAMES.filter((slot) => substrates[slot] !== undefined);

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const failure = error instanceof HttpError ? error : new HttpError(500, "INTERNAL", "the server failed while handling the request");
      send(res, failure.status, { error: { code: failure.code, message: failure.message } }, failure.headers);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = pathOf(req.url);
    if (path === HEALTH_PATH) {
      if (req.method !== "GET" && req.method !== "HEAD") throw new HttpError(405, "METHOD_NOT_ALLOWED", "use GET for /v1/health", { allow: "GET, HEAD" });
      send(res, 200, { ok: true, slots: served });
      return;
    }
    const route = /^\/v1\/([^/]+)\/([^/]+)$/.exec(path);
    if (!route) throw new HttpError(404, "NOT_FOUND", `no route ${JSON.stringify(path.slice(0, 100))}: use POST ${API_PREFIX}/{slot}/{operation} or GET ${HEALTH_PATH}`);
    const [, slot, operation] = route as unknown as [string, string, string];
    if (!isSlotName(slot)) throw new HttpError(404, "UNKNOWN_SLOT", `unknown slot ${JSON.stringify(slot.slice(0, 40))}: the slots are ${SLOT_NAMES.join(", ")}`);
    if (!isOperationOf(slot, operation)) throw new HttpError(404, "UNKNOWN_OPERATION", `the ${slot} substrate has no operation ${JSON.stringify(operation.slice(0, 60))}`);
    if (req.method !== "POST") throw new HttpError(405, "METHOD_NOT_ALLOWED", "substrate operations are called with POST", { allow: "POST" });
    const contentType = String(req.headers["content-type"] ?? "").toLowerCase();
    if (!/^application\/json\s*(;|$)/.test(contentType)) throw new HttpError(415, "UNSUPPORTED_MEDIA_TYPE", "send the request body as Content-Type: application/json");
    const body = parseBody(await readBody(req, res, maxBodyBytes));

    const startedAt = now();
    const traceparent = typeof req.headers.traceparent === "string" ? req.headers.traceparent : undefined;
    const call: SubstrateCall = { slot, operation, args: body.args, context: body.context, traceparent, startedAt, endedAt: startedAt };
    const abort = new AbortController();
    res.on("close", () => {
      // The client gave up (timeout, crash): let a slow substrate stop working for nobody.
      if (!res.writableFinished) abort.abort(new SubstrateUnavailableError(slot, "the client closed the connection"));
    });
    let status = 200;
    let payload: unknown;
    try {
      const result = await dispatch(substrates, slot, operation, body.args, body.context, traceparent, abort.signal);
      call.result = result === undefined ? null : result;
      payload = { result: call.result };
    } catch (error) {
      const wire = wireError(error);
      status = wire.status;
      payload = { error: { code: wire.code, message: wire.message } };
      call.error = wire;
    }
    call.endedAt = now();
    let text: string;
    try {
      text = JSON.stringify(payload);
    } catch {
      status = 500;
      call.error = { status, code: "INTERNAL", message: "the substrate returned a value that JSON cannot carry" };
      delete call.result;
      text = JSON.stringify({ error: { code: call.error.code, message: call.error.message } });
    }
    report(options.onCall, call);
    sendText(res, status, text);
  }

  return {
    server,
    listen(port = 0, host = "127.0.0.1") {
      return new Promise((resolve, reject) => {
        const onError = (error: Error) => reject(error);
        server.once("error", onError);
        server.listen(port, host, () => {
          server.off("error", onError);
          const address = server.address() as AddressInfo;
          const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
          resolve({ url: `http://${shown}:${address.port}` });
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        // Keep-alive connections would otherwise hold close() open until they time out.
        server.closeAllConnections();
      });
    },
  };
}

async function dispatch(
  substrates: Partial<SubstrateSet>,
  slot: SubstrateSlotName,
  operation: string,
  args: Record<string, unknown>,
  context: unknown,
  traceparent: string | undefined,
  signal: AbortSignal,
): Promise<unknown> {
  const problem = contextProblem(context);
  if (problem) throw new SubstrateRequestError(slot, "BAD_CONTEXT", problem);
  const wire = context as WireContext;
  if (traceparent !== undefined) {
    const traceId = traceIdOfTraceparent(traceparent);
    if (traceId === undefined) throw new SubstrateRequestError(slot, "BAD_CONTEXT", "the traceparent header is not a valid W3C traceparent");
    if (traceId !== wire.trace_id) throw new SubstrateRequestError(slot, "BAD_CONTEXT", `the traceparent header carries trace id ${traceId} but context.trace_id is ${wire.trace_id}`);
  }
  const substrate = substrates[slot] as unknown as Record<string, (args: unknown, ctx: CallContext) => Promise<unknown>> | undefined;
  if (!substrate) throw new HttpError(404, "SLOT_NOT_SERVED", `this server does not serve the ${slot} substrate`);
  const method = substrate[operation];
  if (typeof method !== "function") throw new HttpError(404, "UNKNOWN_OPERATION", `the ${slot} substrate served here does not implement ${operation}`);
  // Only the three context fields cross over: a JSON "signal" must not replace the real one.
  const ctx: CallContext = { trace_id: wire.trace_id, workspace_id: wire.workspace_id, signal };
  if (wire.tx_id !== undefined) ctx.tx_id = wire.tx_id;
  return await method.call(substrate, args, ctx);
}

function wireError(error: unknown): WireError & { status: number } {
  if (error instanceof HttpError) return { status: error.status, code: error.code, message: error.message };
  if (error instanceof SubstrateRequestError) return { status: statusForCode(error.code), code: error.code, message: error.message };
  if (error instanceof SubstrateUnavailableError) return { status: 503, code: error.code, message: error.message };
  // Anything else is a bug in the substrate: its details stay on this side of the wire.
  return { status: 500, code: "INTERNAL", message: "the substrate failed while handling the call" };
}

function pathOf(url: string | undefined): string {
  try {
    return new URL(url ?? "/", "http://substrate.invalid").pathname;
  } catch {
    throw new HttpError(400, "BAD_REQUEST", "the request target is not a valid URL");
  }
}

function parseBody(raw: Buffer): { args: Record<string, unknown>; context: unknown } {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString("utf8"));
  } catch {
    throw new HttpError(400, "BAD_REQUEST", "the request body is not valid JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new HttpError(400, "BAD_REQUEST", 'the request body must be an object {"args": {...}, "context": {...}}');
  const { args, context } = body as Record<string, unknown>;
  if (typeof args !== "object" || args === null || Array.isArray(args)) throw new HttpError(400, "BAD_REQUEST", 'the request body needs "args", an object of the operation\'s arguments');
  return { args: args as Record<string, unknown>, context };
}

/**
 * The body, up to `max` bytes. A larger one is answered 413 at once (without buffering it) and
 * the connection closed, so an endless upload cannot hold the server.
 */
function readBody(req: IncomingMessage, res: ServerResponse, max: number): Promise<Buffer> {
  const tooLarge = () => new HttpError(413, "PAYLOAD_TOO_LARGE", `the request body exceeds ${max} bytes`, { connection: "close" });
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > max) {
    closeAfterResponse(req, res);
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) {
        chunks.push(chunk);
        return;
      }
      req.off("data", onData);
      req.off("end", onEnd);
      closeAfterResponse(req, res);
      reject(tooLarge());
    };
    const onEnd = () => resolve(Buffer.concat(chunks, size));
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", () => reject(new HttpError(400, "BAD_REQUEST", "the request body could not be read")));
  });
}

function closeAfterResponse(req: IncomingMessage, res: ServerResponse): void {
  // Discard what is still arriving so the client reads the 413 instead of a reset, then close.
  req.on("data", () => {});
  res.once("finish", () => setTimeout(() => req.socket.destroy(), 1000).unref());
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendText(res, status, JSON.stringify(body), headers);
}

function sendText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { "content-type": JSON_CONTENT_TYPE, "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

function report(onCall: SubstrateServerOptions["onCall"], call: SubstrateCall): void {
  if (!onCall) return;
  try {
    onCall(call);
  } catch {
    // An observer's bug must not turn into a failed substrate call.
  }
}

function now(): number {
  return performance.timeOrigin + performance.now();
}
