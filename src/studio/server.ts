/**
 * The studio's HTTP listener: the page's files (a fixed table, static.ts), the JSON API under
 * /api, and the live feed at /api/events (Server-Sent Events). Host and Origin are checked first
 * on every request (listener-guard.ts); the API needs the bearer token whenever one is set (it
 * always is off loopback); POSTs are JSON only. Unknown routes are 404, bad JSON 400.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { badgeOf } from "../../conformance/report/badge.js";
import { errorBody, HttpError, readJson, sendJson } from "../serve/rest.js";
import { bearerAuthorized, refuseUnauthorized } from "../transports/bearer.js";
import { guardRequest, listenerGuard, type ListenerGuard } from "../transports/listener-guard.js";
import type { Runs, RunAction } from "./runs.js";
import { loadStaticFiles, PAGE_HEADERS, type StaticFile } from "./static.js";
import { Studio, StudioError } from "./studio.js";
import { conformanceView } from "./conformance.js";
import { agentRoute } from "./agent/routes.js";
import type { AgentStudio } from "./agent/service.js";

export interface StudioServerOptions {
  token?: string;
  allowHosts?: readonly string[];
  allowOrigins?: readonly string[];
  /** How often run summaries are read back from their records while a browser watches (default 1 s). */
  runPollMs?: number;
  /** Seed 002's Studio pages over an agent home (pulse studio and pulse run --studio serve them). */
  agent?: { get(): AgentStudio };
}

const LOOP_ACTIONS = new Set(["pause", "resume", "stop", "trigger"]);
const RUN_ACTIONS = new Set<RunAction>(["pause", "resume", "abort", "steer"]);
const RESUME_FIELDS = new Set(["maxCost", "maxTokens", "maxWall"]);

function segment(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new HttpError(400, "BAD_PATH", `${JSON.stringify(text.slice(0, 80))} in the path is not percent-encoded UTF-8`);
  }
}

export class StudioServer {
  readonly server: Server;
  private readonly guard: ListenerGuard;
  private readonly files: Map<string, StaticFile>;
  private readonly runState = new Map<string, string>();
  private poll: NodeJS.Timeout | undefined;

  constructor(
    readonly studio: Studio,
    readonly runs: Runs,
    private readonly options: StudioServerOptions = {},
  ) {
    this.files = loadStaticFiles();
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.keepAliveTimeout = 65_000;
    this.guard = listenerGuard(this.server, { allowHosts: options.allowHosts ?? [], allowOrigins: options.allowOrigins ?? [] });
  }

