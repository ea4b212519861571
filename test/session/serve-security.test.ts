/**
 * `pulse serve` as a web page, another site, a careless client and an agent would reach it:
 * the requests a page can send without asking (no content type, text/plain, a foreign Origin, a
 * rebinding Host, a no-cors GET) are refused and start nothing; their near misses (the loopback
 * names with and without port, the page's own origin, clients that send no Origin, an origin
 * allowed on purpose) pass. Scripts only from --allow-scripts; starts that cannot run refused
 * before they are answered; a cap on running sessions; read-only MCP for a session's own agent.
 */
import { startServe, type Served } from "./serve-process.js";
import { execFileSync } from "node:child_process";
import { request } from "node:http";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../cli/run-bin.js";
import { until } from "./steering.js";
import { gitRepo, removeDir, worktreesRoot } from "./helpers.js";

const BIN = join(ROOT, "dist/bin/pulse.mjs");
const SECRETS = { AWS_SECRET_ACCESS_KEY: "aws-secret-value", GITHUB_TOKEN: "ghp_secretvalue", DATABASE_URL: "postgres://secret@db/x", PULSE_TOKEN: "pulse-token-secret-0123456789" };

const started: Served[] = [];

async function serve(cwd: string, args: string[], env: Record<string, string> = {}): Promise<Served> {
  const served = await startServe(cwd, ["--listen", "0", ...args], env);
  started.push(served);
  return served;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** A raw request, with exactly the headers given (Host and Origin included), as a browser or curl would send it. */
function raw(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // PULSE_TOKEN is in the servers' environment (as a secret their agents must not see), so they require it.
    const req = request({ host: "127.0.0.1", port, method, path, headers: { authorization: `Bearer ${SECRETS.PULSE_TOKEN}`, ...(body !== undefined ? { "content-length": String(Buffer.byteLength(body)) } : {}), ...headers }, setHost: !("host" in headers) }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, json });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

const JSON_TYPE = { "content-type": "application/json" };


let dir: string;
let repo: string;
let scripts: string;
let hang: string;
let quick: string;
let srv: Served;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pulse-serve-security-"));
  repo = gitRepo();
  scripts = join(dir, "scripts");
  mkdirSync(scripts);
  hang = join(scripts, "hang.json");
  writeFileSync(hang, JSON.stringify({ steps: [{ outcome: "hang" }] }));
  quick = join(scripts, "quick.json");
  writeFileSync(quick, JSON.stringify({ steps: [{ shell: ["env > env.txt"], files: { "x.txt": "x\n" }, commit: "feat: x", text: "<signal>COMPLETE</signal>" }] }));
  srv = await serve(repo, ["--store", join(dir, "pulse.db"), "--allow-scripts", scripts, "--allow-origin", "http://localhost:5173", "--allow-host", "pulse.internal"], SECRETS);
});

afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()));
  removeDir(repo);
  removeDir(dir);
});

async function sessionCount(): Promise<number> {
  const r = await raw(srv.port, "GET", "/api/pulse", {});
  return r.json.sessions.length;
}

