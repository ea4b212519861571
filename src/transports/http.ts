/**
 * The CloudEvents HTTP protocol binding for signals between hosts (`pulse run --listen/--route`).
 *
 *   POST {base}/loops/{loop_id}/events
 *   structured mode: Content-Type: application/cloudevents+json, the whole envelope as the body
 *   binary mode:     ce-specversion, ce-type, ce-source, ce-id, ce-subject, ce-time and one
 *                    ce-<name> header per extension; Content-Type: application/json; the token
 *                    as the body
 *   both modes:      the W3C `traceparent` header carries the emitting iteration's trace
 *
 * Replies: 200 {"outcome":"accepted"|"duplicate"}; 400 malformed request; 404 unknown route;
 * 413 body too large; 422 {"error":{"code","message"}} the receiver rejected the signal (an
 * invalid envelope or token, a loop it does not run). 4xx is final for the sender; 5xx, a refused
 * connection or a timeout is a TransportError, which at-least-once delivery retries. The SDK's
 * own HTTP emitter has no timeout and sets no traceparent header, hence this module.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Ack, Transport } from "../connections/contracts.js";
import { TransportError } from "../connections/contracts.js";
import type { PulseCloudEvent } from "../tokens/types.js";

export interface HttpTransportOptions {
  /** loop_id → base URL of the host that runs it (e.g. http://127.0.0.1:7071). */
  routes: Record<string, string>;
  mode?: "structured" | "binary";
  timeoutMs?: number;
  fetch?: typeof fetch;
}

const CONTEXT = ["specversion", "type", "source", "id", "subject", "time", "dataschema"] as const;

export function eventsUrl(base: string, loopId: string): string {
  return `${base.replace(/\/+$/, "")}/loops/${encodeURIComponent(loopId)}/events`;
}

export class HttpTransport implements Transport {
  private readonly fetch: typeof fetch;

  constructor(private readonly o: HttpTransportOptions) {
    this.fetch = o.fetch ?? globalThis.fetch;
  }

  async send(envelope: PulseCloudEvent, toLoop: string): Promise<Ack> {
    const base = this.o.routes[toLoop];
    if (!base) return { outcome: "rejected", reason: `no route to loop ${toLoop} (pulse run --route ${toLoop}=http://host:port)` };
    const { headers, body } = this.o.mode === "binary" ? binary(envelope) : structured(envelope);
    let response: Response;
    try {
      response = await this.fetch(eventsUrl(base, toLoop), { method: "POST", headers, body, signal: AbortSignal.timeout(this.o.timeoutMs ?? 5_000) });
    } catch (error) {
      const reason = (error as Error)?.name === "TimeoutError" ? `timed out after ${this.o.timeoutMs ?? 5_000} ms` : ((error as { cause?: { code?: string } })?.cause?.code ?? (error as Error)?.message);
      throw new TransportError(`signal ${envelope.id} to ${toLoop} at ${base}: ${reason}`, { cause: error });
    }
    const text = await response.text().catch(() => "");
    if (response.status >= 500) throw new TransportError(`signal ${envelope.id} to ${toLoop}: HTTP ${response.status}`);
    let reply: { outcome?: unknown; error?: { message?: unknown } } = {};
    try {
      reply = JSON.parse(text);
    } catch {
      // An unreadable 2xx body is the receiver's fault; treat below.
    }
    if (response.status === 200 && (reply.outcome === "accepted" || reply.outcome === "duplicate")) return { outcome: reply.outcome };
    if (response.status >= 200 && response.status < 300) throw new TransportError(`signal ${envelope.id} to ${toLoop}: unexpected reply ${text.slice(0, 120)}`);
    return { outcome: "rejected", reason: typeof reply.error?.message === "string" ? reply.error.message : `HTTP ${response.status}` };
  }
}

function structured(envelope: PulseCloudEvent): { headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = { "content-type": "application/cloudevents+json" };
  if (envelope.traceparent) headers.traceparent = envelope.traceparent;
  return { headers, body: JSON.stringify(envelope) };
}

function binary(envelope: PulseCloudEvent): { headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = { "content-type": envelope.datacontenttype ?? "application/json" };
  for (const [name, value] of Object.entries(envelope)) {
    if (name === "data" || name === "datacontenttype" || value === undefined) continue;
    if (name === "traceparent") headers.traceparent = String(value);
    else headers[`ce-${name}`] = String(value);
  }
  return { headers, body: JSON.stringify(envelope.data) };
}

/** The receiving side: one handler for every loop the host runs. */
export type SignalHandler = (loopId: string, envelope: unknown) => Promise<Ack>;

export interface SignalServer {
  server: Server;
  listen(port?: number, host?: string): Promise<{ url: string }>;
  close(): Promise<void>;
}

export function createSignalServer(handle: SignalHandler, options: { maxBodyBytes?: number } = {}): SignalServer {
  const maxBody = options.maxBodyBytes ?? 1 << 20;
  const server = createServer((req, res) => void serve(req, res, handle, maxBody));
  server.keepAliveTimeout = 5_000;
  return {
    server,
    listen: (port = 0, host = "127.0.0.1") =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          const address = server.address();
          const p = typeof address === "object" && address ? address.port : port;
          resolve({ url: `http://${host}:${p}` });
        });
      }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage, max: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function serve(req: IncomingMessage, res: ServerResponse, handle: SignalHandler, maxBody: number): Promise<void> {
  try {
    const m = /^\/loops\/([^/]+)\/events$/.exec((req.url ?? "").split("?")[0] as string);
    if (!m) return reply(res, 404, { error: { code: "NOT_FOUND", message: "signals go to POST /loops/{loop_id}/events" } });
    if (req.method !== "POST") return reply(res, 405, { error: { code: "METHOD_NOT_ALLOWED", message: "use POST" } });
    const body = await readBody(req, maxBody);
    if (body === undefined) return reply(res, 413, { error: { code: "TOO_LARGE", message: `a signal may be at most ${maxBody} bytes` } });
    let envelope: Record<string, unknown>;
    const type = String(req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
    try {
      if (type === "application/cloudevents+json") {
        envelope = JSON.parse(body) as Record<string, unknown>;
      } else {
        envelope = { datacontenttype: type || "application/json", data: JSON.parse(body) as unknown };
        for (const [name, value] of Object.entries(req.headers)) if (name.startsWith("ce-") && typeof value === "string") envelope[name.slice(3)] = value;
        if (!CONTEXT.every((c) => c === "subject" || c === "dataschema" || c === "time" || envelope[c] !== undefined)) {
          return reply(res, 400, { error: { code: "BAD_REQUEST", message: "binary mode needs ce-specversion, ce-type, ce-source and ce-id headers" } });
        }
      }
    } catch {
      return reply(res, 400, { error: { code: "BAD_REQUEST", message: "the body is not JSON" } });
    }
    if (envelope === null || typeof envelope !== "object" || Array.isArray(envelope)) return reply(res, 400, { error: { code: "BAD_REQUEST", message: "the envelope must be a JSON object" } });
    const traceparent = req.headers.traceparent;
    if (typeof traceparent === "string" && envelope.traceparent === undefined) envelope.traceparent = traceparent;
    const ack = await handle(decodeURIComponent(m[1] as string), envelope);
    if (ack.outcome === "rejected") return reply(res, 422, { error: { code: "REJECTED", message: ack.reason ?? "rejected" } });
    return reply(res, 200, { outcome: ack.outcome });
  } catch {
    if (!res.headersSent) reply(res, 500, { error: { code: "INTERNAL", message: "the receiver failed" } });
  }
}
