/**
 * The seed's REST endpoints over the session operations: POST /api/pulse/start, GET
 * /api/pulse/:id, GET /api/pulse?status=…, POST /api/pulse/:id/pause|resume|abort, and GET
 * /api/pulse/:id/events?after=SEQ (the session's event stream, a page at a time), POST
 * /api/pulse/:id/steer and /api/pulse/:id/signal (a guidance sidecar's SurpriseSignal). Bodies are
 * JSON; a bad one is a 400 that names what is wrong; unknown sessions 404; a session in the
 * wrong state for the request 409.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { SessionRecordsError } from "../coding/session/records.js";
import { SessionRepoError } from "../coding/session/repo.js";
import { SessionError } from "../coding/session/runner.js";
import { SessionInputError, SessionStateError } from "../coding/session/service.js";
import { SurpriseInputError } from "../coding/guidance/surprise.js";
import { BusyError, ForbiddenError, RepoBusyError, type SessionApi } from "./session-api.js";

export const MAX_BODY_BYTES = 1 << 20;
/** Deeper JSON than any request needs: refused before anything walks it (and overflows the stack). */
export const MAX_JSON_DEPTH = 64;
const JSON_TYPE = /^application\/json\s*(;|$)/i;
/** A signal in CloudEvents structured mode, or plain JSON (what the signal listener of `pulse run --listen` takes too); neither can be sent cross-site without a preflight. */
export const SIGNAL_TYPE = /^application\/(cloudevents\+)?json\s*(;|$)/i;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/**
 * The request's JSON body (an empty body is `{}`), refused when too large, too deep or not JSON.
 * Every POST must say it is application/json, even an empty one: a web page can send any other
 * type (text/plain, a form, none) without asking first, never this one.
 */
