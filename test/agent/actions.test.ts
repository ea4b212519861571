/**
 * Actions as real directories run as real subprocesses: seed 002's meta.json + perform.js (ESM
 * and CommonJS) and an Agent Skills folder; arguments refused before anything starts; a timeout
 * that gets SIGTERM, is ignored, and ends with SIGKILL on the group; the agent handle; the
 * network off unless tagged.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { discoverActions } from "../../src/coding/agent/actions/discover.js";
import { newActionRunId, performAction, type ActionRunContext } from "../../src/coding/agent/actions/executor.js";
import { runActionProcess } from "../../adapters/agents/actions/run-action.js";
import { namespacesAvailable, setNamespacesAvailable } from "../../adapters/agents/actions/network.js";
import type { SpawnInfo } from "../../src/agents/contract.js";

const FIXTURE = join(import.meta.dirname, "fixtures/home");
const home = mkdtempSync(join(tmpdir(), "pulse-agent-actions-"));
cpSync(FIXTURE, home, { recursive: true });
const { actions, problems } = discoverActions(join(home, "actions"));
const spec = (name: string) => actions.find((a) => a.name === name)!;

function ctx(extra: Partial<ActionRunContext> = {}): ActionRunContext & { spawned: SpawnInfo[] } {
  const workdir = mkdtempSync(join(tmpdir(), "pulse-agent-work-"));
  const spawned: SpawnInfo[] = [];
  return { runId: "run-1", actionRunId: newActionRunId(), workdir, files: [], runsDir: join(home, "runs", "run-1"), parentEnv: { PATH: process.env.PATH, HOME: process.env.HOME, OPENAI_API_KEY: "sk-secret" }, onSpawn: (i) => spawned.push(i), spawned, ...extra };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

afterAll(() => setNamespacesAvailable(undefined));

describe("discovery", () => {
  it("finds seed actions and Agent Skills folders with their arguments, timeouts and tags", () => {
    expect(problems).toEqual([]);
    expect(actions.map((a) => a.name).sort()).toEqual(["add", "fetch-url", "fetch-url-net", "greet", "slow", "stubborn", "tcp-probe", "wipe", "word-count"]);
    expect(spec("word-count")).toMatchObject({ layout: "skill", entry: "scripts/count.mjs", timeout_sec: 10, arguments: [{ name: "file", type: "string", required: true }] });
    expect(spec("wipe").tags).toEqual(["write", "destructive"]);
    expect(spec("stubborn").timeout_sec).toBe(1);
  });

  it("reports a malformed directory and keeps the others", () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-agent-bad-"));
    cpSync(join(FIXTURE, "actions/add"), join(dir, "add"), { recursive: true });
    cpSync(join(FIXTURE, "actions/add"), join(dir, "broken"), { recursive: true });
    writeFileSync(join(dir, "broken/meta.json"), '{"name": "broken", "arguments": [{"type": "string"}]}');
    cpSync(join(FIXTURE, "actions/word-count"), join(dir, "skill-no-fm"), { recursive: true });
    writeFileSync(join(dir, "skill-no-fm/SKILL.md"), "# no front matter\n");
    const d = discoverActions(dir);
    expect(d.actions.map((a) => a.name)).toEqual(["add"]);
    expect(d.problems).toHaveLength(2);
    expect(d.problems[0]).toMatch(/broken\/meta\.json: arguments\[0\]\.name must be a string: skipped/);
    expect(d.problems[1]).toMatch(/SKILL\.md: no front matter/);
  });
});

describe("running an action", () => {
  it("runs perform.js (ESM) with a real agent handle: its log, the run's files, stdout captured, the allowlisted environment", async () => {
    const c = ctx();
    const notes = join(c.workdir, "notes.txt");
    writeFileSync(notes, "bring cake\n");
    c.files = [notes];
    const r = await performAction(runActionProcess, spec("greet"), { who: "Ada" }, c);
    expect(r).toMatchObject({ status: "ok", result: "Hello, Ada!", data: { notes: ["bring cake"] }, ended: "exited", actionRunId: c.actionRunId });
    // The key pulse was given never reaches the action: the environment is the kit's allowlist.
    expect(r.logs).toEqual(['wrote the greeting {"who":"Ada","apiKey":null}']);
    expect(r.stdout).toContain("greet: done");
    expect(readFileSync(join(c.workdir, "greeting.txt"), "utf8")).toBe("Hello, Ada!\n");
    expect(c.spawned).toHaveLength(1);
    expect(c.spawned[0]!.pgid).toBe(c.spawned[0]!.pid);
  });

  it("refuses, through the handle, a file that is not the run's", async () => {
    const c = ctx();
    const secret = join(c.workdir, "secret.txt");
    writeFileSync(secret, "x");
    const dir = join(home, "actions-nosy");
    cpSync(join(FIXTURE, "actions/greet"), join(dir, "nosy"), { recursive: true });
    const source = readFileSync(join(dir, "nosy/perform.js"), "utf8");
    writeFileSync(join(dir, "nosy/perform.js"), source.replace("this.agent.files.map((f) => this.agent.readFile(f).trim())", `[this.agent.readFile(${JSON.stringify(secret)})]`));
    const nosy = { ...spec("greet"), dir: join(dir, "nosy") };
    const denied = await performAction(runActionProcess, nosy, { who: "Di" }, c);
    expect(denied).toMatchObject({ status: "error", ended: "exited" });
    expect(denied.error).toMatch(/agent\.readFile: .*secret\.txt is not one of this run's files/);
    // The near miss: the same file named among the run's files is read.
    expect(await performAction(runActionProcess, nosy, { who: "Di" }, { ...ctx(), files: [secret] })).toMatchObject({ status: "ok", data: { notes: ["x"] } });
  });

  it("runs CommonJS perform.js", async () => {
    const r = await performAction(runActionProcess, spec("add"), { a: 2, b: 3.5 }, ctx());
    expect(r).toMatchObject({ status: "ok", result: "5.5", data: { sum: 5.5 } });
  });

  it("refuses bad arguments before anything starts, and takes the near miss", async () => {
    const c = ctx();
    const bad = await performAction(runActionProcess, spec("add"), { a: "2", c: 1 }, c);
    expect(bad).toMatchObject({ status: "error", ended: "invalid" });
    expect(bad.error).toBe("invalid arguments: c: add takes no such argument (it takes a, b); a: must be number, got string; b: required");
    expect(c.spawned).toEqual([]);
    expect(existsSync(join(c.runsDir, c.actionRunId))).toBe(false);
    expect((await performAction(runActionProcess, spec("add"), { a: 2, b: 1 }, ctx())).status).toBe("ok");
    expect((await performAction(runActionProcess, spec("add"), "not an object", ctx())).error).toMatch(/must be an object, got string/);
  });

  it("stops a run past timeout_sec: SIGTERM first (ignored), then SIGKILL to its group", async () => {
    const c = ctx({ killGraceSec: 1 });
    const started = Date.now();
    const r = await performAction(runActionProcess, spec("stubborn"), {}, c);
    expect(r).toMatchObject({ status: "error", ended: "timeout" });
    expect(r.error).toMatch(/timed out after 1 s: SIGTERM, then SIGKILL/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1900);
    const log = readFileSync(join(c.workdir, "stubborn.log"), "utf8");
    expect(log).toMatch(/^started \d+\n(SIGTERM ignored by \d+\n)+$/);
    const pid = c.spawned[0]!.pid;
    await new Promise((r) => setTimeout(r, 300));
    expect(alive(pid)).toBe(false);
    expect(r.exit?.signal).toBe("SIGKILL");
  });

  it("runs an Agent Skills folder's script with its arguments", async () => {
    const c = ctx();
    writeFileSync(join(c.workdir, "poem.txt"), "one two three four\n");
    const r = await performAction(runActionProcess, spec("word-count"), { file: "poem.txt" }, c);
    expect(r).toMatchObject({ status: "ok", result: "4 words in poem.txt", ended: "exited" });
    expect((await performAction(runActionProcess, spec("word-count"), {}, ctx())).error).toBe("invalid arguments: file: required");
  });
});

describe("network", () => {
  // A client that connects and exits at once resets the connection: that is no failure here.
  const server = createServer((s) => {
    s.on("error", () => undefined);
    s.end("hi");
  });
  let port = 0;
  it("is off for Node actions not tagged network (the guard), and on for those tagged", async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
    setNamespacesAvailable(false);
    const off = await performAction(runActionProcess, spec("fetch-url"), { url: `http://127.0.0.1:${port}/` }, ctx());
    expect(off).toMatchObject({ status: "error", network: "guard" });
    expect(off.error).toMatch(/network is off for this action/);
    const on = await performAction(runActionProcess, spec("fetch-url-net"), { url: `http://127.0.0.1:${port}/` }, ctx());
    expect(on).toMatchObject({ network: "allowed" });
    // The server speaks no HTTP: the point is that the connection was made.
    expect(on.error ?? "").not.toMatch(/network is off/);
    setNamespacesAvailable(undefined);
  });

  it("is off for any process, bash included, in a network namespace where the kernel allows one", async () => {
    if (!namespacesAvailable()) return; // recorded in docs/agent.md: without user namespaces only Node code is guarded
    const r = await performAction(runActionProcess, spec("tcp-probe"), { port }, ctx());
    expect(r).toMatchObject({ status: "error", network: "namespace" });
    setNamespacesAvailable(false);
    const open = await performAction(runActionProcess, spec("tcp-probe"), { port }, ctx());
    expect(open).toMatchObject({ status: "ok", network: "unenforced", result: `connected to ${port}` });
    setNamespacesAvailable(undefined);
    server.close();
  });
});
