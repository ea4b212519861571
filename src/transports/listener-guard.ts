/**
 * What every pulse listener accepts from whom (`pulse serve`, the signal listener of `pulse run
 * --listen`, `pulse substrate serve`). A web page the user visits can reach a loopback port
 * too: by a plain cross-site POST (no preflight), or by DNS rebinding (its own name resolving
 * to 127.0.0.1). So a request is refused (403) when its Host is not a name of this listener
 * (the address it is bound to, or a loopback name, with its port or none), when a browser sent
 * it from another origin, or when the browser says it comes from another site. Clients that are
 * not browsers send no Origin and pass. `--allow-host` and `--allow-origin` widen this on
 * purpose; only an allowed foreign origin is ever sent CORS headers.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname, networkInterfaces } from "node:os";

export interface ListenerGuardOptions {
  /** Extra Host names (`name` or `name:port`) to accept, e.g. a name the machine is reached by. */
  allowHosts?: readonly string[];
  /** Extra browser origins (`http://localhost:5173`) to accept, and to send CORS headers to. */
  allowOrigins?: readonly string[];
}

export interface Refusal {
  status: 403;
  code: "FORBIDDEN_HOST" | "FORBIDDEN_ORIGIN";
  message: string;
}

export interface ListenerGuard {
  /** undefined when the request may proceed; else why not. */
  check(req: IncomingMessage): Refusal | undefined;
  /** The exact Host header values accepted (for the MCP SDK's own check). */
  hostHeaders(): string[];
  /** The exact origins accepted (for the MCP SDK's own check). */
  origins(): string[];
  /** CORS headers for a request from an allowed foreign origin; none for anything else. */
  corsHeaders(req: IncomingMessage): Record<string, string>;
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];

/** Splits a Host header (`name`, `name:port`, `[v6]`, `[v6]:port`) into a lower-case name and port. */
export function parseHost(value: string): { name: string; port?: number } | undefined {
  const m = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9._-]+))(?::(\d{1,5}))?$/i.exec(value.trim());
  if (!m) return undefined;
  const name = (m[1] ?? m[2] ?? "").toLowerCase();
  return m[3] === undefined ? { name } : { name, port: Number(m[3]) };
}

function hostText(name: string, port?: number): string {
  const n = name.includes(":") ? `[${name}]` : name;
  return port === undefined ? n : `${n}:${port}`;
}

function normaliseOrigin(origin: string): string {
  return origin.trim().replace(/\/+$/, "").toLowerCase();
}

/** The names of this machine a listener on a wildcard address (0.0.0.0, ::) is reached by. */
function machineNames(): string[] {
  const names = [hostname().toLowerCase()];
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) names.push(a.address.toLowerCase());
  return names;
}