describe("pulse serve refuses what a web page can send", () => {
  const goal = JSON.stringify({ goal: "pwn", repo: "/tmp" });

  it("refuses POSTs that are not application/json (415), with no content type or text/plain, and starts nothing", async () => {
    const before = await sessionCount();
    const pageTypes: Record<string, string>[] = [{}, { "content-type": "text/plain" }, { "content-type": "application/x-www-form-urlencoded" }, { "content-type": "multipart/form-data; boundary=x" }];
    for (const headers of pageTypes) {
      const r = await raw(srv.port, "POST", "/api/pulse/start", headers, goal);
      expect(r.status, JSON.stringify(headers)).toBe(415);
      expect(r.json.error.code).toBe("UNSUPPORTED_MEDIA_TYPE");
      const mcp = await raw(srv.port, "POST", "/mcp", { ...headers, accept: "application/json, text/event-stream" }, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }));
      expect(mcp.status, `mcp ${JSON.stringify(headers)}`).toBe(415);
    }
    // An empty POST that a page can send (no type) to a session action is refused too.
    expect((await raw(srv.port, "POST", "/api/pulse/00000000/abort", {})).status).toBe(415);
    expect(await sessionCount()).toBe(before);
    // Near miss: application/json with a charset is JSON.
    const near = await raw(srv.port, "POST", "/api/pulse/start", { "content-type": "application/json; charset=utf-8" }, JSON.stringify({ goal: "x", repo: join(dir, "missing") }));
    expect(near.status).toBe(400);
    expect(near.json.error.field).toBe("repo");
  });

  it("refuses a foreign Origin and a rebinding Host (403, one JSON line, no CORS headers), on REST and on MCP", async () => {
    const before = await sessionCount();
    const attacks: Record<string, string>[] = [
      { origin: "http://evil.example" },
      { origin: "null" },
      { origin: `http://localhost.evil.example:${srv.port}` },
      { origin: "http://localhost:5174" },
      { host: `evil.example:${srv.port}` },
      { host: "evil.example" },
      { host: `localhost:${srv.port + 1}` },
      { host: `127.0.0.1.nip.io:${srv.port}` },
    ];
    for (const h of attacks) {
      for (const [path, body] of [
        ["/api/pulse/start", goal],
        ["/mcp", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "pulse_start", arguments: { goal: "pwn" } } })],
      ] as const) {
        const r = await raw(srv.port, "POST", path, { ...JSON_TYPE, accept: "application/json, text/event-stream", ...h }, body);
        expect(r.status, `${path} ${JSON.stringify(h)}`).toBe(403);
        expect(r.text.trim().split("\n")).toHaveLength(1);
        // A foreign Host is refused first; with a loopback Host, the foreign Origin.
        expect(r.json.error.code).toBe(h.host !== undefined ? "FORBIDDEN_HOST" : "FORBIDDEN_ORIGIN");
        expect(r.headers["access-control-allow-origin"]).toBeUndefined();
      }
      const get = await raw(srv.port, "GET", "/api/pulse", h);
      expect(get.status, `GET ${JSON.stringify(h)}`).toBe(403);
    }
    // A no-cors GET a page makes carries no Origin, but the browser says it is cross-site.
    expect((await raw(srv.port, "GET", "/api/pulse", { "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect(await sessionCount()).toBe(before);
  });

  it("takes the near misses: loopback names with and without port, the page's own origin, no Origin, an allowed origin and host", async () => {
    const ok: Record<string, string>[] = [
      {},
      { host: "localhost" },
      { host: `localhost:${srv.port}` },
      { host: "127.0.0.1" },
      { host: `127.0.0.1:${srv.port}` },
      { host: `[::1]:${srv.port}` },
      { host: "LOCALHOST" },
      { origin: `http://localhost:${srv.port}` },
      { origin: `http://127.0.0.1:${srv.port}`, "sec-fetch-site": "same-origin" },
      { "sec-fetch-site": "none" },
      { host: `pulse.internal:${srv.port}` },
      { host: "pulse.internal" },
      { origin: "http://localhost:5173", "sec-fetch-site": "same-site" },
    ];
    for (const h of ok) {
      const r = await raw(srv.port, "GET", "/api/pulse", h);
      expect(r.status, JSON.stringify(h)).toBe(200);
    }
    // Only the origin allowed on purpose gets CORS headers, and its preflight is answered.
    const allowed = await raw(srv.port, "GET", "/api/pulse", { origin: "http://localhost:5173" });
    expect(allowed.headers["access-control-allow-origin"]).toBe("http://localhost:5173");
    const own = await raw(srv.port, "GET", "/api/pulse", { origin: `http://localhost:${srv.port}` });
    expect(own.headers["access-control-allow-origin"]).toBeUndefined();
    const preflight = await raw(srv.port, "OPTIONS", "/api/pulse/start", { origin: "http://localhost:5173", "access-control-request-method": "POST", "access-control-request-headers": "content-type" });
    expect(preflight.status).toBe(204);
    expect(preflight.headers["access-control-allow-headers"]).toMatch(/content-type/);
    const foreignPreflight = await raw(srv.port, "OPTIONS", "/api/pulse/start", { origin: "http://evil.example", "access-control-request-method": "POST" });
    expect(foreignPreflight.status).toBe(403);
    expect(foreignPreflight.headers["access-control-allow-origin"]).toBeUndefined();
    // MCP from a client with no Origin (the SDK's, curl) at the loopback name with port.
    const mcp = await raw(srv.port, "POST", "/mcp", { ...JSON_TYPE, accept: "application/json, text/event-stream", host: `localhost:${srv.port}` }, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "curl", version: "1" } } }));
    expect(mcp.status).toBe(200);
    expect(mcp.text).toMatch(/"serverInfo"/);
  });

  it("answers client errors with 400, never 500: a 400,000-deep body and a malformed escape in the path", async () => {
    const deep = "[".repeat(400_000) + "]".repeat(400_000);
    const r = await raw(srv.port, "POST", "/api/pulse/start", JSON_TYPE, deep);
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/deeper than 64/);
    const path = await raw(srv.port, "GET", "/api/pulse/%E0%A4%A", {});
    expect(path.status).toBe(400);
    expect(path.json.error.code).toBe("BAD_PATH");
    const action = await raw(srv.port, "POST", "/api/pulse/%E0%A4%A/pause", JSON_TYPE, "{}");
    expect(action.status).toBe(400);
    // Near miss: a well-formed id of no session is a 404, to GET and to an action alike.
    for (const [method, path] of [["GET", "/api/pulse/ffffffff"], ["POST", "/api/pulse/ffffffff/pause"], ["POST", "/api/pulse/ffffffff/abort"]] as const) {
      const r = await raw(srv.port, method, path, JSON_TYPE, method === "POST" ? "{}" : undefined);
      expect(r.status, path).toBe(404);
      expect(r.json.error.message).toMatch(/no session ffffffff/);
    }
    // Near miss: 60 levels of nesting is JSON to check, not a refusal of its depth.
    const nested = await raw(srv.port, "POST", "/api/pulse/start", JSON_TYPE, JSON.stringify({ goal: "x", repo, extra: JSON.parse("[".repeat(60) + "]".repeat(60)) }));
    expect(nested.status).toBe(400);
    expect(nested.json.error.field).toBe("extra");
  });
});