  async listen(port: number, host: string): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => resolve());
    });
    const a = this.server.address() as AddressInfo;
    this.poll = setInterval(() => void this.pollRuns(), this.options.runPollMs ?? 1000);
    this.poll.unref();
    return `http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}`;
  }

  async close(): Promise<void> {
    clearInterval(this.poll);
    this.studio.feed.closeAll();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /** Run summaries that changed since the last look go to the feed (only while someone watches). */
  private async pollRuns(): Promise<void> {
    if (this.studio.feed.clients === 0) return;
    try {
      for (const run of await this.runs.list()) {
        const key = `${run.kind}/${run.id}`;
        const text = JSON.stringify(run);
        if (this.runState.get(key) !== text) {
          this.runState.set(key, text);
          this.studio.feed.publish("run", run);
        }
      }
    } catch {
      // The records could not be read this time: the next poll tries again.
    }
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (guardRequest(this.guard, req, res)) return;
    let path: string;
    try {
      path = new URL(req.url ?? "/", "http://localhost").pathname;
    } catch {
      return sendJson(res, 400, { error: { code: "BAD_PATH", message: "the request path is not a URL path" } });
    }
    const file = this.files.get(path);
    if (file && (req.method === "GET" || req.method === "HEAD")) {
      // The page is the package's own code, the same for everyone: the data it reads needs the token.
      res.writeHead(200, { ...PAGE_HEADERS, "content-type": file.type, "content-length": file.body.length });
      res.end(req.method === "HEAD" ? undefined : file.body);
      return;
    }
    if (!path.startsWith("/api/")) return sendJson(res, 404, { error: { code: "NOT_FOUND", message: `no such page: ${path.slice(0, 200)} (the studio is at /)` } });
    if (this.options.token !== undefined && !bearerAuthorized(req, this.options.token)) {
      req.resume();
      return refuseUnauthorized(res);
    }
    void this.api(req, res, path).catch((e: unknown) => {
      const { status, body, headers } = e instanceof StudioError ? { status: e.status, body: { error: { code: e.code, message: e.message } }, headers: {} } : errorBody(e);
      if (!res.headersSent) sendJson(res, status, body, headers);
      else res.end();
    });
  }

  private async api(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const parts = path.split("/").filter(Boolean).slice(1).map(segment);
    const method = req.method ?? "GET";
    const allow = (m: "GET" | "POST") => {
      if (method !== m) throw new HttpError(405, "METHOD_NOT_ALLOWED", `${method} ${path}: use ${m}`);
    };
    const [a, b, c, d] = parts;
    if (a === "events" && parts.length === 1) {
      allow("GET");
      return this.events(req, res, url);
    }
    if (a === "system" && parts.length === 1) {
      allow("GET");
      return sendJson(res, 200, { loops: this.studio.cards(), svg: this.studio.svg, runKinds: this.runs.kinds, last_event: this.studio.feed.lastId });
    }
    if (a === "loops" && parts.length === 2) {
      allow("GET");
      return sendJson(res, 200, this.studio.loopView(b!));
    }
    if (a === "loops" && parts.length === 3 && LOOP_ACTIONS.has(c!)) {
      allow("POST");
      await this.emptyBody(req, c!);
      return sendJson(res, 200, await this.studio.control(b!, c!));
    }
    if (a === "traces" && parts.length === 1) {
      allow("GET");
      return sendJson(res, 200, { traces: this.studio.search(url.searchParams.get("q") ?? "") });
    }
    if (a === "traces" && parts.length === 2) {
      allow("GET");
      return sendJson(res, 200, await this.studio.trace(b!));
    }
    if (a === "runs" && parts.length === 1) {
      allow("GET");
      return sendJson(res, 200, { runs: await this.runs.list(), kinds: this.runs.kinds });
    }
    if (a === "runs" && (parts.length === 3 || parts.length === 4)) {
      const source = this.runs.source(b!);
      if (!source) throw new HttpError(404, "NOT_FOUND", `no kind of run ${JSON.stringify(b)} here (kinds: ${this.runs.kinds.join(", ")})`);
      if (parts.length === 3) {
        allow("GET");
        return sendJson(res, 200, await source.get(c!));
      }
      if (RUN_ACTIONS.has(d as RunAction)) {
        allow("POST");
        const body = await readJson(req);
        const allowed = d === "resume" ? RESUME_FIELDS : d === "steer" ? new Set(["text"]) : new Set<string>();
        if (body === null || typeof body !== "object" || Array.isArray(body) || Object.keys(body).some((k) => !allowed.has(k))) {
          throw new HttpError(400, "BAD_REQUEST", d === "resume" ? `resume takes {} or {maxCost, maxTokens, maxWall}, got ${JSON.stringify(body).slice(0, 80)}` : d === "steer" ? `steer takes {"text": "…"}, got ${JSON.stringify(body).slice(0, 80)}` : `${d} takes no body (or {}), got ${JSON.stringify(body).slice(0, 80)}`);
        }
        return sendJson(res, 200, { run: await source.control(c!, d as RunAction, body as Record<string, unknown>) });
      }
    }
    if (a === "agent") {
      if (!this.options.agent) throw new HttpError(404, "NOT_FOUND", "no agent pages here: this studio was started without an agent home");
      return agentRoute(this.options.agent.get(), req, res, parts.slice(1), url, allow);
    }
    if (a === "conformance" && parts.length === 1) {
      allow("POST");
      const body = await readJson(req);
      const view = conformanceView(body);
      return sendJson(res, 200, { ...view, badge: badgeOf(view.report) });
    }
    throw new HttpError(404, "NOT_FOUND", `no such endpoint: ${method} ${path.slice(0, 200)}`);
  }

  /** pause, resume, stop and trigger take no body: only `{}` or nothing, as JSON. */
  private async emptyBody(req: IncomingMessage, action: string): Promise<void> {
    const body = await readJson(req);
    if (body === null || typeof body !== "object" || Array.isArray(body) || Object.keys(body).length > 0) throw new HttpError(400, "BAD_REQUEST", `${action} takes no body (or {}), got ${JSON.stringify(body).slice(0, 80)}`);
  }

  /** The live feed; Last-Event-ID (or ?after=) replays what a reconnecting page missed. */
  private events(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const given = req.headers["last-event-id"] ?? url.searchParams.get("after") ?? undefined;
    const after = typeof given === "string" && /^\d{1,15}$/.test(given) ? Number(given) : undefined;
    if (given !== undefined && after === undefined) throw new HttpError(400, "BAD_LAST_EVENT_ID", `Last-Event-ID is the id of the last event read (a whole number), not ${JSON.stringify(String(given).slice(0, 40))}`);
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive", "x-accel-buffering": "no" });
    res.write(": pulse studio\nretry: 1000\n\n");
    const heartbeat = setInterval(() => res.write(": keep-alive\n\n"), 15_000);
    heartbeat.unref();
    const stop = this.studio.feed.subscribe(
      {
        write: (text) => res.write(text),
        onDrain: (fn) => res.once("drain", fn),
        close: () => res.end(),
      },
      after,
      Studio.scope(url.searchParams.get("loop") ?? undefined),
    );
    res.on("close", () => {
      clearInterval(heartbeat);
      stop();
    });
  }
}
