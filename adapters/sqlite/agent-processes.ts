/**
 * The agent processes a session has running, in SQLite (`pulse_agent_processes` in the shared
 * `.pulse/pulse.db`), migrated as its own component `agent_processes` of
 * `pulse_schema_versions`, apart from the session tables. Written by the runner as each process
 * starts; read by the reaper of a later pulse after that runner died.
 */
import type { SpawnInfo } from "../../src/agents/contract.js";
import type { AgentProcessRecord, AgentProcesses } from "../../src/coding/agent-processes.js";
import { VERSION } from "../../src/version.js";
import { openDatabase, storeError, type Database } from "./driver.js";
import { migrateComponent } from "./schema-versions.js";

const MIGRATIONS = [
  `CREATE TABLE pulse_agent_processes (
    session_id TEXT NOT NULL, iteration INTEGER NOT NULL, pid INTEGER NOT NULL, pgid INTEGER NOT NULL,
    start_time INTEGER NOT NULL, marker TEXT NOT NULL, runner_pid INTEGER NOT NULL, recorded_at TEXT NOT NULL,
    PRIMARY KEY (session_id, marker)
  ) STRICT;`,
];

interface Row {
  session_id: string;
  iteration: number;
  pid: number;
  pgid: number;
  start_time: number;
  marker: string;
  runner_pid: number;
  recorded_at: string;
}

export class SqliteAgentProcesses implements AgentProcesses {
  private constructor(
    private readonly db: Database,
    readonly path: string,
  ) {}

  static open(path: string): SqliteAgentProcesses {
    const db = openDatabase(path);
    try {
      migrateComponent(db, path, "agent_processes", MIGRATIONS, `pulse ${VERSION}`);
    } catch (error) {
      db.close();
      throw storeError(path, error);
    }
    return new SqliteAgentProcesses(db, path);
  }

  private run<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      throw storeError(this.path, error);
    }
  }

  async record(sessionId: string, iteration: number, info: SpawnInfo): Promise<void> {
    this.run(() =>
      this.db
        .prepare("INSERT OR REPLACE INTO pulse_agent_processes (session_id, iteration, pid, pgid, start_time, marker, runner_pid, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        .run(sessionId, iteration, info.pid, info.pgid, info.startTime, info.marker, process.pid, new Date().toISOString()),
    );
  }

  async remove(sessionId: string, iteration?: number): Promise<void> {
    this.run(() =>
      iteration === undefined
        ? this.db.prepare("DELETE FROM pulse_agent_processes WHERE session_id = ?").run(sessionId)
        : this.db.prepare("DELETE FROM pulse_agent_processes WHERE session_id = ? AND iteration = ?").run(sessionId, iteration),
    );
  }

  async list(sessionId: string): Promise<AgentProcessRecord[]> {
    const rows = this.run(() => this.db.prepare("SELECT * FROM pulse_agent_processes WHERE session_id = ? ORDER BY recorded_at, rowid").all(sessionId) as Row[]);
    return rows.map((r) => ({ session_id: r.session_id, iteration: r.iteration, pid: r.pid, pgid: r.pgid, startTime: r.start_time, marker: r.marker, runner_pid: r.runner_pid, recorded_at: r.recorded_at }));
  }

  async runs(): Promise<string[]> {
    return this.run(() => (this.db.prepare("SELECT DISTINCT session_id FROM pulse_agent_processes ORDER BY session_id").all() as { session_id: string }[]).map((r) => r.session_id));
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
