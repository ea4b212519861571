/**
 * The workflow's REST endpoints beside the sessions': POST /api/workflows (start), GET
 * /api/workflows (list), GET /api/workflows/:id (the review summary), GET
 * /api/workflows/:id/events?after=SEQ, POST /api/workflows/:id/stop|resume|steer, and
 * POST /api/workflows/:id/signal (a guidance sidecar's SurpriseSignal). JSON bodies; a bad
 * one is a 400 naming its field; an unknown workflow 404; the wrong state 409.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { WorkflowRecordsError } from "../coding/workflow/records.js";
import { WorkflowInputError } from "../coding/workflow/workspace.js";
import { WorkflowError } from "../coding/workflow/runner.js";
import { errorBody, HttpError, MAX_BODY_BYTES, readJson, segment, sendJson, SIGNAL_TYPE } from "./rest.js";
import { WorkflowStateError, type WorkflowApi } from "./workflow-api.js";

export function workflowErrorBody(e: unknown): ReturnType<typeof errorBody> {
  if (e instanceof WorkflowInputError) return { status: 400, body: { error: { code: "BAD_REQUEST", message: e.message, field: e.field } } };
  if (e instanceof WorkflowStateError) return { status: e.code === "NOT_FOUND" ? 404 : 409, body: { error: { code: e.code, message: e.message } } };
  if (e instanceof WorkflowError) return { status: e.code === "NOT_FOUND" ? 404 : 409, body: { error: { code: e.code, message: e.message } } };
  if (e instanceof WorkflowRecordsError) return { status: e.code === "NOT_FOUND" ? 404 : 409, body: { error: { code: e.code, message: e.message } } };
  return errorBody(e);
}

/** Handles /api/workflows…; returns false for other paths. */
export async function handleWorkflowRest(api: WorkflowApi | undefined, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const url = new URL(req.url ?? "/", "http://localhost");
  const parts = url.pathname.split("/").filter(Boolean);
  if (parts[0] !== "api" || parts[1] !== "workflows") return false;
  const method = req.method ?? "GET";
  const allow = (m: string) => {
    if (method !== m) throw new HttpError(405, "METHOD_NOT_ALLOWED", `${method} ${url.pathname}: use ${m}`);
  };
  try {
    if (!api) throw new HttpError(404, "NO_WORKFLOWS", "this server keeps no workflows: they need a SQLite or PostgreSQL --store, not memory:");
    if (parts.length === 2) {
      if (method === "POST") sendJson(res, 201, { workflow: await api.start(await readJson(req)) });
      else {
        allow("GET");
        sendJson(res, 200, { workflows: await api.list() });
      }
    } else if (parts.length === 3) {
      allow("GET");
      sendJson(res, 200, await api.status(segment(parts[2]!)));
    } else if (parts.length === 4 && parts[3] === "events") {
      allow("GET");
      const after = Number(url.searchParams.get("after") ?? 0);
      if (!Number.isInteger(after) || after < 0) throw new HttpError(400, "BAD_REQUEST", "after must be a whole number ≥ 0 (the seq of the last event read)");
      sendJson(res, 200, await api.events(segment(parts[2]!), after));
    } else if (parts.length === 4 && parts[3] === "steer") {
      allow("POST");
      const body = await readJson(req);
      if (body === null || typeof body !== "object" || Array.isArray(body) || Object.keys(body).some((k) => k !== "text")) throw new HttpError(400, "BAD_REQUEST", 'steer takes {"text": "the new guidance"}');
      sendJson(res, 200, await api.steer(segment(parts[2]!), (body as { text?: unknown }).text, "api"));
    } else if (parts.length === 4 && parts[3] === "signal") {
      allow("POST");
      sendJson(res, 200, await api.signal(segment(parts[2]!), await readJson(req, MAX_BODY_BYTES, SIGNAL_TYPE)));
    } else if (parts.length === 4 && (parts[3] === "stop" || parts[3] === "resume")) {
      allow("POST");
      const body = await readJson(req);
      if (body === null || typeof body !== "object" || Array.isArray(body) || Object.keys(body).length > 0) throw new HttpError(400, "BAD_REQUEST", `${parts[3]} takes no body (or {})`);
      const id = segment(parts[2]!);
      sendJson(res, 200, { workflow: parts[3] === "stop" ? await api.stop(id) : await api.resume(id) });
    } else {
      throw new HttpError(404, "NOT_FOUND", `no such endpoint: ${url.pathname} (POST /api/workflows, GET /api/workflows, GET /api/workflows/:id, GET /api/workflows/:id/events?after=SEQ, POST /api/workflows/:id/stop|resume|steer|signal)`);
    }
  } catch (e) {
    const { status, body, headers } = workflowErrorBody(e);
    sendJson(res, status, body, headers);
  }
  return true;
}
