/**
 * The CloudEvents HTTP protocol binding for signals between hosts (`pulse run --listen/--route`).
 *
 *   POST {base}/loops/{loop_id}/events
 *   structured mode: Content-Type: application/cloudevents+json, the whole envelope as the body
 *   binary mode:     ce-specversion, ce-type, ce-source, ce-id, ce-subject, ce-time and one
 *                    ce-<name> header per extension (ce-traceparent included), values
 *                    percent-encoded; Content-Type: application/json; the token as the body
 *   both modes:      the W3C `traceparent` header carries the emitting iteration's trace too
 *
 * Replies: 200 {"outcome":"accepted"|"duplicate"}, sent only once the iteration the signal
 * started has committed (with a durable store: written, its inbox record with it), so a sender
 * settles its outbox only then; a duplicate already in the inbox is answered at once, a duplicate
 * whose first delivery is still running once that iteration commits; 503 NOT_COMMITTED that iteration
 * failed to commit (retried by the sender; the receiver takes it again); 400 malformed request; 401 a missing or
 * wrong token; 404 unknown route; 503 the receiving host is stopped (retried by the sender);
 * 413 body too large; 422 {"error":{"code","message"}} the receiver rejected the signal (an
 * invalid envelope or token, a loop it does not run). Any other 2xx (a foreign receiver's bare
 * 202) is delivery: the CloudEvents binding asks no body of it. 4xx is final for the sender,
 * except 408 and 429; those, 5xx, a refused connection or a timeout are a TransportError, which
 * at-least-once delivery retries. 3xx is not followed: it is final too, naming the location.
 *
 * The SDK's own HTTP emitter has no timeout and sets no traceparent header, hence this module. It
 * sends with node:http and a keep-alive agent: global fetch cost about three times as much per
 * signal (bench/signals.bench.ts).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { contentTypeIs, guardRequest, listenerGuard } from "./listener-guard.js";
import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { Ack, Transport } from "../connections/contracts.js";
import { ReceiverUnavailableError, TransportError } from "../connections/contracts.js";
import { readBoundedText } from "./bounded-body.js";
import { isLoopback } from "./loopback.js";

export { isLoopback } from "./loopback.js";
import type { PulseCloudEvent } from "../tokens/types.js";

export interface HttpTransportOptions {
  /** loop_id → base URL of the host that runs it (e.g. http://127.0.0.1:7071). */
  routes: Record<string, string>;
  mode?: "structured" | "binary";
  /** Bound on one request, connect to last byte of the reply (default 5000). */
  timeoutMs?: number;
  /** Keep-alive agents for http: and https: (default: one pair per transport, 64 sockets per host). */
  agents?: { http?: HttpAgent; https?: HttpsAgent };
  /** Send with this fetch instead (custom dispatchers); node:http with keep-alive is ≈ 3× faster. */
  fetch?: typeof fetch;
  /** The receivers' shared token, sent as `Authorization: Bearer <token>` (SignalServerOptions.token). */
  token?: string;
}

interface Reply {
  status: number;
  text: string;
  /** The Location of a redirect. */
  location?: string | undefined;
}

class Timeout extends Error {
  override readonly name = "TimeoutError";
}

/** Replies are small JSON documents: anything longer is cut (and then fails to parse). */
const MAX_REPLY = 64 * 1024;

const CONTEXT = ["specversion", "type", "source", "id", "subject", "time", "dataschema"] as const;

/** 4xx replies that say "not now" rather than "never": the receiver is overloaded or was too slow. */
const TRANSIENT = new Set([408, 429]);

/**
 * Binary-mode header values are percent-encoded (CloudEvents HTTP binding §3.1.3.2): space, `"`,
 * `%` and everything outside printable ASCII, as UTF-8 bytes. Unencoded, a workspace id such as
 * "équipe 東京" cannot be put in a header at all, and the send would fail on every retry.
 */