export async function readJson(req: IncomingMessage, maxBytes = MAX_BODY_BYTES, accept: RegExp = JSON_TYPE): Promise<unknown> {
  const type = req.headers["content-type"] ?? "";
  if (!accept.test(type)) {
    req.resume();
    const wanted = accept === JSON_TYPE ? "application/json" : "application/cloudevents+json (structured mode) or application/json";
    throw new HttpError(415, "UNSUPPORTED_MEDIA_TYPE", `send the request with Content-Type: ${wanted}${type ? `, not ${type.slice(0, 80)}` : " (curl -H 'content-type: application/json' …)"}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new HttpError(413, "TOO_LARGE", `the body is larger than ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (text === "") return {};
  if (depthOver(text, MAX_JSON_DEPTH)) throw new HttpError(400, "BAD_JSON", `the body nests deeper than ${MAX_JSON_DEPTH} levels`);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new HttpError(400, "BAD_JSON", `the body is not JSON: ${(e as Error).message}`);
  }
}

/** Whether JSON text opens more than `max` arrays or objects at once (strings skipped). */
function depthOver(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

/** A path segment, decoded; a malformed escape (`%E0%A4%A`) is the client's error. */
export function segment(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new HttpError(400, "BAD_PATH", `${JSON.stringify(text.slice(0, 80))} in the path is not percent-encoded UTF-8`);
  }
}

/** Our errors as HTTP statuses; anything else is a 500 with its message (never a stack). */
export function errorBody(e: unknown): { status: number; body: { error: { code: string; message: string; field?: string } }; headers?: Record<string, string> } {
  const err = e as Error;
  if (e instanceof ForbiddenError) return { status: 403, body: { error: { code: "FORBIDDEN", message: e.message, field: e.field } } };
  if (e instanceof BusyError) return { status: 429, body: { error: { code: "TOO_MANY_SESSIONS", message: e.message } }, headers: { "retry-after": String(e.retryAfterSeconds) } };
  if (e instanceof RepoBusyError) return { status: 409, body: { error: { code: "REPO_BUSY", message: e.message, field: e.field } } };
  if (e instanceof HttpError) return { status: e.status, body: { error: { code: e.code, message: e.message, ...(e.field ? { field: e.field } : {}) } } };
  if (e instanceof SurpriseInputError) return { status: 400, body: { error: { code: "BAD_SIGNAL", message: e.message, field: e.field } } };
  if (e instanceof SessionInputError) return { status: 400, body: { error: { code: "BAD_REQUEST", message: e.message, field: e.field } } };
  if (e instanceof SessionRepoError) return { status: 400, body: { error: { code: "BAD_REQUEST", message: e.message } } };
  if (e instanceof SessionStateError) return { status: e.code === "NOT_FOUND" ? 404 : 409, body: { error: { code: e.code, message: e.message } } };
  if (e instanceof SessionError) return { status: e.code === "NOT_FOUND" ? 404 : 409, body: { error: { code: e.code, message: e.message } } };
  if (e instanceof SessionRecordsError) return { status: e.code === "NOT_FOUND" ? 404 : 409, body: { error: { code: e.code, message: e.message } } };
  return { status: 500, body: { error: { code: "INTERNAL", message: err?.message ?? String(e) } } };
}

const ACTIONS = new Set(["pause", "resume", "abort"]);
const RESUME_FIELDS = new Set(["maxCost", "maxTokens", "maxWall"]);

/** Handles /api/pulse…; returns false for other paths. */
export async function handleRest(api: SessionApi, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  let url: URL;
  try {
    url = new URL(req.url ?? "/", "http://localhost");
  } catch {
    sendJson(res, 400, { error: { code: "BAD_PATH", message: "the request path is not a URL path" } });
    return true;
  }
  const parts = url.pathname.split("/").filter(Boolean);
  if (parts[0] !== "api" || parts[1] !== "pulse") return false;
  const method = req.method ?? "GET";
  const allow = (methods: string) => {
    if (!methods.split(",").includes(method)) throw new HttpError(405, "METHOD_NOT_ALLOWED", `${method} ${url.pathname}: use ${methods}`);
  };
  try {
    if (parts.length === 2) {
      allow("GET");
      const status = url.searchParams.get("status") ?? undefined;
      sendJson(res, 200, { sessions: await api.list(status === undefined || status === "" ? undefined : status) });
    } else if (parts.length === 3 && parts[2] === "start") {
      allow("POST");
      sendJson(res, 201, { session: await api.start(await readJson(req), "api") });
    } else if (parts.length === 3) {
      allow("GET");
      sendJson(res, 200, await api.status(segment(parts[2]!)));
    } else if (parts.length === 4 && parts[3] === "events") {
      allow("GET");
      // Followed by polling: ask again with after=next for what came since.
      sendJson(res, 200, await api.events(segment(parts[2]!), url.searchParams.get("after") ?? 0));
    } else if (parts.length === 4 && parts[3] === "steer") {
      allow("POST");
      const body = await readJson(req);
      if (body === null || typeof body !== "object" || Array.isArray(body) || Object.keys(body).some((k) => k !== "text")) throw new HttpError(400, "BAD_REQUEST", `steer takes {"text": "…"}, got ${JSON.stringify(body).slice(0, 80)}`, "text");
      const r = await api.steer(segment(parts[2]!), (body as { text?: unknown }).text, "api");
      sendJson(res, 200, { session: r.session, event: r.event });
    } else if (parts.length === 4 && parts[3] === "signal") {
      allow("POST");
      const r = await api.signal(segment(parts[2]!), await readJson(req, MAX_BODY_BYTES, SIGNAL_TYPE));
      sendJson(res, 200, { session: r.session, event: r.event, duplicate: r.duplicate, deferred: r.deferred });
    } else if (parts.length === 4 && ACTIONS.has(parts[3]!)) {
      allow("POST");
      const body = await readJson(req);
      const action = parts[3] as "pause" | "resume" | "abort";
      // A resume may raise the session's budgets; pause and abort take nothing.
      const allowed = action === "resume" ? RESUME_FIELDS : new Set<string>();
      if (body === null || typeof body !== "object" || Array.isArray(body) || Object.keys(body).some((k) => !allowed.has(k))) {
        throw new HttpError(400, "BAD_REQUEST", action === "resume" ? `resume takes {} or {maxCost, maxTokens, maxWall}, got ${JSON.stringify(body).slice(0, 80)}` : `${action} takes no body (or {}), got ${JSON.stringify(body).slice(0, 80)}`);
      }
      const id = segment(parts[2]!);
      sendJson(res, 200, { session: action === "resume" ? await api.resume(id, body as Record<string, unknown>) : await api[action](id) });
    } else {
      throw new HttpError(404, "NOT_FOUND", `no such endpoint: ${url.pathname} (POST /api/pulse/start, GET /api/pulse/:id, GET /api/pulse?status=, GET /api/pulse/:id/events?after=SEQ, POST /api/pulse/:id/pause|resume|abort|steer|signal)`);
    }
  } catch (e) {
    const { status, body, headers } = errorBody(e);
    sendJson(res, status, body, headers);
  }
  return true;
}
