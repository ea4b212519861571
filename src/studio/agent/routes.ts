/**
 * The agent pages' API, under /api/agent (behind the studio listener's guard: Host, Origin, the
 * token, JSON-only POSTs). Every change is a POST with a JSON body; every path in a body or a
 * query is checked against the allowed roots (roots.ts); resources are named, never located.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { HttpError, readJson, sendJson } from "../../serve/rest.js";
import { Resources } from "./resources.js";
import { MAX_BYTES, type AgentStudio } from "./service.js";

type Allow = (m: "GET" | "POST") => void;

async function body(req: IncomingMessage, maxBytes?: number): Promise<Record<string, unknown>> {
  const b = await readJson(req, maxBytes);
  if (b === null || typeof b !== "object" || Array.isArray(b)) throw new HttpError(400, "BAD_REQUEST", `send a JSON object, not ${JSON.stringify(b).slice(0, 80)}`);
  return b as Record<string, unknown>;
}

/** Answers /api/agent/…; `parts` are the path's segments after /api/agent. */
export async function agentRoute(agent: AgentStudio, req: IncomingMessage, res: ServerResponse, parts: string[], url: URL, allow: Allow): Promise<void> {
  const [a, b, c] = parts;
  const ok = (v: unknown, status = 200) => sendJson(res, status, v);
  if (parts.length === 0) return allow("GET"), ok(agent.overview());
  if (a === "threads") {
    if (parts.length === 1) return allow("POST"), ok({ thread: agent.createThread(await body(req)) }, 201);
    if (parts.length === 2) {
      if (req.method === "GET") return ok(agent.threadView(b!));
      allow("POST");
      return ok({ thread: agent.updateThread(b!, await body(req)) });
    }
    if (parts.length === 3) {
      allow("POST");
      // An upload carries a file of up to 50 MB as base64: the one body allowed past 1 MB.
      const given = await body(req, c === "upload" ? Math.ceil((MAX_BYTES * 4) / 3) + 64 * 1024 : undefined);
      if (c === "delete") return agent.deleteThread(b!), ok({ deleted: b });
      if (c === "ask") return ok(await agent.ask(b!, given), 202);
      if (c === "upload") return ok(agent.upload(b!, given), 201);
      if (c === "answer") return ok(agent.answer(b!, given));
      if (c === "abort") return ok(agent.abort(b!, given));
      if (c === "feedback") return ok({ feedback: await agent.feedback(b!, given) });
    }
  }
  if (a === "file" && parts.length === 1) return allow("GET"), ok(agent.preview(url.searchParams.get("path")));
  if (a === "settings") {
    if (parts.length === 1) {
      if (req.method === "GET") return ok(agent.settings.view());
      allow("POST");
      const saved = agent.settings.save(await body(req));
      agent.settingsChanged();
      return ok(saved);
    }
    if (parts.length === 2 && b === "test") return allow("POST"), ok(await agent.settings.test(await body(req)));
  }
  const kind = Resources.kind(a);
  if (kind) {
    if (parts.length === 1) return allow("GET"), ok(agent.resources.list(kind));
    if (parts.length === 2 && b === "validate") return allow("POST"), ok(agent.resources.check(kind, ((await body(req)).files ?? {}) as Record<string, unknown>));
    if (parts.length === 2) {
      if (req.method === "GET") return ok(agent.resources.get(kind, b));
      allow("POST");
      const given = await body(req);
      return ok(agent.resources.save(kind, b, (given.files ?? {}) as Record<string, unknown>, given.create === true));
    }
    if (parts.length === 3 && c === "delete") return allow("POST"), await body(req), agent.resources.remove(kind, b), ok({ deleted: `${kind}/${b}` });
    if (parts.length === 3 && c === "template" && kind === "actions") {
      allow("POST");
      return ok(agent.resources.fromTemplate(b, (await body(req)).description), 201);
    }
  }
  throw new HttpError(404, "NOT_FOUND", `no such endpoint: ${req.method} /api/agent/${parts.join("/").slice(0, 200)}`);
}