export function encodeHeaderValue(value: string): string {
  if (/^[\x21\x23\x24\x26-\x7e]*$/.test(value)) return value;
  let out = "";
  for (const ch of value) {
    const code = ch.codePointAt(0) as number;
    if (code >= 0x21 && code <= 0x7e && ch !== '"' && ch !== "%") out += ch;
    else for (const byte of Buffer.from(ch, "utf8")) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** The inverse of encodeHeaderValue (throws URIError on a malformed escape). */
export function decodeHeaderValue(value: string): string {
  return value.includes("%") ? decodeURIComponent(value) : value;
}

export function eventsUrl(base: string, loopId: string): string {
  return `${base.replace(/\/+$/, "")}/loops/${encodeURIComponent(loopId)}/events`;
}

export class HttpTransport implements Transport {
  private readonly agents: { http: HttpAgent; https: HttpsAgent };
  private readonly ownAgents: (HttpAgent | HttpsAgent)[] = [];

  constructor(private readonly o: HttpTransportOptions) {
    const own = <A extends HttpAgent | HttpsAgent>(agent: A): A => (this.ownAgents.push(agent), agent);
    // Idle sockets close after 4 s, before the receiver's 5 s keep-alive timeout closes them under a request.
    const options = { keepAlive: true, maxSockets: 64, timeout: 4_000 };
    this.agents = { http: o.agents?.http ?? own(new HttpAgent(options)), https: o.agents?.https ?? own(new HttpsAgent(options)) };
  }

  async send(envelope: PulseCloudEvent, toLoop: string): Promise<Ack> {
    const base = this.o.routes[toLoop];
    if (!base) return { outcome: "rejected", reason: `no route to loop ${toLoop} (pulse run --route ${toLoop}=http://host:port)` };
    const { headers, body } = this.o.mode === "binary" ? binary(envelope) : structured(envelope);
    if (this.o.token !== undefined) headers.authorization = `Bearer ${this.o.token}`;
    const timeoutMs = this.o.timeoutMs ?? 5_000;
    let response: Reply;
    try {
      response = await (this.o.fetch ? this.viaFetch(eventsUrl(base, toLoop), headers, body, timeoutMs) : this.post(new URL(eventsUrl(base, toLoop)), headers, body, timeoutMs));
    } catch (error) {
      const reason = (error as Error)?.name === "TimeoutError" ? `timed out after ${timeoutMs} ms` : ((error as { code?: string })?.code ?? (error as { cause?: { code?: string } })?.cause?.code ?? (error as Error)?.message);
      throw new TransportError(`signal ${envelope.id} to ${toLoop} at ${base}: ${reason}`, { cause: error });
    }
    const { status, text } = response;
    if (status >= 500 || TRANSIENT.has(status)) throw new TransportError(`signal ${envelope.id} to ${toLoop}: HTTP ${status}`);
    let reply: { outcome?: unknown; error?: { message?: unknown } } = {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed !== null && typeof parsed === "object") reply = parsed;
    } catch {
      // A foreign receiver's body (or none): its status says what happened.
    }
    // Any 2xx is delivery (a CloudEvents receiver need not answer with a body); ours says duplicate.
    if (status >= 200 && status < 300) return { outcome: reply.outcome === "duplicate" ? "duplicate" : "accepted" };
    if (status >= 300 && status < 400) return { outcome: "rejected", reason: `HTTP ${status} redirecting to ${JSON.stringify(response.location ?? null)}, not followed: route ${toLoop} to the receiver itself` };
    return { outcome: "rejected", reason: typeof reply.error?.message === "string" ? reply.error.message : `HTTP ${status}` };
  }

  /** Closes the idle keep-alive sockets of the agents this transport made. */
  async close(): Promise<void> {
    for (const agent of this.ownAgents) agent.destroy();
  }

  private post(url: URL, headers: Record<string, string>, body: string, timeoutMs: number): Promise<Reply> {
    const https = url.protocol === "https:";
    const send = https ? httpsRequest : httpRequest;
    return new Promise<Reply>((resolve, reject) => {
      const req = send(url, { method: "POST", agent: https ? this.agents.https : this.agents.http, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } });
      const timer = setTimeout(() => req.destroy(new Timeout(`timed out after ${timeoutMs} ms`)), timeoutMs);
      const fail = (error: Error) => {
        clearTimeout(timer);
        reject(error);
      };
      req.on("error", fail);
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_REPLY) chunks.push(chunk);
        });
        res.on("error", fail);
        res.on("end", () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8"), location: res.headers.location });
        });
      });
      req.end(body);
    });
  }

  private async viaFetch(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<Reply> {
    const response = await (this.o.fetch as typeof fetch)(url, { method: "POST", headers, body, signal: AbortSignal.timeout(timeoutMs), redirect: "manual" });
    // Replies are small JSON documents: a longer one is not read (and then fails to parse).
    const text = await readBoundedText(response, MAX_REPLY).catch(() => "");
    return { status: response.status, text, location: response.headers.get("location") ?? undefined };
  }
}

