/**
 * `pulse studio`'s agent pages over HTTP, against a real `pulse studio` process, a real agent
 * home (examples/agent/home: a perform.js action and an Agent Skills folder) and a loopback
 * stand-in for the model's API: threads and a run through them, kept across a restart; every
 * path refused outside the roots (traversal, absolute, a symbolic link, the sibling whose name
 * starts the same) next to the near miss that is accepted; the listener's refusals on the new
 * routes; the managers' validation; the settings' masked key and connectivity test.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../cli/run-bin.js";
import { startModelApi, type ModelApi } from "../agent/support/model-api.js";
import { startStudio, type Studio } from "./studio-process.js";

function call(url: string, path: string, o: { method?: string; headers?: Record<string, string>; body?: unknown; raw?: string } = {}): Promise<{ status: number; json: any; text: string }> {
  const u = new URL(url);
  const body = o.raw ?? (o.body === undefined ? undefined : JSON.stringify(o.body));
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: o.method ?? (body !== undefined ? "POST" : "GET"), headers: { ...(body !== undefined && !o.raw ? { "content-type": "application/json" } : {}), ...o.headers } }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => {
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, json, text });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

const plan = (steps: { id: string; desc: string }[]) => ({ content: JSON.stringify({ steps }) });
const execute = (name: string, args: Record<string, unknown>, step: string) => ({ content: JSON.stringify({ type: "execute", action: { name, args }, step, reason: `run ${name}` }) });

function setup(model: ModelApi): { home: string; root: string; cwd: string } {
  const base = mkdtempSync(join(tmpdir(), "pulse-studio-agent-"));
  const home = join(base, "home");
  cpSync(join(ROOT, "examples/agent/home"), home, { recursive: true });
  writeFileSync(join(home, "config.json"), JSON.stringify({ llm: [{ alias: "mock", provider: "openai_compatible", baseUrl: `${model.url}/v1`, model: "mock-1", apiKeyEnv: "MOCK_KEY" }], screening: { strategy: "keyword" }, execution: { execution_mode: "auto" } }));
  const root = join(base, "work");
  mkdirSync(join(root, "sub"), { recursive: true });
  mkdirSync(join(root, "..x"));
  mkdirSync(join(base, "work-old"));
  mkdirSync(join(base, "outside"));
  writeFileSync(join(base, "outside", "secret.txt"), "secret\n");
  symlinkSync(join(base, "outside"), join(root, "link-out"));
  writeFileSync(join(root, "notes.txt"), "Ada joins on Monday.\n");
  return { home, root, cwd: base };
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("pulse studio's agent pages", () => {
  let model: ModelApi;
  let studio: Studio;
  let dirs: { home: string; root: string; cwd: string };
  const start = () => startStudio(dirs.cwd, ["--store", "memory:", "--no-kickoff", "--agent-home", dirs.home, "--root", dirs.root]);

  beforeAll(async () => {
    model = await startModelApi();
    dirs = setup(model);
    studio = await start();
  }, 60_000);
  afterAll(async () => {
    expect(await studio?.stop()).toBe(0);
    await model?.close();
  });

  it("refuses a thread's working directory outside the roots: traversal, absolute, a symbolic link, the sibling named alike; accepts the near misses", async () => {
    const refused: [string, RegExp][] = [
      ["../outside", /outside the allowed roots/],
      [join(dirs.cwd, "outside"), /outside the allowed roots/],
      ["/etc", /outside the allowed roots/],
      ["link-out", /through a symbolic link/],
      [join(dirs.root, "link-out", "..", "..", "outside"), /outside the allowed roots/],
      [join(dirs.cwd, "work-old"), /outside the allowed roots/],
      ["sub/../../work-old", /outside the allowed roots/],
    ];
    for (const [workdir, why] of refused) {
      const r = await call(studio.url, "/api/agent/threads", { body: { workdir } });
      expect(r.status, workdir).toBe(403);
      expect(r.json.error.code, workdir).toBe("OUTSIDE_ROOTS");
      expect(r.json.error.message, workdir).toMatch(why);
    }
    for (const workdir of [dirs.root, "sub", "..x", `${dirs.root}/sub/../sub`, "./sub/"]) {
      const r = await call(studio.url, "/api/agent/threads", { body: { workdir, actions: ["greet"] } });
      expect(r.status, workdir).toBe(201);
      expect(r.json.thread.workdir.startsWith(dirs.root)).toBe(true);
    }
    expect((await call(studio.url, "/api/agent/threads", { body: { workdir: "notes.txt" } })).json.error.message).toMatch(/not a directory/);
    expect((await call(studio.url, "/api/agent/threads", { body: { workdir: "sub", actions: ["nope"] } })).json.error.code).toBe("UNKNOWN_ACTION");
  });

  it("runs a request in a thread: plan, action, result; the working directory and actions are fixed once it started", async () => {
    const { json } = await call(studio.url, "/api/agent/threads", { body: { workdir: dirs.root, actions: ["greet", "word-count"], title: "welcome" } });
    const id = json.thread.id;
    model.replies.push(plan([{ id: "s1", desc: "greet Ada" }]), execute("greet", { who: "Ada" }, "s1"));
    const asked = await call(studio.url, `/api/agent/threads/${id}/ask`, { body: { text: "Welcome Ada", files: ["notes.txt"] } });
    expect(asked.status, asked.text).toBe(202);
    const view = await until(() => call(studio.url, `/api/agent/threads/${id}`).then((r) => r.json), (v) => v.runs[0]?.status !== "running" && v.thread.messages.length === 2);
    const run = view.runs[0];
    expect(run).toMatchObject({ status: "succeeded", reason: "goal_achieved", request: "Welcome Ada" });
    expect(run.plan.steps).toEqual([expect.objectContaining({ id: "s1", status: "done" })]);
    expect(run.actions).toEqual([expect.objectContaining({ name: "greet", status: "ok", result: expect.stringContaining("Ada") })]);
    expect(run.progress.map((p: { type: string }) => p.type)).toEqual(expect.arrayContaining(["plan_built", "decision", "action_started", "action_result", "run_finished"]));
    expect(view.thread.messages[0]).toMatchObject({ role: "user", files: [join(dirs.root, "notes.txt")] });
    expect(view.thread.messages[1]).toMatchObject({ role: "agent", status: "succeeded" });
    // The planner was offered only the thread's actions.
    expect(JSON.stringify(model.chat[0]!.body)).toContain("greet");
    const fixed = await call(studio.url, `/api/agent/threads/${id}`, { body: { workdir: join(dirs.root, "sub") } });
    expect(fixed.status).toBe(409);
    expect(fixed.json.error.message).toMatch(/fixed once a task started/);
    expect((await call(studio.url, `/api/agent/threads/${id}`, { body: { actions: ["greet"] } })).status).toBe(409);
    expect((await call(studio.url, `/api/agent/threads/${id}`, { body: { title: "renamed", mode: "interactive" } })).status).toBe(200);
  }, 30_000);

  it("asks the page to confirm each action in interactive mode: yes runs it, no blocks the step", async () => {
    const { json } = await call(studio.url, "/api/agent/threads", { body: { workdir: dirs.root, actions: ["greet"], mode: "interactive" } });
    const id = json.thread.id;
    for (const yes of [true, false]) {
      model.replies.push(plan([{ id: "s1", desc: "greet Cy" }]), execute("greet", { who: "Cy" }, "s1"));
      expect((await call(studio.url, `/api/agent/threads/${id}/ask`, { body: { text: `Welcome Cy (${yes})` } })).status).toBe(202);
      const waiting = await until(() => call(studio.url, `/api/agent/threads/${id}`).then((r) => r.json), (v) => v.pending.length === 1);
      expect(waiting.pending[0]).toMatchObject({ kind: "confirm", text: expect.stringContaining('Run greet {"who":"Cy"}') });
      expect((await call(studio.url, `/api/agent/threads/${id}/answer`, { body: { key: waiting.pending[0].key, yes: "sure" } })).status).toBe(400);
      expect((await call(studio.url, `/api/agent/threads/${id}/answer`, { body: { key: "0000", yes } })).status).toBe(404);
      expect((await call(studio.url, `/api/agent/threads/${id}/answer`, { body: { key: waiting.pending[0].key, yes } })).json).toEqual({ answered: true });
      const done = await until(() => call(studio.url, `/api/agent/threads/${id}`).then((r) => r.json), (v) => v.running === null);
      const run = done.runs.at(-1);
      expect(done.pending).toEqual([]);
      if (yes) expect(run).toMatchObject({ status: "succeeded", actions: [{ name: "greet", status: "ok" }] });
      else expect(run).toMatchObject({ status: "blocked", actions: [{ name: "greet", ended: "declined" }] });
    }
  }, 30_000);

  it("checks every file a request names: outside the roots 403, six files 400; an upload lands in the thread's folder and is accepted", async () => {
    const { json } = await call(studio.url, "/api/agent/threads", { body: { workdir: dirs.root, actions: ["greet"] } });
    const id = json.thread.id;
    for (const f of ["/etc/passwd", "../outside/secret.txt", "link-out/secret.txt", join(dirs.cwd, "work-old")]) {
      const r = await call(studio.url, `/api/agent/threads/${id}/ask`, { body: { text: "read it", files: [f] } });
      expect(r.status, f).toBe(403);
    }
    expect((await call(studio.url, `/api/agent/threads/${id}/ask`, { body: { text: "six", files: Array(6).fill("notes.txt") } })).json.error.code).toBe("TOO_MANY_FILES");
    expect((await call(studio.url, `/api/agent/threads/${id}/ask`, { body: { text: "dir", files: ["sub"] } })).json.error.message).toMatch(/not a file/);
    // 50 MB together at most (sparse files: the sizes are real, the disk is not used).
    const sized = (name: string, bytes: number) => (truncateSync(join(dirs.root, name), bytes), name);
    writeFileSync(join(dirs.root, "big-a.bin"), "");
    writeFileSync(join(dirs.root, "big-b.bin"), "");
    writeFileSync(join(dirs.root, "big-c.bin"), "");
    const over = await call(studio.url, `/api/agent/threads/${id}/ask`, { body: { text: "big", files: [sized("big-a.bin", 30 * 1024 * 1024), sized("big-b.bin", 20 * 1024 * 1024 + 1)] } });
    expect(over.status).toBe(413);
    expect(over.json.error.message).toMatch(/at most 50 MB together/);
    model.replies.push(plan([{ id: "s1", desc: "greet" }]), execute("greet", { who: "Di" }, "s1"));
    const exactly = await call(studio.url, `/api/agent/threads/${id}/ask`, { body: { text: "Welcome Di", files: [sized("big-a.bin", 30 * 1024 * 1024), sized("big-c.bin", 20 * 1024 * 1024)] } });
    expect(exactly.status, exactly.text).toBe(202);
    await until(() => call(studio.url, `/api/agent/threads/${id}`).then((r) => r.json), (v) => v.running === null);
    const up = await call(studio.url, `/api/agent/threads/${id}/upload`, { body: { name: "../../brief.txt", data: Buffer.from("the brief").toString("base64") } });
    expect(up.status).toBe(201);
    expect(up.json.path).toContain(join(dirs.home, "saves", id, "uploads"));
    expect(up.json.path.endsWith("-brief.txt")).toBe(true);
    expect(readFileSync(up.json.path, "utf8")).toBe("the brief");
    model.replies.push(plan([{ id: "s1", desc: "greet" }]), execute("greet", { who: "Bo" }, "s1"));
    const ok = await call(studio.url, `/api/agent/threads/${id}/ask`, { body: { text: "Welcome Bo", files: [up.json.path] } });
    expect(ok.status, ok.text).toBe(202);
    await until(() => call(studio.url, `/api/agent/threads/${id}`).then((r) => r.json), (v) => v.running === null);
    // The preview reads what lies under the roots (or the uploads), nothing else.
    expect((await call(studio.url, `/api/agent/file?path=${encodeURIComponent(join(dirs.root, "notes.txt"))}`)).json.text).toContain("Ada");
    expect((await call(studio.url, `/api/agent/file?path=${encodeURIComponent(up.json.path)}`)).json.text).toBe("the brief");
    for (const p of ["/etc/passwd", join(dirs.root, "link-out", "secret.txt"), `${dirs.root}/../outside/secret.txt`, join(dirs.home, "config.json")]) expect((await call(studio.url, `/api/agent/file?path=${encodeURIComponent(p)}`)).status, p).toBe(403);
  }, 30_000);

  it("puts the new routes under the listener's guard: non-JSON 415, bad JSON 400, a foreign Origin or Host 403, wrong method 405, unknown 404", async () => {
    const routes = ["/api/agent/threads", "/api/agent/settings", "/api/agent/actions/x/template", "/api/agent/guides/g", "/api/agent/settings/test"];
    for (const path of routes) {
      expect((await call(studio.url, path, { method: "POST", raw: "{}", headers: { "content-type": "text/plain" } })).status, path).toBe(415);
      expect((await call(studio.url, path, { method: "POST", raw: "{", headers: { "content-type": "application/json" } })).status, path).toBe(400);
      expect((await call(studio.url, path, { body: {}, headers: { origin: "http://evil.example" } })).status, path).toBe(403);
      expect((await call(studio.url, path, { body: {}, headers: { host: "evil.example" } })).status, path).toBe(403);
    }
    expect((await call(studio.url, "/api/agent/threads")).status).toBe(405);
    expect((await call(studio.url, "/api/agent/nope")).status).toBe(404);
    // The near miss: the page's own origin passes.
    expect((await call(studio.url, "/api/agent/actions", { headers: { origin: `http://127.0.0.1:${studio.port}` } })).status).toBe(200);
  });

  it("manages actions: from the template, edited with validation, refused when invalid or misnamed, deleted", async () => {
    const made = await call(studio.url, "/api/agent/actions/shout/template", { body: {} });
    expect(made.status, made.text).toBe(201);
    expect(made.json.preview).toMatchObject({ name: "shout", arguments: [{ name: "text", type: "string", required: true }] });
    expect((await call(studio.url, "/api/agent/actions/shout/template", { body: {} })).status).toBe(409);
    for (const bad of [".hidden", "a/b", "..%2F..%2Fx", "x".repeat(65), "-x"]) expect((await call(studio.url, `/api/agent/actions/${encodeURIComponent(bad)}/template`, { body: {} })).status, bad).toBe(400);
    // ".." never reaches the route: the URL's own dot segments are gone before it is read.
    expect((await call(studio.url, "/api/agent/actions/%2E%2E/template", { body: {} })).status).toBe(404);
    expect(existsSync(join(dirs.home, "template"))).toBe(false);
    const got = (await call(studio.url, "/api/agent/actions/shout")).json;
    const meta = JSON.parse(got.files["meta.json"]);
    const invalid = await call(studio.url, "/api/agent/actions/shout", { body: { files: { "meta.json": JSON.stringify({ ...meta, arguments: [{ name: "text", type: "str" }] }), "perform.js": got.files["perform.js"] } } });
    expect(invalid.status).toBe(422);
    expect(invalid.json.error.message).toMatch(/arguments\[0\]\.type must be one of/);
    const check = (await call(studio.url, "/api/agent/actions/validate", { body: { files: { "meta.json": "{ nope", "perform.js": "" } } })).json;
    expect(check.ok).toBe(false);
    expect(check.errors[0]).toMatch(/meta\.json: .*JSON/);
    const saved = await call(studio.url, "/api/agent/actions/shout", { body: { files: { "meta.json": JSON.stringify({ ...meta, tags: ["write"] }), "perform.js": got.files["perform.js"] } } });
    expect(saved.status).toBe(200);
    expect(saved.json.preview.tags).toEqual(["write"]);
    expect((await call(studio.url, "/api/agent")).json.actions.map((a: { name: string }) => a.name)).toEqual(["greet", "shout", "word-count"]);
    expect((await call(studio.url, "/api/agent/actions/shout/delete", { body: {} })).status).toBe(200);
    expect(existsSync(join(dirs.home, "actions", "shout"))).toBe(false);
    // An action folder that is a link out of the home is neither read nor deleted through the page.
    symlinkSync(join(dirs.cwd, "outside"), join(dirs.home, "actions", "escape"));
    expect((await call(studio.url, "/api/agent/actions/escape")).status).toBe(403);
    expect((await call(studio.url, "/api/agent/actions/escape/delete", { body: {} })).status).toBe(403);
    expect(existsSync(join(dirs.cwd, "outside", "secret.txt"))).toBe(true);
  });

  it("manages guides and knowledge with the agent's own checks and a preview", async () => {
    const guide = { meta: { name: "welcome", version: "1", domain: "hr" }, entries: [{ name: "w", description: "welcome someone", plan: ["greet", "count"] }] };
    const ok = await call(studio.url, "/api/agent/guides/welcome", { body: { files: { content: JSON.stringify(guide) }, create: true } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.preview.entries).toEqual([{ name: "w", description: "welcome someone", plan: ["greet", "count"] }]);
    expect((await call(studio.url, "/api/agent/guides/welcome", { body: { files: { content: "{}" }, create: true } })).status).toBe(409);
    const bad = await call(studio.url, "/api/agent/guides/welcome", { body: { files: { content: JSON.stringify({ ...guide, entries: [{ name: "w", description: "x", plan: "not a list" }] }) } } });
    expect(bad.status).toBe(422);
    expect(bad.json.error.message).toMatch(/entries\[0\]\.plan: must be a list/);
    expect(JSON.parse(readFileSync(join(dirs.home, "guides", "welcome.json"), "utf8"))).toEqual(guide);
    const k = await call(studio.url, "/api/agent/knowledge/validate", { body: { files: { content: JSON.stringify({ meta: { name: "k" }, entries: [{ name: "a", description: "b" }] }) } } });
    expect(k.json).toMatchObject({ ok: false, errors: [expect.stringMatching(/entries\[0\]\.content: must be a string/)] });
    const listed = (await call(studio.url, "/api/agent/guides")).json.items.map((i: { name: string }) => i.name);
    expect(listed).toContain("welcome");
    expect((await call(studio.url, "/api/agent/guides/welcome/delete", { body: {} })).status).toBe(200);
    expect((await call(studio.url, "/api/agent/guides/welcome")).status).toBe(404);
  });

  it("keeps a key out of what the page reads, keeps it when an entry is saved without one, and tests connectivity", async () => {
    const secret = "sk-test-0123456789abcdef";
    const saved = await call(studio.url, "/api/agent/settings", { body: { llm: [{ alias: "mock", provider: "openai_compatible", baseUrl: `${model.url}/v1`, model: "mock-1", apiKey: secret, temperature: 0.3, maxTokens: 256, think: false }], roles: { planner: "mock", decider: "mock" } } });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.text).not.toContain(secret);
    expect(saved.json.llm[0]).toMatchObject({ alias: "mock", apiKey: "••••cdef", apiKeySet: true });
    expect(statSync(join(dirs.home, "config.json")).mode & 0o777).toBe(0o600);
    const again = await call(studio.url, "/api/agent/settings", { body: { llm: [{ was: "mock", alias: "mock2", provider: "openai_compatible", baseUrl: `${model.url}/v1`, model: "mock-1" }] } });
    expect(again.json.llm[0]).toMatchObject({ alias: "mock2", apiKeySet: true });
    expect(JSON.parse(readFileSync(join(dirs.home, "config.json"), "utf8")).llm[0].apiKey).toBe(secret);
    expect((await call(studio.url, "/api/agent/settings", { body: { llm: [{ alias: "m", provider: "openai_compatible", baseUrl: "x", model: "m", apiKey: "••••cdef" }] } })).status).toBe(400);
    const invalid = await call(studio.url, "/api/agent/settings", { body: { llm: [{ alias: "m", provider: "nope", baseUrl: `${model.url}/v1`, model: "m" }] } });
    expect(invalid.status).toBe(422);
    expect(invalid.json.error.message).toMatch(/llm\.0\.provider/);
    model.replies.push({ content: "pong" });
    const test = await call(studio.url, "/api/agent/settings/test", { body: { alias: "mock2" } });
    expect(test.json).toMatchObject({ ok: true, reply: "pong", model: "mock-1" });
    expect(model.chat.at(-1)!.headers.authorization).toBe(`Bearer ${secret}`);
    const down = await call(studio.url, "/api/agent/settings/test", { body: { entry: { alias: "down", provider: "openai_compatible", baseUrl: "http://127.0.0.1:9/v1", model: "m" } } });
    expect(down.json.ok).toBe(false);
    expect(down.json.error).toBeTruthy();
    await call(studio.url, "/api/agent/settings", { body: { llm: [{ was: "mock2", alias: "mock", provider: "openai_compatible", baseUrl: `${model.url}/v1`, model: "mock-1" }], roles: {} } });
  });

  it("brings threads and runs back after a restart; a run cut off is shown interrupted, never running", async () => {
    const before = (await call(studio.url, "/api/agent")).json.threads;
    const welcome = before.find((t: { title: string }) => t.title === "renamed");
    expect(welcome).toBeTruthy();
    // A run its pulse never finished (no run_finished in its report).
    const runId = "6f1c1e8a-0000-4000-8000-000000000001";
    writeFileSync(join(dirs.home, "logs", `${runId}.jsonl`), `${JSON.stringify({ type: "run_started", id: "e1", ts: new Date().toISOString(), payload: { runId, mode: "auto", actions: [] } })}\n`);
    const cut = JSON.parse(readFileSync(join(dirs.home, "saves", `${welcome.id}.json`), "utf8"));
    cut.messages.push({ role: "user", text: "cut off", ts: new Date().toISOString(), runId });
    expect(await studio.stop()).toBe(0);
    writeFileSync(join(dirs.home, "saves", `${welcome.id}.json`), JSON.stringify(cut));
    studio = await start();
    const after = (await call(studio.url, "/api/agent")).json.threads;
    expect(after.map((t: { id: string }) => t.id).sort()).toEqual(before.map((t: { id: string }) => t.id).sort());
    const view = (await call(studio.url, `/api/agent/threads/${welcome.id}`)).json;
    expect(view.thread).toMatchObject({ title: "renamed", mode: "interactive" });
    expect(view.runs.map((r: { status: string }) => r.status)).toEqual(["succeeded", "interrupted"]);
    expect(view.runs[0].plan.steps[0].status).toBe("done");
  }, 60_000);
});

describe("pulse studio's agent pages with a token", () => {
  it("require it on every agent route, reads and changes alike (401 without it or with a wrong one); with it they answer", async () => {
    const model = await startModelApi();
    const dirs = setup(model);
    const token = "agent-token-0123456789abcdef";
    const studio = await startStudio(dirs.cwd, ["--store", "memory:", "--no-kickoff", "--agent-home", dirs.home, "--root", dirs.root, "--token", token]);
    try {
      // Nothing is made in the home until the agent pages are used.
      expect((await call(studio.url, "/api/system", { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      expect(existsSync(join(dirs.home, "saves"))).toBe(false);
      for (const [path, body] of [["/api/agent", undefined], ["/api/agent/settings", undefined], ["/api/agent/threads", { workdir: dirs.root }], ["/api/agent/actions/t/template", {}], [`/api/agent/file?path=${encodeURIComponent(join(dirs.root, "notes.txt"))}`, undefined]] as const) {
        expect((await call(studio.url, path, { body })).status, path).toBe(401);
        expect((await call(studio.url, path, { body, headers: { authorization: `Bearer ${token}x` } })).status, path).toBe(401);
        expect((await call(studio.url, path, { body, headers: { authorization: `Bearer ${token}` } })).status, path).toBeLessThan(300);
      }
      expect(existsSync(join(dirs.home, "actions", "t"))).toBe(true);
    } finally {
      expect(await studio.stop()).toBe(0);
      await model.close();
    }
  }, 30_000);
});
