/**
 * `pulse store info` and `pulse store export --jsonl` cover every table pulse writes in the file:
 * the store's, and the session records (`pulse_sessions`, `pulse_iterations`) that `pulse session`
 * and `pulse serve` keep beside them, the schema versions and watermarks too. A backup of "every
 * row" that left the sessions out lost them.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../adapters/sqlite/driver.js";
import { SqliteSessionRecords } from "../../adapters/sqlite/session-records.js";
import { runBin } from "../cli/run-bin.js";
import { tempDir } from "./stores.js";

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

describe("pulse store info and export: every table in the file", () => {
  it("lists and exports the session tables beside the store's, row for row", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    expect(runBin("pulse", ["run", "manifests/examples", "--once", "--store", `sqlite:${path}`]).code).toBe(0);
    const sessions = SqliteSessionRecords.open(path);
    for (let i = 1; i <= 2; i++) {
      await sessions.create({ id: `s${i}`, project_name: "shop", goal: `goal ${i}`, max_iterations: 5, repo_path: dir, driver: { name: "scripted" }, context_strategy: "none", created_by: "cli" });
      for (let n = 1; n <= 3; n++) await sessions.addIteration({ id: `s${i}-${n}`, session_id: `s${i}`, iteration_number: n, task_content: `task ${n}` });
    }
    await sessions.close();

    const store = ["--store", `sqlite:${path}`];
    const info = runBin("pulse", ["store", "info", ...store]);
    expect(info.code, info.stderr).toBe(0);
    expect(info.stdout).toMatch(/\n {2}pulse_sessions +2\n/);
    expect(info.stdout).toMatch(/\n {2}pulse_iterations +6\n/);
    // The store's own tables come first, as before.
    expect(info.stdout.split("\n")[1]).toMatch(/^ {2}iterations +\d+$/);
    const counts = (JSON.parse(runBin("pulse", ["store", "info", ...store, "--json"]).stdout) as { counts: Record<string, number> }).counts;

    const lines = runBin("pulse", ["store", "export", "--jsonl", ...store]).stdout.trim().split("\n").map((l) => JSON.parse(l) as { table: string; row: Record<string, unknown> });
    const db = openDatabase(path, { readonly: true });
    const tables = (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[]).map((t) => t.name);
    for (const table of tables) {
      const n = (db.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
      expect(lines.filter((l) => l.table === table), table).toHaveLength(n);
      if (table !== "idempotency") expect(counts[table], table).toBe(n);
    }
    db.close();
    expect(tables).toEqual(expect.arrayContaining(["pulse_sessions", "pulse_iterations", "pulse_schema_versions", "store_state", "audit_traces"]));
    expect(lines.filter((l) => l.table === "pulse_sessions").map((l) => l.row.goal)).toEqual(["goal 1", "goal 2"]);
  });

  it("the near miss: a store with no sessions lists no session tables, and exports the store's rows as before", () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    expect(runBin("pulse", ["run", "manifests/examples", "--once", "--store", `sqlite:${path}`]).code).toBe(0);
    const info = runBin("pulse", ["store", "info", "--store", `sqlite:${path}`]);
    expect(info.code).toBe(0);
    expect(info.stdout).not.toMatch(/pulse_sessions/);
    const tables = new Set(runBin("pulse", ["store", "export", "--jsonl", "--store", `sqlite:${path}`]).stdout.trim().split("\n").map((l) => (JSON.parse(l) as { table: string }).table));
    expect(tables.has("audit_events") && tables.has("iterations")).toBe(true);
  });
});