function structured(envelope: PulseCloudEvent): { headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = { "content-type": "application/cloudevents+json" };
  if (envelope.traceparent) headers.traceparent = envelope.traceparent;
  return { headers, body: JSON.stringify(envelope) };
}

/** The CloudEvents binary content mode: ce- headers (percent-encoded), traceparent, the token as the body. */
export function binary(envelope: PulseCloudEvent): { headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = { "content-type": envelope.datacontenttype ?? "application/json" };
  for (const [name, value] of Object.entries(envelope)) {
    if (name === "data" || name === "datacontenttype" || value === undefined) continue;
    // Every attribute and extension is its own ce- header (the distributed-tracing one too, so a
    // receiver rebuilding the event keeps it); the trace also goes as the W3C header itself.
    headers[`ce-${name}`] = encodeHeaderValue(String(value));
    if (name === "traceparent") headers.traceparent = String(value);
  }
  return { headers, body: JSON.stringify(envelope.data) };
}

/** The receiving side: one handler for every loop the host runs. */
export type SignalHandler = (loopId: string, envelope: unknown) => Promise<Ack>;

export interface SignalServer {
  server: Server;
  /** Binds 127.0.0.1 by default; any other address needs a token (SignalServerOptions.token). */
  listen(port?: number, host?: string): Promise<{ url: string }>;
  close(): Promise<void>;
}

export interface SignalServerOptions {
  /** Largest request body (default 1 MiB): a larger one is answered 413, a declared one before it is read. */
  maxBodyBytes?: number;
  /**
   * A shared secret senders present as `Authorization: Bearer <token>` (HttpTransportOptions.token,
   * pulse run --token). Without it the server only binds loopback; with it, every request must
   * carry it, loopback included.
   */
  token?: string;
  /** Host names and browser origins accepted beyond the listener's own (pulse run --allow-host, --allow-origin). */
  allowHosts?: readonly string[];
  allowOrigins?: readonly string[];
}

/** What a signal may be sent as: CloudEvents structured mode, or a JSON body in binary mode. */
const SIGNAL_CONTENT_TYPES = ["application/cloudevents+json", "application/json"];

export const DEFAULT_MAX_SIGNAL_BYTES = 1 << 20;


