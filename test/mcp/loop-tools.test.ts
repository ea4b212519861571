/**
 * `pulse mcp`: loops as MCP tools (spec §14) in both conformant styles, driven by the MCP SDK's
 * own client over standard input and output and over Streamable HTTP, each call run through the
 * runtime (signatures, idempotent replays, invariants) with its audit events in the store.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { ROOT, runBin } from "../cli/run-bin.js";

const BIN = join(ROOT, "dist/bin/pulse.mjs");
const HELLO = join(ROOT, "manifests/examples/hello.loop.yaml");
const GRAPHONOMOUS = join(ROOT, "manifests/graphonomous.continual_learning.yaml");
const TRACE = "0af7651916cd43dd8448eb211c80319c";

type Text = { text: string }[];
const structured = (r: unknown) => (r as { structuredContent?: unknown }).structuredContent as Record<string, any>;

async function stdioClient(args: string[], cwd: string): Promise<Client> {
  const client = new Client({ name: "test", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, "mcp", ...args], cwd, env: { PATH: process.env.PATH ?? "", HOME: cwd }, stderr: "pipe" }));
  return client;
}

function auditOf(store: string, trace: string): { event_type: string; phase_id: string | null; trace_id: string }[] {
  const r = runBin("pulse", ["audit", "--store", `sqlite:${store}`, "--trace", trace, "--json", "--limit", "500"]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.event_type !== undefined || e.event !== undefined).map((e) => e.event ?? e);
}

describe("pulse mcp over standard input and output", () => {
  it("per-phase style: pulse_<loop_id>_<phase_id> tools with schemas from the manifest, run through the runtime and audited", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-mcp-"));
    const store = join(dir, "pulse.db");
    const client = await stdioClient(["--style", "per-phase", "--store", `sqlite:${store}`, HELLO, GRAPHONOMOUS], dir);
    try {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      // §14's own example.
      expect(names).toContain("pulse_graphonomous_continual_learning_retrieve_ctx");
      expect(names).toEqual(expect.arrayContaining(["pulse_examples_hello_fetch", "pulse_examples_hello_decide", "pulse_examples_hello_apply", "pulse_examples_hello_learn", "pulse_iterate", "pulse_loop_status"]));
      expect(names).toHaveLength(4 + 5 + 2);
      // learn_outcome takes an OutcomeSignal: the token's JSON Schema, required fields and all.
      const learn = tools.find((t) => t.name === "pulse_graphonomous_continual_learning_learn_outcome")!;
      expect((learn.inputSchema.properties as any).input.required).toEqual(["token", "version", "trace_id", "action_id", "status"]);
      expect(learn.description).toContain("learn");

      const first = await client.callTool({ name: "pulse_examples_hello_fetch", arguments: { input: { query: "hello" }, trace_id: TRACE } });
      expect(first.isError, JSON.stringify(first.content)).toBeFalsy();
      expect(structured(first)).toMatchObject({ status: "completed", loop_id: "examples.hello", phase_id: "fetch", trace_id: TRACE, replayed: false });
      expect(structured(first).signature).toMatch(/^blake3:[0-9a-f]{64}$/);
      // fetch is idempotent: the same call again is a replay with the same signature and output (§5.2).
      const again = await client.callTool({ name: "pulse_examples_hello_fetch", arguments: { input: { query: "hello" }, trace_id: TRACE } });
      expect(structured(again)).toMatchObject({ replayed: true, signature: structured(first).signature, output: structured(first).output });

      const bad = await client.callTool({ name: "pulse_examples_hello_fetch", arguments: { input: {}, trace_id: "nope" } });
      expect(bad.isError).toBe(true);
      expect((bad.content as Text)[0]!.text).toContain("trace_id must be 32 lowercase hex digits");
      const extra = await client.callTool({ name: "pulse_examples_hello_fetch", arguments: { inputs: {} } });
      expect(extra.isError).toBe(true);

      const status = await client.callTool({ name: "pulse_loop_status", arguments: { loop: "examples.hello" } });
      expect(structured(status).loops).toHaveLength(1);
      expect(structured(status).loops[0]).toMatchObject({ loop_id: "examples.hello", status: "idle" });
    } finally {
      await client.close();
    }
    const events = auditOf(store, TRACE);
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((e) => e.trace_id === TRACE)).toBe(true);
    expect(events.some((e) => e.phase_id === "fetch")).toBe(true);
  });

  it("grouped style: the five kind tools take the phase as action; unknown actions are refused; pulse_iterate runs a whole iteration", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-mcp-"));
    const client = await stdioClient(["--style", "grouped", "--store", "memory:", GRAPHONOMOUS], dir);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["act", "consolidate", "learn", "pulse_iterate", "pulse_loop_status", "retrieve", "route"]);
      const retrieve = tools.find((t) => t.name === "retrieve")!;
      expect((retrieve.inputSchema.properties as any).action.enum).toEqual(["retrieve_ctx"]);
      expect(retrieve.inputSchema.required).toEqual(["action"]);
      const ok = await client.callTool({ name: "retrieve", arguments: { action: "retrieve_ctx", input: { query: "graphs" } } });
      expect(ok.isError, JSON.stringify(ok.content)).toBeFalsy();
      expect(structured(ok)).toMatchObject({ status: "completed", phase_id: "retrieve_ctx", loop_id: "graphonomous.continual_learning" });
      const wrong = await client.callTool({ name: "retrieve", arguments: { action: "act_store" } });
      expect(wrong.isError).toBe(true);
      expect((wrong.content as Text)[0]!.text).toContain("action must be one of retrieve_ctx");
      const missing = await client.callTool({ name: "act", arguments: {} });
      expect(missing.isError).toBe(true);
      const iteration = await client.callTool({ name: "pulse_iterate", arguments: { loop: "graphonomous.continual_learning", input: { query: "graphs" } } });
      expect(iteration.isError, JSON.stringify(iteration.content)).toBeFalsy();
      expect(structured(iteration)).toMatchObject({ status: "completed", loop_id: "graphonomous.continual_learning" });
      expect(structured(iteration).phases.map((p: { phase_id: string }) => p.phase_id)).toEqual(["retrieve_ctx", "route_topology", "act_store", "learn_outcome", "consolidate_idle"]);
      expect(structured(iteration).audit_events).toBeGreaterThan(3);
    } finally {
      await client.close();
    }
  });
});

function startHttp(args: string[], cwd: string): Promise<{ child: ChildProcess; url: string; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, "mcp", "--http", "0", ...args], { cwd, env: { PATH: process.env.PATH ?? "", HOME: cwd }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d) => {
      out += d;
      const m = /pulse mcp at (http:\/\/\S+\/mcp)/.exec(out);
      if (m) resolve({ child, url: m[1]!, stop: () => new Promise((r) => (child.once("exit", (c) => r(c)), child.kill("SIGTERM"))) });
    });
    child.stderr!.on("data", (d) => (out += d));
    child.on("exit", (code) => reject(new Error(`pulse mcp exited ${code}: ${out}`)));
  });
}

function post(url: string, headers: Record<string, string>): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }));
  });
}

describe("pulse mcp over Streamable HTTP", () => {
  for (const style of ["per-phase", "grouped"] as const) {
    it(`${style} style: the SDK's client lists and calls the tools`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "pulse-mcp-"));
      const served = await startHttp(["--style", style, "--store", "memory:", HELLO], dir);
      const client = new Client({ name: "test", version: "1" });
      try {
        await client.connect(new StreamableHTTPClientTransport(new URL(served.url)));
        const names = (await client.listTools()).tools.map((t) => t.name);
        if (style === "per-phase") expect(names).toEqual(["pulse_examples_hello_fetch", "pulse_examples_hello_decide", "pulse_examples_hello_apply", "pulse_examples_hello_learn", "pulse_iterate", "pulse_loop_status"]);
        else expect(names).toEqual(["retrieve", "route", "act", "learn", "pulse_iterate", "pulse_loop_status"]);
        const call = style === "per-phase" ? { name: "pulse_examples_hello_fetch", arguments: { input: { query: "x" } } } : { name: "retrieve", arguments: { action: "fetch", input: { query: "x" } } };
        const r = await client.callTool(call);
        expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
        expect(structured(r)).toMatchObject({ status: "completed", phase_id: "fetch" });
        const it1 = await client.callTool({ name: "pulse_iterate", arguments: { loop: "examples.hello" } });
        expect(structured(it1)).toMatchObject({ status: "completed", iteration: 1 });
        // A web page's request (foreign Origin) and a rebinding Host are refused; its own names pass.
        expect(await post(served.url, { origin: "http://evil.example" })).toBe(403);
        expect(await post(served.url, { host: "evil.example" })).toBe(403);
        expect(await post(served.url, {})).toBe(200);
        // Only JSON: a form or plain text (what a page can send without asking) is refused.
        expect(await post(served.url, { "content-type": "text/plain" })).toBe(415);
        expect(await post(served.url, { "content-type": "application/x-www-form-urlencoded" })).toBe(415);
        expect(await post(served.url, { "content-type": "application/json; charset=utf-8" })).toBe(200);
      } finally {
        await client.close();
        expect(await served.stop()).toBe(0);
      }
    });
  }

  it("off loopback requires its token: none or a wrong one 401, the right one served", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-mcp-"));
    const token = "0123456789abcdef0123";
    const served = await startHttp(["--http", "0.0.0.0:0", "--token", token, "--store", "memory:", HELLO], dir);
    const url = served.url.replace("0.0.0.0", "127.0.0.1");
    try {
      expect(await post(url, {})).toBe(401);
      expect(await post(url, { authorization: "Bearer 0123456789abcdef0124" })).toBe(401);
      expect(await post(url, { authorization: `Bearer ${token}` })).toBe(200);
    } finally {
      expect(await served.stop()).toBe(0);
    }
  });

  it("refuses bad flags with one line and exit 2", () => {
    for (const [args, message] of [
      [["--http", "0.0.0.0:0", HELLO], "--http 0.0.0.0:0 serves the loops to other machines: give it a --token"],
      [["--stdio", "--http", "0", HELLO], "--stdio and --http are two transports"],
      [["--style", "flat", HELLO], "flat"],
      [[], "pulse mcp needs manifests"],
    ] as const) {
      const r = runBin("pulse", ["mcp", "--store", "memory:", ...args]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(message);
    }
  });
});
