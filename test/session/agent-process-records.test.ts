/**
 * The records of live agent processes, against every implementation (memory; SQLite in a real
 * file shared with the session records; PostgreSQL in a schema of its own migrated by the real
 * `pulse store migrate`, left out where no PostgreSQL answers unless CI=true): recorded, listed per session, removed per
 * iteration or all; in SQLite, kept across a reopen, under their own schema component, and a
 * file whose agent_processes tables a newer pulse wrote refused in one line.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryAgentProcesses } from "../../adapters/memory/agent-processes.js";
import { SqliteAgentProcesses } from "../../adapters/sqlite/agent-processes.js";
import { openDatabase } from "../../adapters/sqlite/driver.js";
import { SqliteSessionRecords } from "../../adapters/sqlite/session-records.js";
import type { AgentProcesses } from "../../src/coding/agent-processes.js";
import { postgresService } from "../helpers/services.js";
import { migratedSchema } from "./postgres-helpers.js";

const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  for (const c of closers.splice(0)) await c();
});

const pg = await postgresService();
const pgUrl = pg.url ?? (process.env.CI === "true" ? process.env.DATABASE_URL || "postgresql://postgres@127.0.0.1:5432/test" : undefined);

/** PostgreSQL's, over the session records' connections (the runtime's role, as a host works). */
async function postgresProcesses(url: string): Promise<AgentProcesses> {
  const { PostgresSessionRecords } = await import("../../adapters/postgres/session-records.js");
  const s = migratedSchema(url);
  const records = await PostgresSessionRecords.open(s.appUrl);
  closers.push(async () => {
    await records.close();
    await s.drop();
  });
  return records.agentProcesses();
}

function file(): string {
  const dir = mkdtempSync(join(tmpdir(), "pulse-agent-processes-"));
  dirs.push(dir);
  return join(dir, "pulse.db");
}

const info = (pid: number, marker: string) => ({ pid, pgid: pid, startTime: 1000 + pid, marker });

const fixtures: [string, () => Promise<AgentProcesses>][] = [
  ["memory", async () => new MemoryAgentProcesses()],
  ["sqlite", async () => SqliteAgentProcesses.open(file())],
  ...(pgUrl === undefined ? [] : [["postgres", () => postgresProcesses(pgUrl)] as [string, () => Promise<AgentProcesses>]]),
];

for (const [name, open] of fixtures) {
  describe(`agent process records (${name})`, () => {
    it("records each process with the runner's pid, lists a session's only, removes an iteration's or all", async () => {
      const p: AgentProcesses = await open();
      await p.record("s1", 1, info(101, "m1"));
      await p.record("s1", 2, info(102, "m2"));
      await p.record("s2", 1, info(201, "m3"));
      expect((await p.list("s1")).map(({ recorded_at: _, ...r }) => r)).toEqual([
        { session_id: "s1", iteration: 1, pid: 101, pgid: 101, startTime: 1101, marker: "m1", runner_pid: process.pid },
        { session_id: "s1", iteration: 2, pid: 102, pgid: 102, startTime: 1102, marker: "m2", runner_pid: process.pid },
      ]);
      await p.remove("s1", 1);
      expect((await p.list("s1")).map((r) => r.marker)).toEqual(["m2"]);
      expect((await p.list("s2")).map((r) => r.marker)).toEqual(["m3"]);
      // Which runs have processes recorded: what a later pulse looks through for dead runners' leftovers.
      expect((await p.runs()).sort()).toEqual(["s1", "s2"]);
      await p.remove("s2");
      expect(await p.list("s2")).toEqual([]);
      expect(await p.runs()).toEqual(["s1"]);
      await p.close();
    });
  });
}

describe("agent process records in SQLite", () => {
  it("are kept across a reopen, under their own component beside the session tables", async () => {
    const path = file();
    const sessions = SqliteSessionRecords.open(path);
    const a = SqliteAgentProcesses.open(path);
    await a.record("s1", 1, info(7, "m"));
    await a.close();
    const b = SqliteAgentProcesses.open(path);
    expect((await b.list("s1")).map((r) => r.pid)).toEqual([7]);
    await b.close();
    await sessions.close();
    const db = openDatabase(path);
    expect(db.prepare("SELECT component, version FROM pulse_schema_versions ORDER BY component").all()).toEqual([
      { component: "agent_processes", version: 1 },
      { component: "sessions", version: expect.any(Number) },
    ]);
    db.close();
  });

  it("refuses a file whose agent_processes tables a newer pulse wrote, naming both versions", () => {
    const path = file();
    SqliteAgentProcesses.open(path).close();
    const db = openDatabase(path);
    db.prepare("UPDATE pulse_schema_versions SET version = 9 WHERE component = 'agent_processes'").run();
    db.close();
    expect(() => SqliteAgentProcesses.open(path)).toThrow(/its agent_processes tables are at schema version 9, written by a newer pulse; this pulse knows agent_processes schema versions up to 1/);
  });
});
