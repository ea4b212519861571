/**
 * Steering a session another process runs: `pulse serve` runs it, REST `POST /api/pulse/:id/steer`
 * steers it mid-turn, the session holds, replans, acknowledges and completes; its event stream
 * shows the steer, the hold and the ack with the plan hash. The refusals of REST, MCP
 * `pulse_steer` and `pulse session steer`, with the near miss each accepts.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, describe, expect, it } from "vitest";
import { runBin } from "../cli/run-bin.js";
import { gitRepo, removeDir, worktreesRoot } from "../session/helpers.js";
import { startServe, type Served } from "../session/serve-process.js";
import { until } from "../session/steering.js";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const PLAN = "# Plan\n\n1. Keep the public API stable.\n";
let served: Served | undefined;
let repo: string | undefined;
afterAll(async () => {
  await served?.stop();
  if (repo) removeDir(repo);
});

describe("steering a session served by pulse serve", () => {
  it("REST steer mid-turn: the session holds, replans, acknowledges with the plan hash and completes; refusals name why", async () => {
    repo = gitRepo();
    const scripts = join(repo, ".git", "scripts");
    mkdirSync(scripts);
    const script = join(scripts, "steps.json");
    writeFileSync(
      script,
      JSON.stringify({
        steps: [
          { match: { iteration: 1 }, delayMs: 2500, files: { "a.js": "1\n" }, commit: "feat: a", text: "<signal>CONTINUE</signal>" },
          { match: { iteration: 2 }, files: { ".pulse/plan.md": PLAN }, toolCalls: [{ name: "pulse_ack_replan", arguments: { event_id: "{{prompt:evt_\\d{8}T\\d{12}Z_[0-9a-f]{8}}}" } }], text: "Replanned. <signal>CONTINUE</signal>" },
          { match: { iteration: 3 }, text: "<signal>COMPLETE</signal>" },
        ],
      }),
    );
    const store = join(repo, ".pulse", "pulse.db");
    served = await startServe(repo, ["--listen", "0", "--store", store, "--allow-scripts", scripts]);
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${served!.url}${path}`, { method, headers: { "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const started = await call("POST", "/api/pulse/start", { projectPath: repo, goal: "Write a.js", maxIterations: 5, driver: "scripted", script });
    expect(started.status).toBe(201);
    const id: string = started.body.session.id;
    await until(async () => ((await call("GET", `/api/pulse/${id}`)).body.iterations?.[0]?.status === "running" ? true : undefined));

    expect(await call("POST", `/api/pulse/${id}/steer`, {})).toMatchObject({ status: 400, body: { error: { field: "text", message: expect.stringMatching(/^text: give the guidance/) } } });
    expect(await call("POST", `/api/pulse/${id}/steer`, { text: "x", by: "me" })).toMatchObject({ status: 400, body: { error: { message: expect.stringMatching(/^steer takes \{"text": "…"\}/) } } });
    expect((await call("POST", "/api/pulse/00000000-0000-0000-0000-000000000000/steer", { text: "x" })).status).toBe(404);
    expect((await call("GET", `/api/pulse/${id}/steer`)).status).toBe(405);
    const steered = await call("POST", `/api/pulse/${id}/steer`, { text: "Keep the public API stable." });
    expect(steered.status).toBe(200);
    expect(steered.body.event).toMatchObject({ path: ".pulse/guidance.md", kind: "modified" });
    const evt: string = steered.body.event.id;

    const done = await until(async () => {
      const r = await call("GET", `/api/pulse/${id}`);
      return ["complete", "failed", "blocked"].includes(r.body.session.status) ? r.body : undefined;
    }, 60_000);
    expect(done.session).toMatchObject({ status: "complete", current_iteration: 3 });
    expect(done.iterations[1].task_content).toMatch(new RegExp(`^STOP: the guidance for this work changed \\(pending replan event ${evt}\\)`));
    expect(done.iterations[1].task_content).toContain("Keep the public API stable.");
    const events = (await call("GET", `/api/pulse/${id}/events?after=0`)).body.events as { type: string; data: any }[];
    const guidance = events.filter((e) => e.type.startsWith("guidance."));
    expect(guidance.map((e) => e.type)).toEqual(["guidance.steered", "guidance.held", "guidance.acknowledged"]);
    expect(guidance[0]!.data).toMatchObject({ event_id: evt, by: "api", text: "Keep the public API stable." });
    expect(guidance[2]!.data.ack).toMatchObject({ accepted: true, acknowledged_event_id: evt, plan_sha256: sha(PLAN), via: "tool" });

    // The live view of the records (what pulse session logs --events prints) shows each of them.
    const view = runBin("pulse", ["session", "logs", "--store", store, id, "--events"], { cwd: repo, env: { PULSE_WORKTREES: worktreesRoot() } });
    expect(view.stdout).toContain(`  ✎ steered by api (event ${evt}): "Keep the public API stable."\n`);
    expect(view.stdout).toContain(`  ⏸ guidance changed (.pulse/guidance.md): iteration 2 replans first (event ${evt})\n`);
    expect(view.stdout).toContain(`  ✓ replan acknowledged (event ${evt}, plan ${sha(PLAN).slice(0, 12)}, via tool)\n`);
    // The store's chained audit trail holds the hold and the ack, each in its phase.
    const audit = runBin("pulse", ["audit", "--store", `sqlite:${store}`, "--loop", "coding.pulse_session", "--json", "--limit", "1000"], { cwd: repo });
    const trail = audit.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { event_type: string; phase_id: string; data: any }).filter((e) => e.event_type.startsWith("guidance."));
    expect(trail.map((e) => [e.event_type, e.phase_id, e.data.event_id]), audit.stderr).toEqual([
      ["guidance.held", "build_context", evt],
      ["guidance.acknowledged", "record_branch", evt],
    ]);
    expect(trail[1]!.data).toMatchObject({ accepted: true, plan_sha256: sha(PLAN) });
    // Finished: REST 409, MCP a tool error, the CLI exit 1, each saying so.
    expect(await call("POST", `/api/pulse/${id}/steer`, { text: "more" })).toMatchObject({ status: 409, body: { error: { code: "FINISHED" } } });
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`)));
    try {
      const r = await client.callTool({ name: "pulse_steer", arguments: { sessionId: id, text: "more" } });
      expect(r.isError).toBe(true);
      expect((r.content as { text: string }[])[0]!.text).toBe(`session ${id} is complete: there is nothing left to steer`);
    } finally {
      await client.close();
    }
    const cli = runBin("pulse", ["session", "steer", "--store", store, id.slice(0, 8), "more"], { cwd: repo, env: { PULSE_WORKTREES: worktreesRoot() } });
    expect([cli.code, cli.stderr]).toEqual([1, `pulse session: session ${id} is complete: there is nothing left to steer\n`]);
  }, 90_000);

  it("pulse session steer on a session that is not running: in place it waits in its checkout; blocked in its own worktree it is recorded and applied at resume", async () => {
    const dir = gitRepo();
    try {
      const store = join(dir, ".pulse", "pulse.db");
      const script = join(dir, ".git", "s.json");
      const ack = { name: "pulse_ack_replan", arguments: { event_id: "{{prompt:evt_\\d{8}T\\d{12}Z_[0-9a-f]{8}}}" } };
      writeFileSync(script, JSON.stringify({ steps: [{ match: { iteration: 1 }, text: "<signal>BLOCKED: need a key</signal>" }, { match: { iteration: 2 }, files: { ".pulse/plan.md": PLAN }, toolCalls: [ack], text: "Replanned with the key. <signal>COMPLETE</signal>" }] }));
      const env = { PULSE_WORKTREES: worktreesRoot() };
      // Blocked in its own worktree: the worktree is gone until it runs again.
      const start = runBin("pulse", ["session", "start", "--store", store, "--repo", dir, "--goal", "g", "--driver", "scripted", "--script", script], { cwd: dir, env });
      expect(start.code, start.stderr).toBe(4);
      // Blocked in place: its checkout is there, and the guidance waits in it for the next run.
      const inPlace = runBin("pulse", ["session", "start", "--store", store, "--repo", dir, "--in-place", "--goal", "g", "--driver", "scripted", "--script", script], { cwd: dir, env });
      expect(inPlace.code, inPlace.stderr).toBe(4);
      const [second, first] = JSON.parse(runBin("pulse", ["session", "list", "--store", store, "--json"], { cwd: dir, env }).stdout) as { id: string; status: string; worktree_path: string | null }[];
      expect([first!.status, second!.status, second!.worktree_path]).toEqual(["blocked", "blocked", null]);
      const deferred = runBin("pulse", ["session", "steer", "--store", store, first!.id, "The key is in .env.example"], { cwd: dir, env });
      expect([deferred.code, deferred.stderr]).toEqual([0, ""]);
      expect(deferred.stdout).toBe(`session ${first!.id}: steer recorded; it has no working directory now (blocked): the guidance is written to ${first!.worktree_path}/.pulse/guidance.md and replanned when it is resumed (pulse session resume ${first!.id.slice(0, 8)})\n`);
      // Resumed: the worktree is made again, the steer written into its guidance, and the first turn replans and acknowledges it.
      const resumed = runBin("pulse", ["session", "resume", "--store", store, first!.id.slice(0, 8)], { cwd: dir, env });
      expect(resumed.code, resumed.stderr).toBe(0);
      const status = JSON.parse(runBin("pulse", ["session", "status", "--store", store, first!.id, "--json"], { cwd: dir, env }).stdout);
      expect(status.session.status).toBe("complete");
      const replan = status.iterations.find((i: { iteration_number: number }) => i.iteration_number === 2).task_content as string;
      expect(replan).toMatch(/^STOP: the guidance for this work changed \(pending replan event evt_/);
      expect(replan).toContain("The key is in .env.example");
      const log = runBin("pulse", ["session", "logs", "--store", store, first!.id, "--events"], { cwd: dir, env }).stdout;
      expect(log).toContain(`  ✎ steered by cli (deferred: applied when it runs again): "The key is in .env.example"\n`);
      expect(log).toMatch(/ {2}✎ deferred steer applied to the guidance \(event evt_\S+\)\n[\s\S]* {2}✓ replan acknowledged/);
      // Applied once: another resume would not write it again (the applied record names the deferred steer).
      expect(log.match(/deferred steer applied/g)).toHaveLength(1);
      const r = runBin("pulse", ["session", "steer", "--store", store, second!.id.slice(0, 8), "The key is in .env.example"], { cwd: dir, env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`session ${second!.id}: steered (event ${/evt_\S+/.exec(r.stdout)![0]} in ${dir}/.pulse/guidance.md); it replans when it runs again (now blocked)\n`);
      expect(readFileSync(join(dir, ".pulse/guidance.md"), "utf8")).toContain("The key is in .env.example");
      const missing = runBin("pulse", ["session", "steer", "--store", store, second!.id], { cwd: dir, env });
      expect([missing.code, missing.stderr]).toEqual([2, "pulse: error: missing required argument 'text'\n"]);
    } finally {
      removeDir(dir);
    }
  }, 60_000);
});
