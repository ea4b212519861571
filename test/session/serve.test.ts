/**
 * `pulse serve` and `pulse session mcp` as clients use them: the seed's REST endpoints with
 * JSON validation (400s that name the field, and the near miss accepted), 404/409 for unknown
 * or finished sessions, loopback by default and a bearer token off it; the MCP tools through the
 * SDK's own client over Streamable HTTP (/mcp) and over stdio.
 */
import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runBin } from "../cli/run-bin.js";
import { until } from "./steering.js";
import { startServe } from "./serve-process.js";
import { gitLog, gitRepo, removeDir, worktreesRoot } from "./helpers.js";

const BIN = join(ROOT, "dist/bin/pulse.mjs");
const STEPS = [
  { match: { iteration: 1 }, files: { "a.js": "1\n" }, commit: "feat: a", text: "Wrote a.js. <signal>CONTINUE</signal>" },
  { match: { iteration: 2 }, text: "<signal>COMPLETE</signal>" },
];

let repo: string;
let script: string;
let store: string;
let server: ChildProcess;
let url: string;

function serve(args: string[], env: Record<string, string> = {}) {
  return startServe(repo, args, env);
}

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}${path}`, { method, headers: { "content-type": "application/json", ...headers }, ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }) });
  return { status: res.status, body: await res.json() };
}


beforeAll(async () => {
  repo = gitRepo();
  script = join(repo, ".git", "steps.json");
  writeFileSync(script, JSON.stringify({ steps: STEPS }));
  store = join(repo, ".pulse", "pulse.db");
  ({ child: server, url } = await serve(["--listen", "0", "--store", store, "--allow-scripts", join(repo, ".git")]));
});

afterAll(async () => {
  server?.kill("SIGTERM");
  await new Promise((r) => server?.once("exit", r));
  removeDir(repo);
});

describe("pulse serve: REST", () => {
  it("starts a session, reports it until complete, and lists it by status", async () => {
    const started = await call("POST", "/api/pulse/start", { projectName: "my-app", projectPath: repo, goal: "Write a.js", maxIterations: 5, driver: "scripted", script });
    expect(started.status).toBe(201);
    expect(started.body.session).toMatchObject({ project_name: "my-app", goal: "Write a.js", max_iterations: 5, created_by: "api", status: "running" });
    const id = started.body.session.id;
    const done = await until(async () => {
      const r = await call("GET", `/api/pulse/${id}`);
      return r.body.session.status === "complete" ? r.body : undefined;
    });
    expect(done.session).toMatchObject({ current_iteration: 2, total_commits: 1, last_signal: "COMPLETE" });
    expect(done.iterations.map((i: { signal: string }) => i.signal)).toEqual(["CONTINUE", "COMPLETE"]);
    // Its commits are on its own branch; the repository's checkout stays where it was.
    expect(done.session.branch_name).toBe(`pulse/session/${id.slice(0, 8)}`);
    expect(gitLog(repo, done.session.branch_name)[0]).toBe("feat: a");
    expect(gitLog(repo)).toEqual(["initial"]);
    const complete = await call("GET", "/api/pulse?status=complete");
    expect(complete.body.sessions.map((s: { id: string }) => s.id)).toContain(id);
    expect((await call("GET", "/api/pulse?status=running")).body.sessions).toEqual([]);
    // A finished session cannot be paused, resumed or aborted: 409 saying so.
    for (const action of ["pause", "resume", "abort"]) {
      const r = await call("POST", `/api/pulse/${id}/${action}`);
      expect(r.status).toBe(409);
      expect(r.body.error.message).toMatch(/complete/);
    }
  }, 30_000);

  it("pauses a session at its maxCost, and a resume with a raised maxCost continues it", async () => {
    const costly = join(repo, ".git", "costly.json");
    writeFileSync(costly, JSON.stringify({ steps: [{ match: { iteration: 1 }, files: { "b.js": "1\n" }, commit: "feat: b", text: "<signal>CONTINUE</signal>", costUsd: 0.02 }, { match: { iteration: 2 }, text: "<signal>COMPLETE</signal>" }] }));
    const started = await call("POST", "/api/pulse/start", { goal: "Write b.js", repo, driver: "scripted", script: costly, maxCost: 0.01 });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const id = started.body.session.id;
    const paused = await until(async () => {
      const r = await call("GET", `/api/pulse/${id}`);
      return r.body.session.status === "paused" ? r.body.session : undefined;
    });
    expect(paused).toMatchObject({ current_iteration: 1, max_cost_usd: 0.01, stop_reason: "budget_exhausted" });
    expect(paused.status_reason).toMatch(/^budget: spent \$0\.0200 of the \$0\.01 cap/);
    const bad = await call("POST", `/api/pulse/${id}/resume`, { maxCost: "lots" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/^maxCost: must be an amount of US dollars/);
    expect((await call("POST", `/api/pulse/${id}/resume`, { colour: 1 })).status).toBe(400);
    expect((await call("POST", `/api/pulse/${id}/pause`, { maxCost: 1 })).status).toBe(400);
    const resumed = await call("POST", `/api/pulse/${id}/resume`, { maxCost: 1 });
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    const done = await until(async () => {
      const r = await call("GET", `/api/pulse/${id}`);
      return r.body.session.status === "complete" ? r.body.session : undefined;
    });
    expect(done).toMatchObject({ current_iteration: 2, max_cost_usd: 1 });
  }, 30_000);

  it("refuses bad requests with a 400 that says what is wrong, and takes the near miss", async () => {
    const bad: [unknown, RegExp][] = [
      [{}, /^goal: is required$/],
      [{ goal: 5 }, /^goal: must be a non-empty string, got 5$/],
      [{ goal: "x", maxIterations: "ten" }, /^maxIterations: must be a whole number from 1 to 1000/],
      [{ goal: "x", repo: join(repo, "missing") }, /^repo: .*missing: no such directory/],
      [{ goal: "x", colour: "red" }, /^colour: is not a field of a start request/],
      [[1, 2], /^body: must be a JSON object/],
      ["{not json", /^the body is not JSON/],
      [{ goal: "x", driver: "scripted" }, /^script: the scripted driver needs a script/],
    ];
    for (const [body, message] of bad) {
      const r = await call("POST", "/api/pulse/start", body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toMatch(message);
    }
    expect((await call("GET", "/api/pulse?status=finished")).status).toBe(400);
    expect((await call("GET", "/api/pulse/00000000-0000-4000-8000-000000000000")).status).toBe(404);
    expect((await call("POST", "/api/pulse/00000000/abort")).status).toBe(404);
    expect((await call("GET", "/api/pulse/start")).status).toBe(405);
    expect((await call("GET", "/api/pulse/a/b/c")).status).toBe(404);
    expect((await call("DELETE", "/api/pulse")).status).toBe(405);
    const near = await call("POST", "/api/pulse/start", { goal: "x", repo, maxIterations: 1000, driver: "scripted", script });
    expect(near.status).toBe(201);
  }, 30_000);

  it("binds loopback by default, and requires a token on any other address", async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const refused = runBin("pulse", ["serve", "--listen", "0.0.0.0:0", "--store", store], { cwd: repo });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/serves sessions to other machines: give it a --token/);
    const token = "0123456789abcdef0123";
    const open = await serve(["--listen", "0.0.0.0:0", "--token", token, "--store", store]);
    try {
      const port = new URL(open.url).port;
      const anon = await fetch(`http://127.0.0.1:${port}/api/pulse`);
      expect(anon.status).toBe(401);
      const wrong = await fetch(`http://127.0.0.1:${port}/api/pulse`, { headers: { authorization: "Bearer 0123456789abcdef0124" } });
      expect(wrong.status).toBe(401);
      const ok = await fetch(`http://127.0.0.1:${port}/api/pulse`, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      // The MCP endpoint is behind the same token: refused without it, served with it.
      const rpc = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
      const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" };
      expect((await fetch(`http://127.0.0.1:${port}/mcp`, { method: "POST", headers: mcpHeaders, body: rpc })).status).toBe(401);
      expect((await fetch(`http://127.0.0.1:${port}/mcp`, { method: "POST", headers: { ...mcpHeaders, authorization: "Bearer 0123456789abcdef0124" }, body: rpc })).status).toBe(401);
      const listed = await fetch(`http://127.0.0.1:${port}/mcp`, { method: "POST", headers: { ...mcpHeaders, authorization: `Bearer ${token}` }, body: rpc });
      expect(listed.status).toBe(200);
      expect(await listed.text()).toMatch(/pulse_start/);
    } finally {
      open.child.kill("SIGTERM");
    }
  }, 30_000);
});