export function listenerGuard(server: Server, options: ListenerGuardOptions = {}): ListenerGuard {
  const extraHosts = (options.allowHosts ?? []).map((h) => {
    const parsed = parseHost(h);
    if (!parsed) throw new TypeError(`--allow-host ${JSON.stringify(h)} is not a host name (name or name:port)`);
    return parsed;
  });
  const extraOrigins = new Set((options.allowOrigins ?? []).map(normaliseOrigin));
  let bound: { names: string[]; port: number } | undefined;
  // Read once the server listens: with port 0 the port is only known then.
  const boundNow = () => {
    if (bound) return bound;
    const a = server.address() as AddressInfo | null;
    if (!a || typeof a !== "object") return { names: LOOPBACK_NAMES, port: -1 };
    const address = a.address.toLowerCase().replace(/^::ffff:/, "");
    const wildcard = address === "0.0.0.0" || address === "::";
    bound = { names: [...new Set([...LOOPBACK_NAMES, ...(wildcard ? machineNames() : [address])])], port: a.port };
    return bound;
  };
  const hostAllowed = (value: string): boolean => {
    const h = parseHost(value);
    if (!h) return false;
    const { names, port } = boundNow();
    if (names.includes(h.name) && (h.port === undefined || h.port === port)) return true;
    return extraHosts.some((x) => x.name === h.name && (x.port === undefined ? h.port === undefined || h.port === port : h.port === x.port));
  };
  const ownOrigins = (): string[] => {
    const { names, port } = boundNow();
    return names.flatMap((n) => [`http://${hostText(n, port)}`, ...(port === 80 ? [`http://${hostText(n)}`] : [])]);
  };
  const originAllowed = (origin: string): boolean => {
    const o = normaliseOrigin(origin);
    return extraOrigins.has(o) || ownOrigins().includes(o) || extraHosts.some((x) => o === `http://${hostText(x.name, x.port ?? boundNow().port)}`);
  };

  return {
    check(req) {
      const host = req.headers.host;
      if (host !== undefined && !hostAllowed(host)) {
        return { status: 403, code: "FORBIDDEN_HOST", message: `Host ${JSON.stringify(host.slice(0, 100))} is not a name of this listener (a loopback name or the address it is bound to): if you reach it by that name on purpose, start it with --allow-host ${hostText(parseHost(host)?.name ?? "NAME")}` };
      }
      const origin = req.headers.origin;
      if (origin !== undefined) {
        if (!originAllowed(origin)) return { status: 403, code: "FORBIDDEN_ORIGIN", message: `requests from the web page at ${JSON.stringify(origin.slice(0, 100))} are refused: a page in a browser must never steer pulse (start it with --allow-origin ${origin.slice(0, 100)} to allow that page on purpose)` };
        return undefined;
      }
      // A browser that sends no Origin (a no-cors GET) still says where the request comes from.
      const site = req.headers["sec-fetch-site"];
      if (site === "cross-site" || site === "same-site") return { status: 403, code: "FORBIDDEN_ORIGIN", message: `a request a web page made (Sec-Fetch-Site: ${site}) is refused: a page in a browser must never steer pulse` };
      return undefined;
    },
    hostHeaders() {
      const { names, port } = boundNow();
      const all = names.flatMap((n) => [hostText(n), hostText(n, port)]);
      for (const x of extraHosts) all.push(...(x.port === undefined ? [hostText(x.name), hostText(x.name, port)] : [hostText(x.name, x.port)]));
      return [...new Set(all)];
    },
    origins() {
      return [...new Set([...ownOrigins(), ...extraOrigins])];
    },
    corsHeaders(req): Record<string, string> {
      const origin = req.headers.origin;
      if (origin === undefined || !extraOrigins.has(normaliseOrigin(origin))) return {};
      return { "access-control-allow-origin": origin, vary: "Origin", "access-control-allow-headers": "authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id", "access-control-allow-methods": "GET, POST, DELETE, OPTIONS", "access-control-max-age": "600" };
    },
  };
}

/** Answers a refusal: 403, one JSON line, no CORS headers. */
export function refuse(res: ServerResponse, refusal: Refusal): void {
  const text = `${JSON.stringify({ error: { code: refusal.code, message: refusal.message } })}\n`;
  res.writeHead(refusal.status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text), connection: "close" });
  res.end(text);
}

/**
 * Runs the guard in front of a request handler: refused requests never reach it; a CORS
 * preflight from an allowed origin is answered here; the allowed origin's CORS headers are set.
 * Returns true when the request was answered.
 */
export function guardRequest(guard: ListenerGuard, req: IncomingMessage, res: ServerResponse): boolean {
  const refusal = guard.check(req);
  if (refusal) {
    req.resume();
    refuse(res, refusal);
    return true;
  }
  const cors = guard.corsHeaders(req);
  for (const [k, v] of Object.entries(cors)) res.setHeader(k, v);
  if (req.method === "OPTIONS" && req.headers.origin !== undefined && Object.keys(cors).length > 0) {
    res.writeHead(204);
    res.end();
    return true;
  }
  return false;
}

/** Whether a request's Content-Type is one of `types` (parameters such as charset ignored). */
export function contentTypeIs(req: IncomingMessage, types: readonly string[]): boolean {
  const type = String(req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  return types.includes(type);
}
