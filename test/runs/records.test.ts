/**
 * The common run view (src/coding/run-records.ts), run against every implementation: memory (the
 * shared mapping over the memory records), SQLite (a real file; the `pulse_runs` and
 * `pulse_run_steps` views) and PostgreSQL (a schema of its own migrated by the real `pulse store
 * migrate`, as the runtime's role). Each loop writes through its own records contract; the view
 * must answer the same everywhere: common columns, payloads, order, kind filter, prefixes, the
 * displayed status of a run whose runner is gone. Where no PostgreSQL answers its fixture is left
 * out; under CI=true it stays in and fails.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryRunRecords } from "../../adapters/memory/run-records.js";
import { SqliteAgentRuns } from "../../adapters/sqlite/agent-runs.js";
import { SqliteRunRecords } from "../../adapters/sqlite/run-records.js";
import { SqliteSessionRecords } from "../../adapters/sqlite/session-records.js";
import { SqliteWorkflowRecords } from "../../adapters/sqlite/workflow-records.js";
import { openDatabase } from "../../adapters/sqlite/driver.js";
import type { AgentRunRecords } from "../../src/coding/agent/run-records.js";
import type { RunRecords } from "../../src/coding/run-records.js";
import type { GateVerdict } from "../../src/coding/gate.js";
import type { SessionRecords } from "../../src/coding/session/records.js";
import type { WorkflowRecords } from "../../src/coding/workflow/records.js";
import { postgresService } from "../helpers/services.js";
import { migratedSchema } from "../session/postgres-helpers.js";

interface Loops {
  sessions: SessionRecords;
  workflows: WorkflowRecords;
  agents: AgentRunRecords;
  runs: RunRecords;
  /** The seed's SQL, as any SQL tool would run it. */
  sql?: (text: string) => Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

const dirs: string[] = [];
const drops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  for (const drop of drops.splice(0)) await drop();
});