describe("what pulse serve starts", () => {
  it("reads scripts only from --allow-scripts directories (403 otherwise), and runs their shell steps without pulse's secrets", async () => {
    const outside = join(dir, "outside.json");
    writeFileSync(outside, readFileSync(quick));
    const link = join(scripts, "link.json");
    symlinkSync(outside, link);
    for (const script of [outside, link, join(scripts, "..", "outside.json")]) {
      const r = await raw(srv.port, "POST", "/api/pulse/start", JSON_TYPE, JSON.stringify({ goal: "x", repo, driver: "scripted", script }));
      expect(r.status, script).toBe(403);
      expect(r.json.error.field).toBe("script");
    }
    const noScripts = await serve(repo, ["--store", join(dir, "other.db")], SECRETS);
    const refused = await raw(noScripts.port, "POST", "/api/pulse/start", JSON_TYPE, JSON.stringify({ goal: "x", repo, driver: "scripted", script: quick }));
    expect(refused.status).toBe(403);
    expect(refused.json.error.message).toMatch(/--allow-scripts/);
    await noScripts.stop();

    const ok = await raw(srv.port, "POST", "/api/pulse/start", JSON_TYPE, JSON.stringify({ goal: "x", repo, driver: "scripted", script: quick }));
    expect(ok.status).toBe(201);
    await until(async () => ((await raw(srv.port, "GET", `/api/pulse/${ok.json.session.id}`, {})).json.session.status === "complete" ? true : undefined));
    // What the agent left is on the session's branch (its worktree is removed once it completed).
    const env = execFileSync("git", ["show", `pulse/session/${ok.json.session.id.slice(0, 8)}:env.txt`], { cwd: repo, encoding: "utf8" });
    for (const [name, value] of Object.entries(SECRETS)) {
      expect(env).not.toContain(name);
      expect(env).not.toContain(value);
    }
    expect(env).toMatch(/^PATH=/m);
  }, 60_000);

  it("refuses a start that could not run before answering: unknown driver, a script that is not one, a bad branch or base (400 naming the field)", async () => {
    const before = await sessionCount();
    const notAScript = join(scripts, "notes.txt");
    writeFileSync(notAScript, "just some notes, not steps\n");
    const cases: [Record<string, unknown>, string][] = [
      [{ driver: "claud" }, "driver"],
      [{ driver: "scripted", script: notAScript }, "script"],
      [{ driver: "scripted", script: join(scripts, "missing.json") }, "script"],
      [{ driver: "scripted", script: quick, branch: "bad..branch" }, "branch"],
      [{ driver: "scripted", script: quick, branch: "-x" }, "branch"],
      [{ driver: "scripted", script: quick, base: "no-such-ref" }, "base"],
      [{ driver: "scripted", script: quick, inPlace: "yes" }, "inPlace"],
      [{ driver: "scripted", script: quick, allowDirty: true }, "allowDirty"],
    ];
    for (const [extra, field] of cases) {
      const r = await raw(srv.port, "POST", "/api/pulse/start", JSON_TYPE, JSON.stringify({ goal: "x", repo, ...extra }));
      expect(r.status, JSON.stringify(extra)).toBe(400);
      expect(r.json.error.field).toBe(field);
    }
    expect(await sessionCount()).toBe(before);
    expect((await raw(srv.port, "GET", "/api/pulse?status=running", {})).json.sessions).toEqual([]);
  });

  it("gives a repository's checkout to one in-place session: 20 concurrent starts on it answer one 201 and 409s, and none is left running", async () => {
    const busyRepo = gitRepo();
    try {
      const body = JSON.stringify({ goal: "x", repo: busyRepo, driver: "scripted", script: hang, inPlace: true });
      const answers = await Promise.all(Array.from({ length: 20 }, () => raw(srv.port, "POST", "/api/pulse/start", JSON_TYPE, body)));
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(19);
      const refused = answers.find((a) => a.status === 409)!;
      expect(refused.json.error).toMatchObject({ code: "REPO_BUSY", field: "repo" });
      const running = (await raw(srv.port, "GET", "/api/pulse?status=running", {})).json.sessions as { id: string; repo_path: string }[];
      expect(running.filter((s) => s.repo_path === busyRepo)).toHaveLength(1);
      const id = answers.find((a) => a.status === 201)!.json.session.id;
      const aborted = await raw(srv.port, "POST", `/api/pulse/${id}/abort`, JSON_TYPE, "{}");
      expect(aborted.json.session.status).toBe("aborted");
      // Near miss: once it is free, the repository takes a session again.
      const again = await raw(srv.port, "POST", "/api/pulse/start", JSON_TYPE, body);
      expect(again.status).toBe(201);
      await raw(srv.port, "POST", `/api/pulse/${again.json.session.id}/abort`, JSON_TYPE, "{}");
    } finally {
      removeDir(busyRepo);
    }
  }, 60_000);

  it("runs sessions in worktrees of their own side by side in one repository: concurrent starts are each accepted, on their own branch", async () => {
    const shared = gitRepo();
    try {
      const body = JSON.stringify({ goal: "x", repo: shared, driver: "scripted", script: hang });
      const answers = await Promise.all(Array.from({ length: 2 }, () => raw(srv.port, "POST", "/api/pulse/start", JSON_TYPE, body)));
      expect(answers.map((a) => a.status)).toEqual([201, 201]);
      const sessions = answers.map((a) => a.json.session as { id: string; worktree_path: string; branch_name: string });
      expect(new Set(sessions.map((s) => s.worktree_path)).size).toBe(2);
      expect(sessions.map((s) => s.branch_name)).toEqual(sessions.map((s) => `pulse/session/${s.id.slice(0, 8)}`));
      for (const s of sessions) expect((await raw(srv.port, "POST", `/api/pulse/${s.id}/abort`, JSON_TYPE, "{}")).json.session.status).toBe("aborted");
      // The user's checkout is still on main, untouched.
      expect(execFileSync("git", ["symbolic-ref", "--short", "HEAD"], { cwd: shared, encoding: "utf8" })).toBe("main\n");
    } finally {
      removeDir(shared);
    }
  }, 60_000);

  it("caps running sessions (--max-sessions): 429 with Retry-After beyond it, accepted again when one ends", async () => {
    const a = gitRepo();
    const b = gitRepo();
    const capped = await serve(a, ["--store", join(dir, "capped.db"), "--allow-scripts", scripts, "--max-sessions", "1"], SECRETS);
    try {
      const first = await raw(capped.port, "POST", "/api/pulse/start", JSON_TYPE, JSON.stringify({ goal: "x", repo: a, driver: "scripted", script: hang }));
      expect(first.status).toBe(201);
      const second = await raw(capped.port, "POST", "/api/pulse/start", JSON_TYPE, JSON.stringify({ goal: "y", repo: b, driver: "scripted", script: hang }));
      expect(second.status).toBe(429);
      expect(Number(second.headers["retry-after"])).toBeGreaterThan(0);
      expect(second.json.error.message).toMatch(/--max-sessions 1/);
      await raw(capped.port, "POST", `/api/pulse/${first.json.session.id}/abort`, JSON_TYPE, "{}");
      const third = await raw(capped.port, "POST", "/api/pulse/start", JSON_TYPE, JSON.stringify({ goal: "y", repo: b, driver: "scripted", script: hang }));
      expect(third.status).toBe(201);
      await raw(capped.port, "POST", `/api/pulse/${third.json.session.id}/abort`, JSON_TYPE, "{}");
    } finally {
      await capped.stop();
      removeDir(a);
      removeDir(b);
    }
  }, 60_000);
});

