/**
 * `pulse runs`, `GET /api/runs` and `pulse store export` over a real SQLite store in which a real
 * workflow (`pulse workflow start`, scripted agent) and a real agent run (`pulse agent run
 * --store`) were recorded; then their records are set `running` with a runner that no longer
 * exists, as a `kill -9` leaves them, and every reader shows them `interrupted`, while a run whose
 * runner lives stays `running` (the near miss).
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../adapters/sqlite/driver.js";
import { SqliteStore } from "../../adapters/sqlite/store.js";
import { ROOT, runBin } from "../cli/run-bin.js";
import { startServe, type Served } from "../session/serve-process.js";
import { migratedSchema } from "../session/postgres-helpers.js";
import { pgSchema } from "../adapters/postgres/helpers.js";
import { describeWith, postgresService } from "../helpers/services.js";
import { FIXED_ADD, PREFLIGHT, start as startWorkflow, turn, worlds, writeFile, writeScript, type World } from "../workflow/helpers.js";

const world = worlds();
const deadPid = Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" }).stdout);

describe("pulse runs over a store holding a workflow and an agent run", () => {
  let w: World;
  let workflowId: string;
  let agentRunId: string;
  const runs = (...args: string[]) => runBin("pulse", ["runs", "--store", w.store, ...args], { cwd: w.dir, env: w.env });

  beforeAll(() => {
    w = world();
    const flow = startWorkflow(w, writeFile(w, "plan.md", "- Fix add\n"), writeScript(w, [PREFLIGHT(), turn(1, { "src/math.js": FIXED_ADD }, "fix(math): add adds")]), ["--json"]);
    expect(flow.code, flow.stderr).toBe(0);
    workflowId = JSON.parse(flow.stdout).workflow.id;
    const home = join(w.dir, "agent-home");
    cpSync(join(ROOT, "examples/agent/home"), home, { recursive: true, filter: (src) => !/\/examples\/agent\/home\/(logs|runs|cache|agent\.db)/.test(src) });
    const agent = runBin("pulse", ["agent", "run", "--request", "Welcome Ada", "--auto", "--driver", "scripted", "--script", join(ROOT, "examples/agent/welcome.json"), "--home", home, "--store", w.store, "--json"], { cwd: w.dir, env: w.env });
    expect(agent.code, agent.stderr).toBe(0);
    agentRunId = JSON.parse(agent.stdout).runId;
  }, 120_000);

  it("lists both, newest first, as text and JSON, with iteration x/N, commits and the agent's steps recorded", () => {
    const text = runs();
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^agent\\s+${agentRunId.slice(0, 8)}\\s+succeeded\\s+\\d+/\\d+\\s+0 commits\\s+\\$0\\.0000\\s+Welcome Ada$`));
    expect(lines[1]).toMatch(new RegExp(`^workflow\\s+${workflowId.slice(0, 8)}\\s+completed\\s+1/1\\s+1 commit\\s+`));
    const all = JSON.parse(runs("--json").stdout);
    expect(all.map((r: { kind: string }) => r.kind)).toEqual(["agent", "workflow"]);
    expect(all[0]).toMatchObject({ id: agentRunId, loop_id: "coding.plan_decide_act", status: "succeeded", stop_reason: "goal_achieved", runner_pid: null });
    expect(all[0].iteration).toBeGreaterThanOrEqual(1);
    expect(all[1]).toMatchObject({ id: workflowId, loop_id: "coding.pulsing_workflow", files_changed: ["src/math.js"] });
    expect(all[1].commits).toHaveLength(1);
    expect(JSON.parse(runs("--kind", "workflow", "--json").stdout).map((r: { id: string }) => r.id)).toEqual([workflowId]);
  });

  it("refuses an unknown --kind in one line with exit 2; a store that does not exist lists nothing and is not created", () => {
    const bad = runs("--kind", "sessions");
    expect(bad).toMatchObject({ code: 2, stdout: "" });
    expect(bad.stderr).toBe('pulse: --kind: must be one of session, workflow, agent, got "sessions"\n');
    const none = join(mkdtempSync(join(tmpdir(), "pulse-runs-none-")), "pulse.db");
    const empty = runBin("pulse", ["runs", "--store", none], { cwd: w.dir, env: w.env });
    expect(empty).toMatchObject({ code: 0, stdout: "no runs in this store\n" });
    expect(existsSync(none)).toBe(false);
  });

  it("exports the agent's run and step rows with the store, never the views", async () => {
    // The store's own tables too, as a file that hosted `pulse run` or a session's audit trail has.
    await new SqliteStore(w.store).close();
    const out = runBin("pulse", ["store", "export", "--jsonl", "--store", `sqlite:${w.store}`], { cwd: w.dir, env: w.env });
    expect(out.code, out.stderr).toBe(0);
    const tables = new Set(out.stdout.trim().split("\n").map((l) => JSON.parse(l).table as string));
    for (const t of ["pulse_agent_runs", "pulse_agent_steps", "pulse_workflows", "pulse_workflow_pulses"]) expect(tables).toContain(t);
    expect(tables).not.toContain("pulse_runs");
    expect(out.stdout).toContain(agentRunId);
  });

  describe("after their runners died mid-run", () => {
    let served: Served;
    beforeAll(async () => {
      const db = openDatabase(w.store);
      db.prepare("UPDATE pulse_workflows SET status = 'running', runner_pid = ? WHERE id = ?").run(deadPid, workflowId);
      db.prepare("UPDATE pulse_agent_runs SET status = 'running', runner_pid = ?, finished_at = NULL WHERE id = ?").run(deadPid, agentRunId);
      db.close();
      served = await startServe(w.dir, ["--store", w.store, "--listen", "0"], w.env);
    }, 60_000);
    afterAll(async () => served?.stop());

    it("pulse runs shows both interrupted, never running", () => {
      const all = JSON.parse(runs("--json").stdout);
      expect(all.map((r: { status: string }) => r.status)).toEqual(["interrupted", "interrupted"]);
      expect(all[0].status_reason).toContain(`process ${deadPid}`);
      expect(runs().stdout).not.toMatch(/running/);
    });

    it("GET /api/runs and /api/runs/:kind/:id show them interrupted, with the agent's steps and the workflow's pulses; refusals are JSON", async () => {
      const list = ((await (await fetch(`${served.url}/api/runs`)).json()) as any);
      expect(list.runs.map((r: { kind: string; status: string }) => `${r.kind} ${r.status}`)).toEqual(["agent interrupted", "workflow interrupted"]);
      const agent = ((await (await fetch(`${served.url}/api/runs/agent/${agentRunId.slice(0, 8)}`)).json()) as any);
      expect(agent.run).toMatchObject({ id: agentRunId, status: "interrupted" });
      expect(agent.steps[0]).toMatchObject({ kind: "agent", number: 1, payload: { action: "greet" } });
      const flow = ((await (await fetch(`${served.url}/api/runs/workflow/${workflowId}`)).json()) as any);
      expect(flow.steps.map((p: { number: number; status: string }) => [p.number, p.status])).toEqual([[1, "succeeded"]]);
      expect(flow.steps[0].gate.passed).toBe(true);
      // The workflow's own endpoint says the same.
      expect((((await (await fetch(`${served.url}/api/workflows/${workflowId}`)).json()) as any)).workflow.status).toBe("interrupted");
      const bad = await fetch(`${served.url}/api/runs?kind=flows`);
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as any).error.message).toContain("kind: must be one of session, workflow, agent");
      expect((await fetch(`${served.url}/api/runs/agent/ffffffff`)).status).toBe(404);
      expect((await fetch(`${served.url}/api/runs`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } })).status).toBe(405);
      // The listener guard stands before the runs too: a foreign page is refused, the studio's own origin is not.
      expect((await fetch(`${served.url}/api/runs`, { headers: { origin: "https://evil.example" } })).status).toBe(403);
      expect((await fetch(`${served.url}/api/runs`, { headers: { origin: served.url } })).status).toBe(200);
    });

    it("the MCP tools runs_list and run_status say interrupted too", async () => {
      const client = new Client({ name: "test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`)));
      try {
        const list = await client.callTool({ name: "runs_list", arguments: { kind: "agent" } });
        expect(JSON.parse((list.content as { text: string }[])[0]!.text).map((r: { id: string; status: string }) => [r.id, r.status])).toEqual([[agentRunId, "interrupted"]]);
        const one = await client.callTool({ name: "run_status", arguments: { kind: "workflow", id: workflowId.slice(0, 6) } });
        expect(JSON.parse((one.content as { text: string }[])[0]!.text).run.status).toBe("interrupted");
        const none = await client.callTool({ name: "run_status", arguments: { kind: "agent", id: workflowId } });
        expect(none.isError).toBe(true);
      } finally {
        await client.close();
      }
    });

    it("a run whose runner lives stays running (the near miss)", () => {
      const db = openDatabase(w.store);
      db.prepare("UPDATE pulse_agent_runs SET runner_pid = ? WHERE id = ?").run(process.pid, agentRunId);
      db.close();
      const all = JSON.parse(runs("--json").stdout);
      expect(all.map((r: { status: string }) => r.status)).toEqual(["running", "interrupted"]);
    });
  });
});

describeWith(await postgresService(), "an agent run recorded in the PostgreSQL store", (url) => {
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const d of drops) await d();
  });

  it("pulse agent run --store postgres://… records the run and its steps there (feedback in the home); pulse runs lists it", () => {
    const s = migratedSchema(url);
    drops.push(s.drop);
    const dir = mkdtempSync(join(tmpdir(), "pulse-runs-pg-"));
    const home = join(dir, "home");
    cpSync(join(ROOT, "examples/agent/home"), home, { recursive: true, filter: (src) => !/\/examples\/agent\/home\/(logs|runs|cache|agent\.db)/.test(src) });
    const agent = runBin("pulse", ["agent", "run", "--request", "Welcome Ada", "--auto", "--driver", "scripted", "--script", join(ROOT, "examples/agent/welcome.json"), "--home", home, "--store", s.appUrl, "--json"], { cwd: dir, env: { HOME: dir } });
    expect(agent.code, agent.stderr).toBe(0);
    const id = JSON.parse(agent.stdout).runId;
    const listed = runBin("pulse", ["runs", "--store", s.appUrl, "--json"], { cwd: dir, env: { HOME: dir } });
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject([{ kind: "agent", id, status: "succeeded", stop_reason: "goal_achieved", payload: { mode: "auto" } }]);
    // What the agent learnt stayed in its home.
    expect(existsSync(join(home, "agent.db"))).toBe(true);
    // A store migrated without the run tables is refused in one line naming the fix.
    const bare = pgSchema(url);
    drops.push(bare.drop);
    const refused = runBin("pulse", ["runs", "--store", bare.url], { cwd: dir, env: { HOME: dir } });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^pulse: --store: .*pulse store migrate/);
  }, 60_000);
});
