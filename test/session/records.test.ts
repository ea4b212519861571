/**
 * The SessionRecords contract, run against every implementation (memory; SQLite in a real file
 * shared with the store; PostgreSQL in a schema of its own migrated by the real `pulse store
 * migrate`, dropped after): every seed column kept and read back, control requests, id prefixes,
 * ordering, refusals; and, for SQLite, a reopen and a file from a newer pulse. Where no
 * PostgreSQL answers its fixture is left out (test/session/postgres.test.ts reports the skip);
 * under CI=true it stays in and fails.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MemorySessionRecords } from "../../adapters/memory/session-records.js";
import { SqliteSessionRecords } from "../../adapters/sqlite/session-records.js";
import { SqliteStore } from "../../adapters/sqlite/store.js";
import { openDatabase } from "../../adapters/sqlite/driver.js";
import type { IterationPatch, NewSession, SessionPatch, SessionRecords } from "../../src/coding/session/records.js";
import { describeWith, postgresService } from "../helpers/services.js";
import { migratedSchema } from "./postgres-helpers.js";

const dirs: string[] = [];
const drops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  for (const drop of drops.splice(0)) await drop();
});
const tempDb = () => {
  const d = mkdtempSync(join(tmpdir(), "pulse-sessions-"));
  dirs.push(d);
  return join(d, ".pulse", "pulse.db");
};

let clock = 0;
const now = () => new Date(Date.UTC(2026, 10, 24, 12, 0, clock++)).toISOString();

const pg = await postgresService();
const pgUrl = pg.url ?? (process.env.CI === "true" ? process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/test" : undefined);

const fixtures: [string, () => Promise<SessionRecords>][] = [
  ["memory", async () => new MemorySessionRecords(now)],
  ["sqlite", async () => SqliteSessionRecords.open(tempDb(), { now })],
  ...(pgUrl === undefined
    ? []
    : [
        [
          "postgres",
          async () => {
            const { PostgresSessionRecords } = await import("../../adapters/postgres/session-records.js");
            const s = migratedSchema(pgUrl);
            drops.push(s.drop);
            // As the runtime's role itself: what the migration granted it is all it has.
            return PostgresSessionRecords.open(s.appUrl, { now });
          },
        ] as [string, () => Promise<SessionRecords>],
      ]),
];

const session = (id: string, extra: Partial<NewSession> = {}): NewSession => ({
  id,
  project_name: "my-app",
  goal: "Implement user auth",
  max_iterations: 10,
  repo_path: "/tmp/my-app",
  driver: { name: "scripted", script: "/tmp/s.json" },
  context_strategy: "prefetch",
  created_by: "cli",
  ...extra,
});

describe.each(fixtures)("SessionRecords (%s)", (_name, open) => {
  it("keeps every column of the seed's pulse_sessions and pulse_iterations", async () => {
    const r = await open();
    const created = await r.create(session("0f8e2a4c-1111-4c1d-9b1e-000000000001", { anchor_turn_id: "turn-7", branch_name: "pulse/auth" }));
    expect(created).toMatchObject({ status: "pending", current_iteration: 0, last_signal: null, progress_log: [], total_commits: 0, total_tokens_used: 0, anchor_turn_id: "turn-7", branch_name: "pulse/auth", created_by: "cli" });
    const it1 = await r.addIteration({ id: "it-1", session_id: created.id, iteration_number: 1, task_content: "do it", status: "dispatched", anchor_strategy: "explicit", anchor_turn_id: "turn-7", anchor_resolution_ms: 0.5, anchor_salience: 1, anchor_depth: 0, context_tokens: 12, slice_id: "slice-1", inbox_task_id: "task-1" });
    expect(it1).toMatchObject({ status: "dispatched", files_changed: [], signal: null, slice_id: "slice-1" });
    const done = await r.updateIteration("it-1", { status: "complete", signal: "CONTINUE", signal_source: "tag", output_summary: "Built login", output_full: "Built login <signal>CONTINUE</signal>", commit_hash: "abc123", files_changed: ["a.ts", "b.ts"], anchor_hint_next: "turn-9", tokens_used: 300, cost_usd: 0.01, finished_at: now() });
    expect(done).toMatchObject({ status: "complete", files_changed: ["a.ts", "b.ts"], anchor_hint_next: "turn-9", cost_usd: 0.01 });
    await r.update(created.id, { status: "running", current_iteration: 1, last_signal: "CONTINUE", progress_log: [{ iteration: 1, signal: "CONTINUE", summary: "Built login", commit: "abc123" }], total_commits: 1, total_tokens_used: 300, total_cost_usd: 0.01, runner_pid: 42 });
    const back = await r.get(created.id);
    expect(back).toMatchObject({ status: "running", current_iteration: 1, last_signal: "CONTINUE", total_commits: 1, total_tokens_used: 300, runner_pid: 42, driver: { name: "scripted", script: "/tmp/s.json" } });
    expect(back!.progress_log).toEqual([{ iteration: 1, signal: "CONTINUE", summary: "Built login", commit: "abc123" }]);
    expect((await r.iterations(created.id)).map((i) => i.iteration_number)).toEqual([1]);
    await r.close();
  });

  it("gives back every field as it was written, no more and no fewer", async () => {
    const r = await open();
    const created = await r.create(session("eeee1111-0000-4000-8000-000000000001", { worktree_path: "/tmp/wt/my-app-eeee1111", base_ref: "main", base_sha: "0123456789abcdef0123456789abcdef01234567", branch_name: "pulse/session/eeee1111" }));
    const patch: SessionPatch = { status: "blocked", last_signal: "BLOCKED", stop_reason: "no_progress", status_reason: "needs a key", control: "abort", runner_pid: 4242, total_cost_usd: 1.25, total_tokens_used: 3_000_000_000, driver: { name: "claude", model: "m", timeoutMs: 60_000 }, progress_log: [{ iteration: 1, signal: "BLOCKED", summary: "ünïcødé \"quoted\"", commit: null }], verify: { checks: ["npm test"], each: true, baseline: [{ command: "npm test", exit: 1, failures: ["x fails"] }] } };
    const updated = await r.update(created.id, patch);
    expect(await r.get(created.id)).toEqual(updated);
    expect(updated).toEqual({ ...created, ...patch, updated_at: updated.updated_at });
    const it1 = await r.addIteration({ id: "it-e1", session_id: created.id, iteration_number: 1, task_content: "t" });
    const itPatch: IterationPatch = { status: "timeout", signal: "BLOCKED", signal_source: "tag", signal_reason: "r", error: "e", anchor_resolution_ms: 1.5, anchor_salience: 0.25, anchor_depth: 3, tokens_used: 7, cost_usd: 0.5, files_changed: ["a b.ts", "{x}", "c,d"], gate: { passed: false, checks: [{ command: "npm test", exit: 1, newFailures: ["y fails"], durationMs: 12 }] }, receipt: { driver: "claude", model: "claude-sonnet-4-5", usage: { inputTokens: 1200, outputTokens: 300, cacheReadTokens: 5000, cacheWriteTokens: 40 }, tokens: 6540, costUsd: 0.0123, costSource: "driver" }, finished_at: now() };
    const it2 = await r.updateIteration(it1.id, itPatch);
    expect(it2).toEqual({ ...it1, ...itPatch });
    expect(await r.iterations(created.id)).toEqual([it2]);
    await r.close();
  });

  it("lists newest first, filters by status, finds a unique id prefix", async () => {
    const r = await open();
    await r.create(session("aaaa1111-0000-4000-8000-000000000001"));
    await r.create(session("aaaa2222-0000-4000-8000-000000000002"));
    await r.update("aaaa2222-0000-4000-8000-000000000002", { status: "running" });
    expect((await r.list()).map((s) => s.id)).toEqual(["aaaa2222-0000-4000-8000-000000000002", "aaaa1111-0000-4000-8000-000000000001"]);
    expect((await r.list({ status: "running" })).map((s) => s.id)).toEqual(["aaaa2222-0000-4000-8000-000000000002"]);
    expect(await r.list({ status: "blocked" })).toEqual([]);
    expect((await r.get("aaaa1111"))?.id).toBe("aaaa1111-0000-4000-8000-000000000001");
    // Ambiguous or too short a prefix finds nothing rather than a guess.
    expect(await r.get("aaaa")).toBeUndefined();
    expect(await r.get("aaa")).toBeUndefined();
    expect(await r.get("nope-nope")).toBeUndefined();
    await r.close();
  });

  it("carries control requests, and refuses unknown ids and duplicates", async () => {
    const r = await open();
    const s = await r.create(session("bbbb1111-0000-4000-8000-000000000001"));
    expect((await r.requestControl(s.id, "pause")).control).toBe("pause");
    expect((await r.get(s.id))!.control).toBe("pause");
    expect((await r.requestControl(s.id, null)).control).toBeNull();
    await expect(r.requestControl("missing", "abort")).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(r.create(session(s.id))).rejects.toMatchObject({ code: "EXISTS" });
    await r.addIteration({ id: "i1", session_id: s.id, iteration_number: 1, task_content: "x" });
    await expect(r.addIteration({ id: "i2", session_id: s.id, iteration_number: 1, task_content: "x" })).rejects.toMatchObject({ code: "EXISTS" });
    await expect(r.addIteration({ id: "i3", session_id: "missing", iteration_number: 1, task_content: "x" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(r.updateIteration("missing", { status: "failed" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await r.close();
  });

  it("keeps each session's event stream in order, numbered from 1, paged by seq", async () => {
    const r = await open();
    const a = await r.create(session("ffff1111-0000-4000-8000-000000000001"));
    const b = await r.create(session("ffff2222-0000-4000-8000-000000000002"));
    expect(await r.events(a.id)).toEqual([]);
    const ev = (n: number) => ({ at: `2026-11-24T12:00:0${n}.000Z`, type: n === 1 ? "session.started" : "agent", data: { type: "agent", n, text: `ünï "${n}"`, nested: [{ k: n }] } });
    expect(await r.appendEvents(a.id, [ev(1), ev(2)])).toBe(2);
    // Another session's stream is its own, numbered from 1 too.
    expect(await r.appendEvents(b.id, [ev(9)])).toBe(1);
    expect(await r.appendEvents(a.id, [ev(3)])).toBe(3);
    expect(await r.appendEvents(a.id, [])).toBe(3);
    expect(await r.events(a.id)).toEqual([1, 2, 3].map((n) => ({ seq: n, ...ev(n) })));
    expect((await r.events(a.id, 1)).map((e) => e.seq)).toEqual([2, 3]);
    expect((await r.events(a.id, 0, 2)).map((e) => e.seq)).toEqual([1, 2]);
    expect(await r.events(a.id, 3)).toEqual([]);
    expect(await r.events(b.id)).toEqual([{ seq: 1, ...ev(9) }]);
    expect(await r.events("missing")).toEqual([]);
    await expect(r.appendEvents("missing", [ev(1)])).rejects.toMatchObject({ code: "NOT_FOUND" });
    await r.close();
  });
});

describe("SqliteSessionRecords in the shared file", () => {
  it("survives a reopen and shares .pulse/pulse.db with the store (its own schema version)", async () => {
    const path = tempDb();
    const store = new SqliteStore(path);
    const a = SqliteSessionRecords.open(path);
    await a.create(session("cccc1111-0000-4000-8000-000000000001"));
    await a.close();
    const b = SqliteSessionRecords.open(path);
    expect((await b.get("cccc1111-0000-4000-8000-000000000001"))?.goal).toBe("Implement user auth");
    await b.close();
    await store.close();
    const db = openDatabase(path);
    const versions = db.prepare("SELECT component, version FROM pulse_schema_versions ORDER BY component").all() as { component: string; version: number }[];
    expect(versions.map((v) => v.component)).toEqual(["sessions", "store"]);
    db.prepare("UPDATE pulse_schema_versions SET version = 99 WHERE component = 'sessions'").run();
    db.close();
    expect(() => SqliteSessionRecords.open(path)).toThrow(/sessions tables are at schema version 99.*knows sessions schema versions up to 6/);
  });

  it("refuses a file that is not a database, in one line", () => {
    const path = tempDb();
    const d = join(path, "..");
    rmSync(d, { recursive: true, force: true });
    mkdirSync(d, { recursive: true });
    writeFileSync(path, "not a database at all, just text ".repeat(100));
    expect(() => SqliteSessionRecords.open(path)).toThrow(/not a pulse store/);
  });
});

describeWith(pg, "PostgresSessionRecords in the store's schema", (url) => {
  it("are migrated on a track of their own: a second migrate changes nothing, and tables from a newer pulse are refused by open and by migrate", async () => {
    const { PostgresSessionRecords } = await import("../../adapters/postgres/session-records.js");
    const { migrate, SCHEMA_VERSION, SESSION_SCHEMA_VERSION } = await import("../../adapters/postgres/index.js");
    const { WORKFLOW_SCHEMA_VERSION } = await import("../../adapters/postgres/workflow-schema.js");
    const s = migratedSchema(url);
    drops.push(s.drop);
    const versions = await s.admin(`SELECT key, value FROM "${s.schema}".meta ORDER BY key`);
    const { RUN_SCHEMA_VERSION } = await import("../../adapters/postgres/run-schema.js");
    expect(versions.rows).toEqual([
      // The agent's run tables and the run views over every loop's (test/runs/records.test.ts).
      { key: "run_schema_version", value: String(RUN_SCHEMA_VERSION) },
      { key: "schema_version", value: String(SCHEMA_VERSION) },
      { key: "session_schema_version", value: String(SESSION_SCHEMA_VERSION) },
      // The pulsing workflow's tables, on a track of their own too (test/workflow/postgres.test.ts).
      { key: "workflow_schema_version", value: String(WORKFLOW_SCHEMA_VERSION) },
    ]);
    expect((await migrate(s.url)).sessions).toEqual({ from: SESSION_SCHEMA_VERSION, to: SESSION_SCHEMA_VERSION });
    // Owned by the owner role, like the store's tables; the runtime role may read and write them.
    const owners = await s.admin("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = $1 AND tablename LIKE 'pulse_%'", [s.schema]);
    expect(owners.rows).toEqual([{ tableowner: s.ownerRole }]);
    const r = await PostgresSessionRecords.open(s.appUrl);
    await r.create(session("dddd1111-0000-4000-8000-000000000001"));
    // The budgets columns, as in SQLite: numbers back (bigint too), null when unset.
    expect(await r.update("dddd1111-0000-4000-8000-000000000001", { max_cost_usd: 2.5, max_tokens: 3_000_000_000, max_wall_ms: 8 * 3_600_000 })).toMatchObject({ max_cost_usd: 2.5, max_tokens: 3_000_000_000, max_wall_ms: 8 * 3_600_000 });
    expect(await r.create(session("dddd1111-0000-4000-8000-000000000002"))).toMatchObject({ max_cost_usd: null, max_tokens: null });
    expect(await r.get("dddd1111-0000-4000-8000-000000000002")).toMatchObject({ max_cost_usd: null, max_tokens: null, max_wall_ms: null });
    await r.close();
    await s.admin(`UPDATE "${s.schema}".meta SET value = '99' WHERE key = 'session_schema_version'`);
    await expect(PostgresSessionRecords.open(s.appUrl)).rejects.toThrow(new RegExp(`session schema version 99\\); this pulse reads session schema versions up to ${SESSION_SCHEMA_VERSION}`));
    await expect(migrate(s.url)).rejects.toThrow(/session schema version 99/);
  });
});