describe("the MCP server an agent of a session is given (--context mcp)", () => {
  it("serves only pulse_signal, pulse_status and the guidance tools, of its own session only", async () => {
    const list = await raw(srv.port, "GET", "/api/pulse", {});
    const [own, other] = list.json.sessions as { id: string }[];
    expect(own && other).toBeTruthy();
    const client = new Client({ name: "agent", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, "session", "mcp", "--store", join(dir, "pulse.db"), "--session", own!.id], cwd: repo, env: { PATH: process.env.PATH ?? "", HOME: repo, PULSE_WORKTREES: worktreesRoot() }, stderr: "pipe" }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(["pulse_ack_replan", "pulse_should_interrupt", "pulse_signal", "pulse_status"]);
      const signalled = await client.callTool({ name: "pulse_signal", arguments: { signal: "COMPLETE" } });
      expect(signalled.isError).toBeFalsy();
      const blocked = await client.callTool({ name: "pulse_signal", arguments: { signal: "BLOCKED" } });
      expect(blocked.isError).toBe(true);
      const mine = await client.callTool({ name: "pulse_status", arguments: {} });
      expect(JSON.parse((mine.content as { text: string }[])[0]!.text).session.id).toBe(own!.id);
      const theirs = await client.callTool({ name: "pulse_status", arguments: { sessionId: other!.id } });
      expect(theirs.isError).toBe(true);
      const abort = await client.callTool({ name: "pulse_abort", arguments: { sessionId: own!.id } }).catch((e: Error) => ({ isError: true, content: [{ text: e.message }] }));
      expect(abort.isError).toBe(true);
    } finally {
      await client.close();
    }
  }, 30_000);
});

describe("pulse serve off loopback: /mcp behind the token", () => {
  it("the SDK's own client is refused without the token, and with a wrong one; with it, it lists the tools", async () => {
    const dir = gitRepo();
    try {
      const token = "fedcba9876543210fedc";
      const srv = await serve(dir, ["--listen", "0.0.0.0:0", "--token", token]);
      const endpoint = new URL(`http://127.0.0.1:${srv.port}/mcp`);
      for (const headers of [{}, { authorization: "Bearer fedcba9876543210fedd" }] as Record<string, string>[]) {
        const refused = new Client({ name: "no-token", version: "1.0.0" });
        await expect(refused.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } }))).rejects.toThrow(/401|Unauthorized|UNAUTHORIZED/);
      }
      const client = new Client({ name: "with-token", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toContain("pulse_start");
      } finally {
        await client.close();
      }
    } finally {
      removeDir(dir);
    }
  }, 30_000);
});
