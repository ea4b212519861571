/**
 * The seed's REST endpoints over the session operations: POST /api/pulse/start, GET
 * /api/pulse/:id, GET /api/pulse?status=…, POST /api/pulse/:id/pause|resume|abort. Bodies are
 * JSON; a bad one is a 400 that names what is wrong; unknown sessions 404; a session in the
 * wrong state for the request 409.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { SessionRecordsError } from "../coding/session/records.js";
import { SessionRepoError } from "../coding/session/repo.js";
import { SessionError } from "../coding/session/runner.js";
import { SessionInputError, SessionStateError } from "../coding/session/service.js";
import type { SessionApi } from "./session-api.js";

export const MAX_BODY_BYTES = 1 << 20;

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

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** The request's JSON body (an empty body is `{}`), refused when too large or not JSON. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, "TOO_LARGE", `the body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (text === "") return {};
  const type = req.headers["content-type"] ?? "";
  if (type && !/^application\/json\b/i.test(type)) throw new HttpError(415, "UNSUPPORTED_MEDIA_TYPE", `send the body as application/json, not ${type}`);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new HttpError(400, "BAD_JSON", `the body is not JSON: ${(e as Error).message}`);
  }
}

/** Our errors as HTTP statuses; anything else is a 500 with its message (never a stack). */
export function errorBody(e: unknown): { status: number; body: { error: { code: string; message: string; field?: string } } } {
  const err = e as Error;
  if (e instanceof HttpError) return { status: e.status, body: { error: { code: e.code, message: e.message, ...(e.field ? { field: e.field } : {}) } } };
  if (e instanceof SessionInputError) return { status: 400, body: { error: { code: "BAD_REQUEST", message: e.message, field: e.field } } };
  if (e instanceof SessionRepoError) return { status: 400, body: { error: { code: "BAD_REQUEST", message: e.message } } };
  if (e instanceof SessionStateError) return { status: e.code === "NOT_FOUND" ? 404 : 409, body: { error: { code: e.code, message: e.message } } };
  if (e instanceof SessionError) return { status: e.code === "NOT_FOUND" ? 404 : 409, body: { error: { code: e.code, message: e.message } } };
  if (e instanceof SessionRecordsError) return { status: e.code === "NOT_FOUND" ? 404 : 409, body: { error: { code: e.code, message: e.message } } };
  return { status: 500, body: { error: { code: "INTERNAL", message: err?.message ?? String(e) } } };
}

const ACTIONS = new Set(["pause", "resume", "abort"]);

/** Handles /api/pulse…; returns false for other paths. */
export async function handleRest(api: SessionApi, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const url = new URL(req.url ?? "/", "http://localhost");
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
      sendJson(res, 200, await api.status(decodeURIComponent(parts[2]!)));
    } else if (parts.length === 4 && ACTIONS.has(parts[3]!)) {
      allow("POST");
      const body = await readJson(req);
      if (body === null || typeof body !== "object" || Array.isArray(body) || Object.keys(body).length > 0) throw new HttpError(400, "BAD_REQUEST", `${parts[3]} takes no body (or {}), got ${JSON.stringify(body).slice(0, 80)}`);
      const id = decodeURIComponent(parts[2]!);
      const action = parts[3] as "pause" | "resume" | "abort";
      sendJson(res, 200, { session: await api[action](id) });
    } else {
      throw new HttpError(404, "NOT_FOUND", `no such endpoint: ${url.pathname} (POST /api/pulse/start, GET /api/pulse/:id, GET /api/pulse?status=, POST /api/pulse/:id/pause|resume|abort)`);
    }
  } catch (e) {
    const { status, body } = errorBody(e);
    sendJson(res, status, body);
  }
  return true;
}