const pg = await postgresService();
const pgUrl = pg.url ?? (process.env.CI === "true" ? process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/test" : undefined);

/** A pid no process has: a child that ran and was reaped. */
const deadPid = (() => {
  const r = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(r.stdout);
})();

const fixtures: [string, () => Promise<Loops>][] = [
  [
    "memory",
    async () => {
      const m = MemoryRunRecords.create();
      return { ...m.records, runs: m, close: async () => undefined };
    },
  ],
  [
    "sqlite",
    async () => {
      const d = mkdtempSync(join(tmpdir(), "pulse-runs-"));
      dirs.push(d);
      const file = join(d, "pulse.db");
      const sessions = SqliteSessionRecords.open(file);
      const workflows = SqliteWorkflowRecords.open(file);
      const agents = SqliteAgentRuns.open(file);
      const runs = SqliteRunRecords.open(file);
      const db = openDatabase(file);
      return {
        sessions,
        workflows,
        agents,
        runs,
        sql: async (text) => db.prepare(text).all() as Record<string, unknown>[],
        close: async () => {
          db.close();
          for (const c of [sessions, workflows, agents, runs]) await c.close();
        },
      };
    },
  ],
  ...(pgUrl === undefined
    ? []
    : [
        [
          "postgres",
          async () => {
            const { PostgresSessionRecords } = await import("../../adapters/postgres/session-records.js");
            const { PostgresWorkflowRecords } = await import("../../adapters/postgres/workflow-records.js");
            const { PostgresRuns } = await import("../../adapters/postgres/run-records.js");
            const s = migratedSchema(pgUrl);
            drops.push(s.drop);
            const sessions = await PostgresSessionRecords.open(s.appUrl);
            const workflows = await PostgresWorkflowRecords.open(s.appUrl);
            const pgRuns = await PostgresRuns.open(s.appUrl);
            return {
              sessions,
              workflows,
              agents: pgRuns.agentRuns(),
              runs: pgRuns.runRecords(),
              sql: async (text) => (await s.admin(`SET search_path TO "${s.schema}"; ${text}`) as unknown as { rows: Record<string, unknown>[] }[])[1]!.rows,
              close: async () => {
                await sessions.close();
                await workflows.close();
                await pgRuns.close();
              },
            };
          },
        ] as [string, () => Promise<Loops>],
      ]),
];

const S1 = "5e551011-0000-4000-8000-000000000001";
const S2 = "5e551011-0000-4000-8000-000000000002";
const W1 = "3f0a1b2c-0000-4000-8000-000000000001";
const A1 = "a9e47000-0000-4000-8000-000000000001";
const A2 = "a9e47000-0000-4000-8000-000000000002";
const gate: GateVerdict = { passed: true, checks: [{ command: "npm test", exit: 0, newFailures: [], durationMs: 12 }] };

/** The same history through each loop's own contract, with a pause so created_at orders them. */
async function history(l: Loops): Promise<void> {
  const tick = () => new Promise((r) => setTimeout(r, 5));
  await l.sessions.create({ id: S1, project_name: "app", goal: "Add login", max_iterations: 5, repo_path: "/r/app", driver: { name: "scripted", script: "/s.json" }, context_strategy: "none", created_by: "cli", branch_name: "pulse/session/5e551011" });
  await l.sessions.addIteration({ id: "i1", session_id: S1, iteration_number: 1, task_content: "Add login", status: "complete", signal: "CONTINUE", output_summary: "form", commit_hash: "c0ffee1", files_changed: ["src/login.ts", "src/app.ts"], tokens_used: 100, cost_usd: 0.01, gate, finished_at: "2026-11-27T00:00:01.000Z" });
  await l.sessions.addIteration({ id: "i2", session_id: S1, iteration_number: 2, task_content: "Continue.", status: "complete", signal: "COMPLETE", output_summary: "done", files_changed: ["src/app.ts", "README.md"], tokens_used: 50, cost_usd: 0.005 });
  await l.sessions.update(S1, { status: "complete", current_iteration: 2, last_signal: "COMPLETE", total_commits: 1, total_tokens_used: 150, total_cost_usd: 0.015, stop_reason: "completed" });
  await tick();
  await l.workflows.create({ id: W1, title: "Ship auth", plan_path: "/r/plan.md", repo_path: "/r/app", base_ref: "main", base_sha: "b".repeat(40), base_note: null, branch_name: "pulse/workflow/3f0a", worktree_path: "/w/3f0a", driver: { name: "scripted" }, verify: { checks: ["npm test"] }, merge: "ff" }, [
    { id: "p1", number: 1, title: "Schema", description: "Add the users table" },
    { id: "p2", number: 2, title: "Routes", description: "Add the routes" },
    { id: "p3", number: 3, title: "Docs", description: "Document it" },
  ]);
  await l.workflows.updatePulse("p1", { status: "succeeded", checkpoint_commit_sha: "aaa111", files_changed: ["db/users.sql"], gate, tokens_used: 70, cost_usd: 0.02, turns: 2, rejections: 1, is_recovery_checkpoint: false, started_at: "2026-11-27T00:00:02.000Z", ended_at: "2026-11-27T00:00:03.000Z", summary: "users table" });
  await l.workflows.updatePulse("p2", { status: "running", turns: 1, is_recovery_checkpoint: true, started_at: "2026-11-27T00:00:04.000Z" });
  await l.workflows.update(W1, { status: "running", runner_pid: process.pid, turns: 3, total_tokens_used: 70, total_cost_usd: 0.02 });
  await tick();
  await l.agents.create({ id: A1, request: "Welcome Ada", mode: "auto", workdir: "/w", max_iterations: 8, max_actions: 10, runner_pid: process.pid, report_path: "/h/logs/a.jsonl" });
  await l.agents.addStep({ run_id: A1, number: 1, plan_step: "s1 greet Ada", decision: { type: "action", reason: "greet" }, action: "greet", action_run_id: "ar-1", args: { who: "Ada" }, action_status: "ok", result: "Hello, Ada", feedback: { score: 5, signal: "success", submittedBy: "user" }, advisory_status: "terminate", advisory_reason: "goal_achieved", progress: { done: 1, total: 1 }, tokens_used: 40, started_at: "2026-11-27T00:00:05.000Z", finished_at: "2026-11-27T00:00:06.000Z" });
  await l.agents.update(A1, { status: "succeeded", reason: "goal_achieved", iteration: 1, actions_used: 1, tokens_used: 40, last_signal: "terminate", finished_at: "2026-11-27T00:00:06.000Z" });
  await tick();
  // Two runs stored `running` whose runners are gone: shown interrupted.
  await l.sessions.create({ id: S2, project_name: "app", goal: "Fix bug", max_iterations: 3, repo_path: "/r/app", driver: { name: "scripted" }, context_strategy: "none", created_by: "api" });
  await l.sessions.update(S2, { status: "running", runner_pid: deadPid });
  await tick();
  await l.agents.create({ id: A2, request: "List files", mode: "interactive", workdir: "/w", max_iterations: 4, max_actions: 2, runner_pid: deadPid });
}

describe.each(fixtures)("RunRecords (%s)", (_name, open) => {
  it("lists every loop's runs newest first with the common columns, the loop's own payload and the displayed status", async () => {
    const l = await open();
    try {
      await history(l);
      const all = await l.runs.list();
      expect(all.map((r) => `${r.kind}:${r.id.slice(-1)}:${r.status}`)).toEqual(["agent:2:interrupted", "session:2:interrupted", "agent:1:succeeded", "workflow:1:running", "session:1:complete"]);
      const [a2, s2, a1, w1, s1] = all;
      expect(s1).toMatchObject({ kind: "session", loop_id: "coding.pulse_session", goal: "Add login", iteration: 2, max_iterations: 5, signal: "COMPLETE", commits: ["c0ffee1"], files_changed: ["README.md", "src/app.ts", "src/login.ts"], tokens: 150, cost_usd: 0.015, stop_reason: "completed", runner_pid: null, finished_at: s1!.updated_at });
      expect(s1!.payload).toEqual({ project_name: "app", repo_path: "/r/app", branch_name: "pulse/session/5e551011", worktree_path: null, base_ref: null, base_sha: null, driver: { name: "scripted", script: "/s.json" }, context_strategy: "none", control: null, created_by: "cli", max_cost_usd: null, max_tokens: null, max_wall_ms: null });
      expect(w1).toMatchObject({ kind: "workflow", loop_id: "coding.pulsing_workflow", goal: "Ship auth", iteration: 1, max_iterations: 3, signal: null, commits: ["aaa111"], files_changed: ["db/users.sql"], tokens: 70, cost_usd: 0.02, runner_pid: process.pid, finished_at: null });
      expect(w1!.payload).toEqual({ plan_path: "/r/plan.md", repo_path: "/r/app", base_ref: "main", base_sha: "b".repeat(40), base_note: null, branch_name: "pulse/workflow/3f0a", worktree_path: "/w/3f0a", merge: "ff", driver: { name: "scripted" }, control: null, turns: 3, artifacts: [] });
      expect(a1).toMatchObject({ kind: "agent", loop_id: "coding.plan_decide_act", goal: "Welcome Ada", iteration: 1, max_iterations: 8, signal: "terminate", commits: [], files_changed: [], tokens: 40, cost_usd: 0, stop_reason: "goal_achieved", finished_at: "2026-11-27T00:00:06.000Z" });
      expect(a1!.payload).toEqual({ mode: "auto", workdir: "/w", report_path: "/h/logs/a.jsonl", actions_used: 1, max_actions: 10 });
      expect(s2!.status_reason).toMatch(new RegExp(`process ${deadPid}`));
      expect(a2).toMatchObject({ status: "interrupted", runner_pid: deadPid, iteration: 0, max_iterations: 4 });
    } finally {
      await l.close();
    }
  });

  it("filters by kind, finds a run by a unique prefix (not by another kind's id), and gives each kind's iterations as steps", async () => {
    const l = await open();
    try {
      await history(l);
      expect((await l.runs.list({ kind: "workflow" })).map((r) => r.id)).toEqual([W1]);
      expect((await l.runs.list({ kind: "agent" })).map((r) => r.id)).toEqual([A2, A1]);
      expect((await l.runs.get("session", S1.slice(0, 8)))).toBeUndefined(); // two sessions share it
      expect((await l.runs.get("session", S1))?.id).toBe(S1);
      expect((await l.runs.get("workflow", "3f0a"))?.id).toBe(W1);
      expect(await l.runs.get("agent", W1)).toBeUndefined();
      expect(await l.runs.get("workflow", "3f0")).toBeUndefined(); // under 4 characters
      const sessionSteps = await l.runs.steps("session", S1);
      expect(sessionSteps.map((s) => [s.number, s.status, s.signal, s.commit, s.files_changed])).toEqual([
        [1, "complete", "CONTINUE", "c0ffee1", ["src/login.ts", "src/app.ts"]],
        [2, "complete", "COMPLETE", null, ["src/app.ts", "README.md"]],
      ]);
      expect(sessionSteps[0]).toMatchObject({ task: "Add login", summary: "form", gate, tokens: 100, cost_usd: 0.01, finished_at: "2026-11-27T00:00:01.000Z" });
      expect(sessionSteps[0]!.payload).toEqual({ signal_source: null, signal_reason: null, anchor_strategy: null, context_tokens: 0, receipt: null });
      const pulses = await l.runs.steps("workflow", W1);
      expect(pulses.map((p) => [p.number, p.status, p.task, p.commit])).toEqual([[1, "succeeded", "Schema", "aaa111"], [2, "running", "Routes", null], [3, "proposed", "Docs", null]]);
      expect(pulses[0]).toMatchObject({ gate, summary: "users table", tokens: 70, cost_usd: 0.02, started_at: "2026-11-27T00:00:02.000Z", finished_at: "2026-11-27T00:00:03.000Z", files_changed: ["db/users.sql"] });
      expect(pulses[0]!.payload).toEqual({ planned_pulse_id: null, description: "Add the users table", pulse_branch: null, turns: 2, rejections: 1, nudges: 0, extensions: 0, is_recovery_checkpoint: false, has_unresolved_issues: false, unresolved_issues: [], feedback: null });
      expect(pulses[1]!.payload.is_recovery_checkpoint).toBe(true);
      const steps = await l.runs.steps("agent", A1);
      expect(steps).toEqual([
        { kind: "agent", run_id: A1, number: 1, status: "ok", task: "s1 greet Ada", signal: "terminate", summary: "Hello, Ada", commit: null, files_changed: [], gate: null, tokens: 40, cost_usd: 0, error: null, started_at: "2026-11-27T00:00:05.000Z", finished_at: "2026-11-27T00:00:06.000Z", payload: { decision: { type: "action", reason: "greet" }, action: "greet", action_run_id: "ar-1", args: { who: "Ada" }, feedback: { score: 5, signal: "success", submittedBy: "user" }, advisory_reason: "goal_achieved", progress: { done: 1, total: 1 } } },
      ]);
      expect(await l.runs.steps("agent", W1)).toEqual([]);
    } finally {
      await l.close();
    }
  });

  it("refuses a second record of an agent step, and a step of no run", async () => {
    const l = await open();
    try {
      await l.agents.create({ id: A1, request: "r", mode: "auto", workdir: "/w", max_iterations: 2, max_actions: 2 });
      const step = { run_id: A1, number: 1, plan_step: null, decision: { type: "wait", reason: null }, action: null, action_run_id: null, args: null, action_status: null, result: null, feedback: null, advisory_status: "continue", advisory_reason: "waiting", progress: null, tokens_used: 0, started_at: "2026-11-27T00:00:00.000Z", finished_at: "2026-11-27T00:00:01.000Z" };
      await l.agents.addStep(step);
      await expect(l.agents.addStep(step)).rejects.toMatchObject({ code: "EXISTS" });
      await expect(l.agents.addStep({ ...step, run_id: A2 })).rejects.toMatchObject({ code: "NOT_FOUND" });
      // The near miss: the next number is accepted, and a step with no action shows its decision.
      await l.agents.addStep({ ...step, number: 2 });
      expect((await l.runs.steps("agent", A1)).map((s) => [s.number, s.status, s.signal])).toEqual([[1, "wait", "continue"], [2, "wait", "continue"]]);
      await expect(l.agents.update(A2, { status: "failed" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    } finally {
      await l.close();
    }
  });

});

// Memory keeps no SQL: seed 000's query runs where the tables are.
describe.each(fixtures.filter(([name]) => name !== "memory"))("RunRecords in SQL (%s)", (_name, open) => {
  it("keeps seed 000's SQL running on pulse_sessions and pulse_iterations beside the views", async () => {
    const l = await open();
    try {
      await history(l);
      if (!l.sql) throw new Error("this store runs no SQL");
      const rows = await l.sql(`SELECT s.id, s.current_iteration, s.max_iterations, s.status, s.last_signal,
i.signal, i.output_summary, i.commit_hash
FROM pulse_sessions s
LEFT JOIN pulse_iterations i ON i.session_id = s.id
WHERE s.status = 'running'
ORDER BY i.iteration_number DESC`);
      expect(rows).toEqual([{ id: S2, current_iteration: 0, max_iterations: 3, status: "running", last_signal: null, signal: null, output_summary: null, commit_hash: null }]);
      const views = await l.sql(`SELECT kind, count(*) AS n FROM pulse_runs GROUP BY kind ORDER BY kind`);
      expect(views.map((r) => [r.kind, Number(r.n)])).toEqual([["agent", 2], ["session", 2], ["workflow", 1]]);
    } finally {
      await l.close();
    }
  });
});

describe("RunRecords (sqlite file)", () => {
  it("reads nothing and creates nothing from a file that does not exist; a reopened file keeps its views", async () => {
    const d = mkdtempSync(join(tmpdir(), "pulse-runs-"));
    dirs.push(d);
    const file = join(d, "none.db");
    const none = SqliteRunRecords.open(file);
    expect(await none.list()).toEqual([]);
    expect(await none.steps("session", S1)).toEqual([]);
    await none.close();
    expect(existsSync(file)).toBe(false);
    const agents = SqliteAgentRuns.open(file);
    await agents.create({ id: A1, request: "r", mode: "auto", workdir: "/w", max_iterations: 2, max_actions: 2, runner_pid: process.pid });
    await agents.close();
    for (let i = 0; i < 2; i++) {
      const runs = SqliteRunRecords.open(file);
      expect((await runs.list()).map((r) => [r.kind, r.status])).toEqual([["agent", "running"]]);
      await runs.close();
    }
  });
});
