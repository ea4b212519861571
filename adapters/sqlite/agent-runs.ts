/**
 * Agent run records in SQLite (`pulse_agent_runs`, `pulse_agent_steps`), migrated as component
 * `agent_runs` of `pulse_schema_versions`: in the agent's store (its home's agent.db by default,
 * or the shared `.pulse/pulse.db` given as --store), beside its feedback and process records.
 */
import { AGENT_JSON_COLUMNS, AGENT_RUN_COLUMNS, AGENT_STEP_COLUMNS, AgentRunRecordsError, newAgentRunRecord, type AgentRunPatch, type AgentRunRecord, type AgentRunRecords, type AgentStepRecord, type NewAgentRun } from "../../src/coding/agent/run-records.js";
import { VERSION } from "../../src/version.js";
import { openDatabase, storeError, type Database } from "./driver.js";
import { migrateComponent } from "./schema-versions.js";

export const AGENT_RUN_MIGRATIONS = [
  `CREATE TABLE pulse_agent_runs (
    id TEXT PRIMARY KEY, request TEXT NOT NULL, mode TEXT NOT NULL, workdir TEXT NOT NULL, status TEXT NOT NULL,
    reason TEXT, message TEXT, iteration INTEGER NOT NULL, max_iterations INTEGER NOT NULL, actions_used INTEGER NOT NULL,
    max_actions INTEGER NOT NULL, tokens_used INTEGER NOT NULL, last_signal TEXT, runner_pid INTEGER, report_path TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, finished_at TEXT
  ) STRICT;
  CREATE TABLE pulse_agent_steps (
    run_id TEXT NOT NULL REFERENCES pulse_agent_runs (id), number INTEGER NOT NULL, plan_step TEXT, decision TEXT,
    action TEXT, action_run_id TEXT, args TEXT, action_status TEXT, result TEXT, feedback TEXT, advisory_status TEXT,
    advisory_reason TEXT, progress TEXT, tokens_used INTEGER NOT NULL, started_at TEXT NOT NULL, finished_at TEXT NOT NULL,
    PRIMARY KEY (run_id, number)
  ) STRICT;`,
];

type Row = Record<string, unknown>;

function toRow(record: object, columns: readonly string[]): Row {
  const row: Row = {};
  for (const [k, v] of Object.entries(record)) {
    if (!columns.includes(k)) throw new AgentRunRecordsError("INVALID", `no column ${JSON.stringify(k)} in the agent run records`);
    if (v !== undefined) row[k] = AGENT_JSON_COLUMNS.has(k) && v !== null ? JSON.stringify(v) : v;
  }
  return row;
}

function fromRow<T>(row: Row): T {
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) out[k] = AGENT_JSON_COLUMNS.has(k) && typeof v === "string" ? JSON.parse(v) : v;
  return out as T;
}

/** Creates or brings up to date the agent run tables of an open file. */
export function migrateAgentRuns(db: Database, path: string): void {
  migrateComponent(db, path, "agent_runs", AGENT_RUN_MIGRATIONS, `pulse ${VERSION}`);
}

export class SqliteAgentRuns implements AgentRunRecords {
  private constructor(
    private readonly db: Database,
    readonly path: string,
    private readonly now: () => string,
  ) {}

  static open(path: string, options: { now?: () => string } = {}): SqliteAgentRuns {
    const db = openDatabase(path);
    try {
      migrateAgentRuns(db, path);
    } catch (error) {
      db.close();
      throw storeError(path, error);
    }
    return new SqliteAgentRuns(db, path, options.now ?? (() => new Date().toISOString()));
  }

  private run<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof AgentRunRecordsError) throw error;
      throw storeError(this.path, error);
    }
  }

  async create(run: NewAgentRun): Promise<AgentRunRecord> {
    const record = newAgentRunRecord(run, this.now());
    return this.run(() => {
      if (this.db.prepare("SELECT 1 FROM pulse_agent_runs WHERE id = ?").get(record.id)) throw new AgentRunRecordsError("EXISTS", `agent run ${record.id} already exists`);
      const row = toRow(record, AGENT_RUN_COLUMNS);
      const cols = Object.keys(row);
      this.db.prepare(`INSERT INTO pulse_agent_runs (${cols.join(", ")}) VALUES (${cols.map((c) => `@${c}`).join(", ")})`).run(row);
      return record;
    });
  }

  async get(id: string): Promise<AgentRunRecord | undefined> {
    return this.run(() => {
      const exact = this.db.prepare("SELECT * FROM pulse_agent_runs WHERE id = ?").get(id) as Row | undefined;
      if (exact) return fromRow<AgentRunRecord>(exact);
      if (id.length < 4 || /[%_]/.test(id)) return undefined;
      const hits = this.db.prepare("SELECT * FROM pulse_agent_runs WHERE id LIKE ? LIMIT 2").all(`${id}%`) as Row[];
      return hits.length === 1 ? fromRow<AgentRunRecord>(hits[0]!) : undefined;
    });
  }

  async list(): Promise<AgentRunRecord[]> {
    return this.run(() => (this.db.prepare("SELECT * FROM pulse_agent_runs ORDER BY created_at DESC, id DESC").all() as Row[]).map((r) => fromRow<AgentRunRecord>(r)));
  }

  async update(id: string, patch: AgentRunPatch): Promise<AgentRunRecord> {
    return this.run(() => {
      const row = toRow({ ...patch, updated_at: this.now() }, AGENT_RUN_COLUMNS);
      const sets = Object.keys(row).map((c) => `${c} = @${c}`);
      const changed = this.db.prepare(`UPDATE pulse_agent_runs SET ${sets.join(", ")} WHERE id = @__id`).run({ ...row, __id: id });
      if (changed.changes === 0) throw new AgentRunRecordsError("NOT_FOUND", `no agent run ${id}`);
      return fromRow<AgentRunRecord>(this.db.prepare("SELECT * FROM pulse_agent_runs WHERE id = ?").get(id) as Row);
    });
  }

  async addStep(step: AgentStepRecord): Promise<AgentStepRecord> {
    return this.run(() => {
      if (!this.db.prepare("SELECT 1 FROM pulse_agent_runs WHERE id = ?").get(step.run_id)) throw new AgentRunRecordsError("NOT_FOUND", `no agent run ${step.run_id}`);
      if (this.db.prepare("SELECT 1 FROM pulse_agent_steps WHERE run_id = ? AND number = ?").get(step.run_id, step.number)) throw new AgentRunRecordsError("EXISTS", `agent run ${step.run_id} already has step ${step.number}`);
      const row = toRow(step, AGENT_STEP_COLUMNS);
      const cols = Object.keys(row);
      this.db.prepare(`INSERT INTO pulse_agent_steps (${cols.join(", ")}) VALUES (${cols.map((c) => `@${c}`).join(", ")})`).run(row);
      return step;
    });
  }

  async steps(runId: string): Promise<AgentStepRecord[]> {
    return this.run(() => (this.db.prepare("SELECT * FROM pulse_agent_steps WHERE run_id = ? ORDER BY number").all(runId) as Row[]).map((r) => fromRow<AgentStepRecord>(r)));
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
