/**
 * What `pulse studio`'s listener refuses, each next to the near miss it must accept: unknown
 * routes (404), bad JSON (400), a non-JSON POST (415), no token when one is required (401), a
 * foreign Host or Origin (403), and paths that try to leave the page's files.
 */
import { request } from "node:http";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, runBin } from "../cli/run-bin.js";
import { startStudio, type Studio } from "./studio-process.js";

const HELLO = join(ROOT, "manifests/examples/hello.loop.yaml");

function raw(url: string, path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: string; type: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: options.method ?? "GET", headers: options.headers ?? {} }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, type: String(res.headers["content-type"] ?? "") }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

const json = { "content-type": "application/json" };

describe("pulse studio on loopback without a token", () => {
  let studio: Studio;
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-studio-http-"));
    studio = await startStudio(dir, ["--store", "memory:", "--no-kickoff", HELLO]);
  });
  afterAll(async () => expect(await studio.stop()).toBe(0));

  it("serves the page and the API; unknown routes are 404 JSON", async () => {
    const page = await raw(studio.url, "/");
    expect(page.status).toBe(200);
    expect(page.body).toContain("<title>pulse studio</title>");
    expect((await raw(studio.url, "/app.js")).type).toContain("text/javascript");
    const system = JSON.parse((await raw(studio.url, "/api/system")).body);
    expect(system.loops.map((l: { id: string }) => l.id)).toEqual(["examples.hello"]);
    for (const path of ["/nope", "/api/nope", "/api/loops/examples.hello/explode", "/api/runs/workflow/abc", "/index.htm"]) {
      const r = await raw(studio.url, path, path.endsWith("explode") ? { method: "POST", headers: json, body: "{}" } : {});
      expect(r.status, path).toBe(404);
      expect(JSON.parse(r.body).error.code).toBe("NOT_FOUND");
    }
    expect((await raw(studio.url, "/api/loops/no.such")).status).toBe(404);
    expect((await raw(studio.url, "/api/system", { method: "POST", headers: json, body: "{}" })).status).toBe(405);
  });

  it("reads nothing outside the page's files, however the path is spelled", async () => {
    for (const path of ["/../package.json", "/%2e%2e/package.json", "/app.js/../../package.json", "/studio/app.js", "/..%2fpackage.json", "/dist/src/index.js", "//etc/passwd", "/app.js%00.html"]) {
      const r = await raw(studio.url, path);
      expect(r.status, path).toBe(404);
      expect(r.body, path).not.toContain('"name": "pulse"');
    }
  });

  it("refuses bad JSON (400) and a non-JSON POST (415); {} as JSON is accepted", async () => {
    const bad = await raw(studio.url, "/api/loops/examples.hello/pause", { method: "POST", headers: json, body: "{bad" });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe("BAD_JSON");
    const form = await raw(studio.url, "/api/loops/examples.hello/pause", { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" });
    expect(form.status).toBe(415);
    const extra = await raw(studio.url, "/api/loops/examples.hello/pause", { method: "POST", headers: json, body: '{"now":true}' });
    expect(extra.status).toBe(400);
    const ok = await raw(studio.url, "/api/loops/examples.hello/pause", { method: "POST", headers: json, body: "{}" });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body).status).toBe("paused");
    expect(JSON.parse((await raw(studio.url, "/api/loops/examples.hello/resume", { method: "POST", headers: json })).body).status).toBe("idle");
    expect((await raw(studio.url, "/api/traces/not-a-trace")).status).toBe(400);
    expect((await raw(studio.url, "/api/traces/0123456789abcdef0123456789abcdef")).status).toBe(404);
    expect((await raw(studio.url, "/api/conformance", { method: "POST", headers: json, body: '{"report_version": 2}' })).status).toBe(400);
    expect((await raw(studio.url, "/api/events", { headers: { "last-event-id": "yesterday" } })).status).toBe(400);
  });

  it("refuses a foreign Host (DNS rebinding) and a foreign Origin with 403; its own names pass", async () => {
    const host = await raw(studio.url, "/api/system", { headers: { host: "evil.example" } });
    expect(host.status).toBe(403);
    expect(JSON.parse(host.body).error.code).toBe("FORBIDDEN_HOST");
    expect((await raw(studio.url, "/", { headers: { host: `attacker.test:${studio.port}` } })).status).toBe(403);
    const origin = await raw(studio.url, "/api/loops/examples.hello/pause", { method: "POST", headers: { ...json, origin: "http://evil.example" }, body: "{}" });
    expect(origin.status).toBe(403);
    expect(JSON.parse(origin.body).error.code).toBe("FORBIDDEN_ORIGIN");
    expect((await raw(studio.url, "/api/system", { headers: { "sec-fetch-site": "cross-site" } })).status).toBe(403);
    expect((await raw(studio.url, "/api/system", { headers: { host: `localhost:${studio.port}` } })).status).toBe(200);
    expect((await raw(studio.url, "/api/system", { headers: { host: `127.0.0.1:${studio.port}`, origin: `http://127.0.0.1:${studio.port}` } })).status).toBe(200);
  });

  it("triggers an iteration through the host and finds its trace by id, with the store's audit events", async () => {
    const r = JSON.parse((await raw(studio.url, "/api/loops/examples.hello/trigger", { method: "POST", headers: json, body: "{}" })).body);
    // The loop's 2 s periodic cadence may have run iterations before this one on a slow machine.
    expect(r).toMatchObject({ result: "completed", iteration: expect.any(Number) });
    expect(r.iteration).toBeGreaterThanOrEqual(1);
    const trace = JSON.parse((await raw(studio.url, `/api/traces/${r.trace_id}`)).body);
    expect(trace.row.phases.map((p: { phase_id: string }) => p.phase_id)).toEqual(["fetch", "decide", "apply", "learn"]);
    expect(trace.audit.length).toBeGreaterThan(4);
    expect(trace.audit.every((a: { event: { trace_id: string } }) => a.event.trace_id === r.trace_id)).toBe(true);
  });
});