export function createSignalServer(handle: SignalHandler, options: SignalServerOptions = {}): SignalServer {
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_SIGNAL_BYTES;
  if (options.token !== undefined && options.token.length < 16) throw new TypeError("a signal server's token must be at least 16 characters (e.g. openssl rand -hex 32)");
  const expected = options.token === undefined ? undefined : createHash("sha256").update(`Bearer ${options.token}`).digest();
  const server = createServer((req, res) => {
    // A web page can reach a loopback port too: refused before anything reads its request.
    if (guardRequest(guard, req, res)) return;
    void serve(req, res, handle, maxBody, expected);
  });
  const guard = listenerGuard(server, { allowHosts: options.allowHosts ?? [], allowOrigins: options.allowOrigins ?? [] });
  server.keepAliveTimeout = 5_000;
  return {
    server,
    listen: (port = 0, host = "127.0.0.1") =>
      new Promise((resolve, reject) => {
        if (!isLoopback(host) && expected === undefined) {
          reject(new Error(`a signal server binding ${host} (beyond loopback) needs a token: anyone who can reach it could post signals`));
          return;
        }
        server.once("error", reject);
        server.listen(port, host, () => {
          const address = server.address();
          const p = typeof address === "object" && address ? address.port : port;
          resolve({ url: `http://${host.includes(":") ? `[${host}]` : host}:${p}` });
        });
      }),
    // A request still open waits for an iteration that did not commit (its host stopped first):
    // cut, it is retried by its sender, which keeps the signal meanwhile.
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Whether the request carries the token: compared as hashes, in constant time. */
function authorized(req: IncomingMessage, expected: Buffer | undefined): boolean {
  if (expected === undefined) return true;
  const given = req.headers.authorization;
  if (typeof given !== "string") return false;
  return timingSafeEqual(createHash("sha256").update(given).digest(), expected);
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/**
 * The body as text, or undefined past `max` bytes. A declared Content-Length over `max` is
 * refused before a byte is read, and a body that grows past it is not buffered further.
 */
function readBody(req: IncomingMessage, max: number): Promise<string | undefined> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > max) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) return void chunks.push(chunk);
      req.off("data", onData);
      resolve(undefined);
    };
    req.on("data", onData);
    req.on("end", () => resolve(size > max ? undefined : Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Answers 413 at once and closes the connection after it, discarding what still arrives. */
function tooLarge(req: IncomingMessage, res: ServerResponse, max: number): void {
  req.on("data", () => {});
  res.setHeader("connection", "close");
  res.once("finish", () => setTimeout(() => req.socket.destroy(), 1_000).unref());
  reply(res, 413, { error: { code: "TOO_LARGE", message: `a signal may be at most ${max} bytes` } });
}

async function serve(req: IncomingMessage, res: ServerResponse, handle: SignalHandler, maxBody: number, token: Buffer | undefined): Promise<void> {
  const bad = (message: string) => reply(res, 400, { error: { code: "BAD_REQUEST", message } });
  try {
    if (!authorized(req, token)) {
      req.resume();
      res.setHeader("www-authenticate", 'Bearer realm="pulse signals"');
      return reply(res, 401, { error: { code: "UNAUTHORIZED", message: "this receiver needs its token: Authorization: Bearer <token> (pulse run --token)" } });
    }
    const m = /^\/loops\/([^/]+)\/events$/.exec((req.url ?? "").split("?")[0] as string);
    if (!m) return reply(res, 404, { error: { code: "NOT_FOUND", message: "signals go to POST /loops/{loop_id}/events" } });
    if (req.method !== "POST") return reply(res, 405, { error: { code: "METHOD_NOT_ALLOWED", message: "use POST" } });
    let loopId: string;
    try {
      loopId = decodeURIComponent(m[1] as string);
    } catch {
      return bad("the loop id in the path is not percent-encoded UTF-8");
    }
    // Binary mode's ce-* headers make a browser ask first; any other body type a page could send unasked.
    if (!contentTypeIs(req, SIGNAL_CONTENT_TYPES) && typeof req.headers["ce-specversion"] !== "string") {
      req.resume();
      return reply(res, 415, { error: { code: "UNSUPPORTED_MEDIA_TYPE", message: `send a signal as application/cloudevents+json (structured mode) or with ce-* headers (binary mode), not ${JSON.stringify(String(req.headers["content-type"] ?? "no content type"))}` } });
    }
    const body = await readBody(req, maxBody);
    if (body === undefined) return tooLarge(req, res, maxBody);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return bad("the body is not JSON");
    }
    let envelope: Record<string, unknown>;
    const type = String(req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
    if (type === "application/cloudevents+json") {
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return bad("the envelope must be a JSON object");
      envelope = parsed as Record<string, unknown>;
    } else {
      envelope = { datacontenttype: type || "application/json", data: parsed };
      for (const [name, value] of Object.entries(req.headers)) {
        // data and its content type come from the body and Content-Type, never from a header.
        if (!name.startsWith("ce-") || name === "ce-data" || name === "ce-datacontenttype" || typeof value !== "string") continue;
        try {
          envelope[name.slice(3)] = decodeHeaderValue(value);
        } catch {
          return bad(`header ${name} is not percent-encoded UTF-8`);
        }
      }
      if (!CONTEXT.every((c) => c === "subject" || c === "dataschema" || c === "time" || envelope[c] !== undefined)) {
        return bad("binary mode needs ce-specversion, ce-type, ce-source and ce-id headers");
      }
    }
    const traceparent = req.headers.traceparent;
    if (typeof traceparent === "string" && envelope.traceparent === undefined) envelope.traceparent = traceparent;
    const ack = await handle(loopId, envelope);
    if (ack.outcome === "rejected") return reply(res, 422, { error: { code: "REJECTED", message: ack.reason ?? "rejected" } });
    if (ack.committed) {
      // Answered once the iteration the signal started (with its inbox record) has committed, as a
      // broker acks only then: a receiver that dies first never answers, and the sender, keeping
      // the signal in its outbox, sends it again.
      try {
        await ack.committed;
      } catch (error) {
        return reply(res, 503, { error: { code: "NOT_COMMITTED", message: `the iteration signal ${String(envelope.id)} started did not commit (${(error as Error)?.message ?? String(error)}): send it again` } });
      }
    }
    return reply(res, 200, { outcome: ack.outcome });
  } catch (error) {
    if (res.headersSent) return;
    // "Not now" (a stopped host): the sender treats 503 as transient and retries.
    if (error instanceof ReceiverUnavailableError) reply(res, 503, { error: { code: "UNAVAILABLE", message: error.message } });
    else reply(res, 500, { error: { code: "INTERNAL", message: "the receiver failed" } });
  }
}
