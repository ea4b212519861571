/**
 * The agent's run journal (what `pulse agent resume` continues from) in SQLite (`pulse_agent_journal`
 * in the home's agent.db, its own
 * component `agent_journal` of `pulse_schema_versions`): the columns a listing filters on, the rest
 * of the record as JSON. Writes are synchronous (better-sqlite3): done when the call returns, so a
 * pulse killed right after loses nothing it recorded.
 */
import type { AgentRunRecord, RunJournal, RunPatch } from "../../src/coding/agent/run-journal.js";
import { VERSION } from "../../src/version.js";
import { openDatabase, storeError, type Database } from "./driver.js";
import { migrateComponent } from "./schema-versions.js";

const MIGRATIONS = [
  `CREATE TABLE pulse_agent_journal (
    run_id TEXT PRIMARY KEY, status TEXT NOT NULL, reason TEXT, runner_pid INTEGER NOT NULL,
    request TEXT NOT NULL, started_at TEXT NOT NULL, updated_at TEXT NOT NULL, body TEXT NOT NULL
  ) STRICT;
  CREATE INDEX pulse_agent_journal_started ON pulse_agent_journal (started_at);`,
];

export class SqliteAgentJournal implements RunJournal {
  private constructor(
    private readonly db: Database,
    readonly path: string,
  ) {}

  static open(path: string): SqliteAgentJournal {
    const db = openDatabase(path);
    try {
      migrateComponent(db, path, "agent_journal", MIGRATIONS, `pulse ${VERSION}`);
    } catch (error) {
      db.close();
      throw storeError(path, error);
    }
    return new SqliteAgentJournal(db, path);
  }

  private run<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      throw storeError(this.path, error);
    }
  }

  private write(r: AgentRunRecord): void {
    this.db
      .prepare("INSERT OR REPLACE INTO pulse_agent_journal (run_id, status, reason, runner_pid, request, started_at, updated_at, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
      .run(r.runId, r.status, r.reason ?? null, r.runnerPid, r.request, r.startedAt, r.updatedAt, JSON.stringify(r));
  }

  private read(runId: string): AgentRunRecord | undefined {
    const row = this.db.prepare("SELECT body FROM pulse_agent_journal WHERE run_id = ?").get(runId) as { body: string } | undefined;
    return row ? (JSON.parse(row.body) as AgentRunRecord) : undefined;
  }

  async begin(record: AgentRunRecord): Promise<void> {
    this.run(() => this.write(record));
  }

  async update(runId: string, patch: RunPatch): Promise<void> {
    this.run(() =>
      this.db
        .transaction(() => {
          const r = this.read(runId);
          if (r) this.write({ ...r, ...patch, updatedAt: new Date().toISOString() });
        })
        .immediate(),
    );
  }

  async get(runId: string): Promise<AgentRunRecord | undefined> {
    return this.run(() => this.read(runId));
  }

  async list(limit = 100): Promise<AgentRunRecord[]> {
    return this.run(() => (this.db.prepare("SELECT body FROM pulse_agent_journal ORDER BY started_at DESC, run_id LIMIT ?").all(limit) as { body: string }[]).map((r) => JSON.parse(r.body) as AgentRunRecord));
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