describe("pulse studio with a token", () => {
  it("requires the token on the API (401 without or with a wrong one); the page itself loads", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-studio-http-"));
    const token = "s3cret-token-0123456789";
    const studio = await startStudio(dir, ["--store", "memory:", "--no-kickoff", "--token", token, HELLO]);
    try {
      expect(studio.token).toBe(token);
      expect((await raw(studio.url, "/api/system")).status).toBe(401);
      expect((await raw(studio.url, "/api/events")).status).toBe(401);
      expect((await raw(studio.url, "/api/system", { headers: { authorization: `Bearer ${token}x` } })).status).toBe(401);
      expect((await raw(studio.url, "/api/system", { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      expect((await raw(studio.url, "/")).status).toBe(200);
    } finally {
      expect(await studio.stop()).toBe(0);
    }
  });

  it("off loopback, makes up a token and prints it when none is given, and requires it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-studio-http-"));
    const studio = await startStudio(dir, ["--store", "memory:", "--no-kickoff", "--host", "0.0.0.0", HELLO]);
    try {
      expect(studio.token).toMatch(/^[0-9a-f]{48}$/);
      expect(studio.output()).toContain("bearer token made up for this run");
      expect((await raw(studio.url, "/api/system")).status).toBe(401);
      expect((await raw(studio.url, "/api/system", { headers: { authorization: `Bearer ${studio.token}` } })).status).toBe(200);
    } finally {
      expect(await studio.stop()).toBe(0);
    }
  });

  it("refuses an invalid manifest with its positioned errors and exit 1, before listening", () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-studio-bad-"));
    writeFileSync(join(dir, "bad.yaml"), "pulse_protocol_version: '0.1'\nloop_id: bad.loop\nphases: []\n");
    const r = runBin("pulse", ["studio", "--store", "memory:", "--port", "0", join(dir, "bad.yaml")]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/bad\.yaml:\d+:\d+/);
    expect(r.stderr).toContain("pulse studio: ");
    expect(r.stdout).not.toContain("pulse studio at");
  });

  it("refuses bad flags with one line and exit 2", () => {
    for (const [args, message] of [
      [["--port", "70000"], "--port takes a port from 0 to 65535"],
      [["--token", "short"], "--token (or PULSE_TOKEN) must be at least 16 characters"],
      [["--host", "not a host"], "--host takes an address or host name"],
    ] as const) {
      const r = runBin("pulse", ["studio", "--store", "memory:", ...args]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain(message);
    }
  });
});

describe("pulse run --studio", () => {
  it("serves the studio over the run's own host: its loops, their iterations, the controls, the agent pages", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-studio-run-"));
    const child = spawn(process.execPath, [join(ROOT, "dist/bin/pulse.mjs"), "run", "--studio", "0", "--store", "memory:", "--duration", "60s", HELLO], { cwd: dir, env: { PATH: process.env.PATH ?? "", HOME: dir }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stderr.on("data", (d) => (out += d));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on("data", (d) => {
        out += d;
        const m = /pulse studio at (http:\/\/[^/\s]+)\//.exec(out);
        if (m) resolve(m[1]!);
      });
      child.on("exit", (code) => reject(new Error(`pulse run exited ${code}: ${out}`)));
    });
    try {
      const system = JSON.parse((await raw(url, "/api/system")).body);
      expect(system.loops.map((l: { id: string }) => l.id)).toEqual(["examples.hello"]);
      const r = JSON.parse((await raw(url, "/api/loops/examples.hello/trigger", { method: "POST", headers: json, body: "{}" })).body);
      expect(r.result).toBe("completed");
      // The iteration the studio triggered is in the run's own trace, as every other.
      await new Promise((res) => setTimeout(res, 200));
      expect(out).toMatch(new RegExp(`#${r.iteration} \\(manual\\).*trace ${r.trace_id.slice(0, 8)}`));
      const trace = JSON.parse((await raw(url, `/api/traces/${r.trace_id}`)).body);
      expect(trace.row.phases.find((p: { phase_id: string }) => p.phase_id === "fetch").output).toContain("query");
      expect((await raw(url, "/api/system", { headers: { host: "evil.example" } })).status).toBe(403);
      // The agent pages too, over $HOME's agent home, made at their first request only.
      const home = join(dir, ".pulse", "agent");
      expect(existsSync(home)).toBe(false);
      const refused = await raw(url, "/api/agent/threads", { method: "POST", headers: { ...json, origin: "https://evil.example" }, body: "{}" });
      expect(refused.status).toBe(403);
      expect(existsSync(home)).toBe(false);
      const overview = await raw(url, "/api/agent");
      expect(overview.status, overview.body).toBe(200);
      expect(JSON.parse(overview.body)).toBeTypeOf("object");
      expect(existsSync(home)).toBe(true);
    } finally {
      const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
      child.kill("SIGINT");
      expect(await exited).toBe(0);
    }
  });
});