describe("pulse serve: the event stream", () => {
  it("GET /api/pulse/:id/events pages a session's events by seq; 404 for an unknown session, 400 for a bad after", async () => {
    const started = await call("POST", "/api/pulse/start", { goal: "Write a.js again", repo, driver: "scripted", script, maxIterations: 5 });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const id = started.body.session.id;
    const all = await until(async () => {
      const r = await call("GET", `/api/pulse/${id}/events`);
      return r.body.events?.some((e: { type: string }) => e.type === "session.finished") ? r.body : undefined;
    });
    const types = all.events.map((e: { type: string }) => e.type);
    expect(types[0]).toBe("session.started");
    expect(types.filter((t: string) => t === "iteration.started")).toHaveLength(2);
    expect(types.filter((t: string) => t === "iteration.finished")).toHaveLength(2);
    expect(types.at(-1)).toBe("session.finished");
    expect(all.events.map((e: { seq: number }) => e.seq)).toEqual(all.events.map((_: unknown, k: number) => k + 1));
    expect(all.next).toBe(all.events.length);
    const finished = all.events.find((e: { type: string }) => e.type === "iteration.finished");
    expect(finished.data.iteration).toMatchObject({ iteration_number: 1, signal: "CONTINUE", output_summary: expect.stringContaining("Wrote a.js") });
    // after=SEQ: only what came since; after the last, nothing, and next stays.
    const since = await call("GET", `/api/pulse/${id.slice(0, 8)}/events?after=3`);
    expect(since.status).toBe(200);
    expect(since.body.events).toEqual(all.events.slice(3));
    const none = await call("GET", `/api/pulse/${id}/events?after=${all.next}`);
    expect(none.body).toEqual({ events: [], next: all.next });
    const unknown = await call("GET", "/api/pulse/00000000-0000-4000-8000-000000000000/events");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toMatch(/no session 00000000-0000-4000-8000-000000000000/);
    for (const bad of ["-1", "x", "1.5", ""]) {
      const r = await call("GET", `/api/pulse/${id}/events?after=${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.error).toMatchObject({ code: "BAD_REQUEST", field: "after" });
    }
    expect((await call("POST", `/api/pulse/${id}/events`)).status).toBe(405);
  }, 30_000);
});

describe("the MCP tools", () => {
  const TOOLS = ["pulse_abort", "pulse_events", "pulse_list", "pulse_pause", "pulse_resume", "pulse_start", "pulse_status", "pulse_steer"];
  // pulse serve also serves the workflow's tools (test/workflow/serve.test.ts) and every loop's runs (test/runs/cli.test.ts); pulse session mcp does not.
  const SERVE_TOOLS = [...TOOLS, "run_status", "runs_list", "workflow_events", "workflow_list", "workflow_resume", "workflow_start", "workflow_status", "workflow_steer", "workflow_stop"];

  it("over Streamable HTTP at /mcp: lists the tools, starts a session and watches it", async () => {
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(SERVE_TOOLS);
      const started = await client.callTool({ name: "pulse_start", arguments: { goal: "via mcp", projectPath: repo, driver: "scripted", script, maxIterations: 3 } });
      expect(started.isError).toBeFalsy();
      const id = JSON.parse((started.content as { text: string }[])[0]!.text).id as string;
      const status = await until(async () => {
        const r = await client.callTool({ name: "pulse_status", arguments: { sessionId: id } });
        const d = JSON.parse((r.content as { text: string }[])[0]!.text);
        return d.session.status === "running" ? undefined : d;
      });
      expect(status.session).toMatchObject({ status: "complete", created_by: "mcp" });
      const bad = await client.callTool({ name: "pulse_abort", arguments: { sessionId: id } });
      expect(bad.isError).toBe(true);
      expect((bad.content as { text: string }[])[0]!.text).toMatch(/already complete/);
      const list = await client.callTool({ name: "pulse_list", arguments: { status: "complete" } });
      expect(JSON.parse((list.content as { text: string }[])[0]!.text).map((s: { id: string }) => s.id)).toContain(id);
      // Its event stream, from the start and then after the first two.
      const all = JSON.parse((((await client.callTool({ name: "pulse_events", arguments: { sessionId: id } })).content) as { text: string }[])[0]!.text);
      expect(all.events[0]).toMatchObject({ seq: 1, type: "session.started" });
      expect(all.events.at(-1)).toMatchObject({ type: "session.finished", data: { session: { status: "complete" } } });
      const rest = JSON.parse((((await client.callTool({ name: "pulse_events", arguments: { sessionId: id, after: 2 } })).content) as { text: string }[])[0]!.text);
      expect(rest.events.map((e: { seq: number }) => e.seq)).toEqual(all.events.slice(2).map((e: { seq: number }) => e.seq));
      expect(rest.next).toBe(all.next);
      const unknown = await client.callTool({ name: "pulse_events", arguments: { sessionId: "00000000" } });
      expect(unknown.isError).toBe(true);
      expect((unknown.content as { text: string }[])[0]!.text).toMatch(/no session 00000000/);
    } finally {
      await client.close();
    }
  }, 30_000);

  it("over /mcp: pulse_start with maxTokens pauses at the budget, pulse_resume with a raised maxTokens continues", async () => {
    const tokens = join(repo, ".git", "tokens.json");
    const usage = { inputTokens: 80, outputTokens: 20 };
    writeFileSync(tokens, JSON.stringify({ steps: [{ match: { iteration: 1 }, files: { "c.js": "1\n" }, commit: "feat: c", text: "<signal>CONTINUE</signal>", usage }, { match: { iteration: 2 }, text: "<signal>COMPLETE</signal>", usage }] }));
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
    const text = (r: unknown) => JSON.parse(((r as { content: { text: string }[] }).content)[0]!.text);
    try {
      const started = await client.callTool({ name: "pulse_start", arguments: { goal: "tokens", projectPath: repo, driver: "scripted", script: tokens, maxTokens: 100 } });
      expect(started.isError).toBeFalsy();
      const id = text(started).id as string;
      const paused = await until(async () => {
        const d = text(await client.callTool({ name: "pulse_status", arguments: { sessionId: id } }));
        return d.session.status === "paused" ? d.session : undefined;
      });
      expect(paused.status_reason).toMatch(/^budget: used 100 of the 100 token cap.*--max-tokens N/);
      const resumed = await client.callTool({ name: "pulse_resume", arguments: { sessionId: id, maxTokens: 1000 } });
      expect(resumed.isError).toBeFalsy();
      const done = await until(async () => {
        const d = text(await client.callTool({ name: "pulse_status", arguments: { sessionId: id } }));
        return d.session.status === "complete" ? d.session : undefined;
      });
      expect(done).toMatchObject({ max_tokens: 1000, total_tokens_used: 200 });
    } finally {
      await client.close();
    }
  }, 30_000);

  it("over stdio (pulse session mcp)", async () => {
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, "session", "mcp", "--store", store], cwd: repo, env: { PATH: process.env.PATH ?? "", HOME: repo, PULSE_WORKTREES: worktreesRoot() }, stderr: "pipe" }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(TOOLS);
      const list = await client.callTool({ name: "pulse_list", arguments: {} });
      expect(JSON.parse((list.content as { text: string }[])[0]!.text).length).toBeGreaterThanOrEqual(1);
      const missing = await client.callTool({ name: "pulse_status", arguments: { sessionId: "ffffffff" } });
      expect(missing.isError).toBe(true);
      expect((missing.content as { text: string }[])[0]!.text).toMatch(/no session ffffffff/);
    } finally {
      await client.close();
    }
  }, 30_000);
});
