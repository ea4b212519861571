/**
 * The pulsing workflow's records in SQLite: `pulse_workflows`, seed 001's `pulse_workflow_pulses`
 * (Pulse), `pulse_preflight_setups` (PreflightSetup), `pulse_preflight_baselines`
 * (PreflightBaseline) and `pulse_workflow_events`, in the shared `.pulse/pulse.db`, migrated as
 * component `workflows` of `pulse_schema_versions`. Each call is one statement or transaction,
 * so a runner killed at any point leaves the last committed state for `resume`.
 */
import {
  newPulseRecord,
  newWorkflowRecord,
  WorkflowRecordsError,
  type NewPulse,
  type NewWorkflow,
  type PreflightBaseline,
  type PreflightSetup,
  type PulsePatch,
  type PulseRecord,
  type WorkflowEventRecord,
  type WorkflowPatch,
  type WorkflowRecord,
  type WorkflowRecords,
} from "../../src/coding/workflow/records.js";
import { VERSION } from "../../src/version.js";
import { openDatabase, storeError, type Database } from "./driver.js";
import { migrateComponent } from "./schema-versions.js";

export const WORKFLOW_MIGRATIONS = [
  `CREATE TABLE pulse_workflows (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, plan_path TEXT, repo_path TEXT NOT NULL, base_ref TEXT NOT NULL,
    base_sha TEXT NOT NULL, base_note TEXT, branch_name TEXT NOT NULL, worktree_path TEXT NOT NULL, driver TEXT NOT NULL,
    status TEXT NOT NULL, status_reason TEXT, control TEXT, runner_pid INTEGER, turns INTEGER NOT NULL, verify TEXT NOT NULL,
    artifacts TEXT NOT NULL, total_tokens_used INTEGER NOT NULL, total_cost_usd REAL NOT NULL,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, finished_at TEXT
  ) STRICT;
  CREATE TABLE pulse_workflow_pulses (
    id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL REFERENCES pulse_workflows (id), number INTEGER NOT NULL,
    planned_pulse_id TEXT, title TEXT NOT NULL, description TEXT NOT NULL, status TEXT NOT NULL, initiating_message_id TEXT,
    checkpoint_commit_sha TEXT, summary TEXT, pulse_branch TEXT, worktree_path TEXT, has_unresolved_issues INTEGER NOT NULL,
    unresolved_issues TEXT NOT NULL, is_recovery_checkpoint INTEGER NOT NULL, files_changed TEXT NOT NULL,
    turns INTEGER NOT NULL, rejections INTEGER NOT NULL, nudges INTEGER NOT NULL, extensions INTEGER NOT NULL,
    feedback TEXT, gate TEXT, tokens_used INTEGER NOT NULL, cost_usd REAL NOT NULL,
    created_at TEXT NOT NULL, started_at TEXT, ended_at TEXT, failure_reason TEXT,
    UNIQUE (workflow_id, number)
  ) STRICT;
  CREATE TABLE pulse_preflight_setups (
    id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL UNIQUE REFERENCES pulse_workflows (id), status TEXT NOT NULL,
    progress_message TEXT, error_message TEXT, summary TEXT, setup_commands TEXT NOT NULL, build_success INTEGER,
    created_at TEXT NOT NULL, completed_at TEXT
  ) STRICT;
  CREATE TABLE pulse_preflight_baselines (
    id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL REFERENCES pulse_workflows (id), issueType TEXT NOT NULL,
    source TEXT NOT NULL, pattern TEXT NOT NULL, filePath TEXT, description TEXT
  ) STRICT;
  CREATE TABLE pulse_workflow_events (
    workflow_id TEXT NOT NULL REFERENCES pulse_workflows (id), seq INTEGER NOT NULL, at TEXT NOT NULL,
    type TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (workflow_id, seq)
  ) STRICT;`,
  // 2: --merge ff|squash|rebase, applied when every pulse succeeded.
  `ALTER TABLE pulse_workflows ADD COLUMN merge TEXT;`,
];

const JSON_COLUMNS = new Set(["driver", "verify", "artifacts", "unresolved_issues", "files_changed", "gate", "setup_commands"]);
const BOOL_COLUMNS = new Set(["has_unresolved_issues", "is_recovery_checkpoint", "build_success"]);
type Row = Record<string, unknown>;

const WORKFLOW_COLUMNS = new Set(Object.keys(newWorkflowRecord({ id: "", title: "", plan_path: null, repo_path: "", base_ref: "", base_sha: "", base_note: null, branch_name: "", worktree_path: "", driver: { name: "" }, verify: { checks: [] } }, "")));
const PULSE_COLUMNS = new Set(Object.keys(newPulseRecord({ id: "", workflow_id: "", number: 0, title: "", description: "" }, "")));
const PREFLIGHT_COLUMNS = new Set(["id", "workflow_id", "status", "progress_message", "error_message", "summary", "setup_commands", "build_success", "created_at", "completed_at"]);

function toRow(record: object, columns: Set<string>): Row {
  const row: Row = {};
  for (const [k, v] of Object.entries(record)) {
    if (!columns.has(k)) throw new WorkflowRecordsError("INVALID", `no column ${JSON.stringify(k)} in the workflow records`);
    if (v === undefined) continue;
    row[k] = JSON_COLUMNS.has(k) ? JSON.stringify(v) : BOOL_COLUMNS.has(k) && v !== null ? (v ? 1 : 0) : v;
  }
  return row;
}

function fromRow<T>(row: Row): T {
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) out[k] = JSON_COLUMNS.has(k) && typeof v === "string" ? JSON.parse(v) : BOOL_COLUMNS.has(k) && v !== null ? v === 1 : v;
  return out as T;
}

function insert(db: Database, table: string, row: Row): void {
  const cols = Object.keys(row);
  db.prepare(`INSERT INTO ${table} (${cols.join(", ")}) VALUES (${cols.map((c) => `@${c}`).join(", ")})`).run(row);
}

export class SqliteWorkflowRecords implements WorkflowRecords {
  private constructor(
    private readonly db: Database,
    readonly path: string,
  ) {}

  static open(path: string): SqliteWorkflowRecords {
    const db = openDatabase(path);
    try {
      migrateComponent(db, path, "workflows", WORKFLOW_MIGRATIONS, `pulse ${VERSION}`);
    } catch (error) {
      db.close();
      throw storeError(path, error);
    }
    return new SqliteWorkflowRecords(db, path);
  }

  private run<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof WorkflowRecordsError) throw error;
      throw storeError(this.path, error);
    }
  }

  private now(): string {
    return new Date().toISOString();
  }

  async create(workflow: NewWorkflow, pulses: Omit<NewPulse, "workflow_id">[]): Promise<WorkflowRecord> {
    const now = this.now();
    const record = newWorkflowRecord(workflow, now);
    return this.run(() =>
      this.db.transaction(() => {
        if (this.db.prepare("SELECT 1 FROM pulse_workflows WHERE id = ?").get(record.id)) throw new WorkflowRecordsError("EXISTS", `workflow ${record.id} already exists`);
        insert(this.db, "pulse_workflows", toRow(record, WORKFLOW_COLUMNS));
        for (const p of pulses) insert(this.db, "pulse_workflow_pulses", toRow(newPulseRecord({ ...p, workflow_id: record.id }, now), PULSE_COLUMNS));
        return record;
      }).immediate(),
    );
  }

  async get(id: string): Promise<WorkflowRecord | undefined> {
    return this.run(() => {
      const exact = this.db.prepare("SELECT * FROM pulse_workflows WHERE id = ?").get(id) as Row | undefined;
      if (exact) return fromRow<WorkflowRecord>(exact);
      if (id.length < 4 || /[%_]/.test(id)) return undefined;
      const hits = this.db.prepare("SELECT * FROM pulse_workflows WHERE id LIKE ? LIMIT 2").all(`${id}%`) as Row[];
      return hits.length === 1 ? fromRow<WorkflowRecord>(hits[0]!) : undefined;
    });
  }

  async list(): Promise<WorkflowRecord[]> {
    return this.run(() => (this.db.prepare("SELECT * FROM pulse_workflows ORDER BY created_at DESC, rowid DESC").all() as Row[]).map((r) => fromRow<WorkflowRecord>(r)));
  }

  async update(id: string, patch: WorkflowPatch): Promise<WorkflowRecord> {
    return this.run(() => {
      const row = toRow({ ...patch, updated_at: this.now() }, WORKFLOW_COLUMNS);
      const sets = Object.keys(row).map((c) => `${c} = @${c}`);
      const changed = this.db.prepare(`UPDATE pulse_workflows SET ${sets.join(", ")} WHERE id = @__id`).run({ ...row, __id: id });
      if (changed.changes === 0) throw new WorkflowRecordsError("NOT_FOUND", `no workflow ${id}`);
      return fromRow<WorkflowRecord>(this.db.prepare("SELECT * FROM pulse_workflows WHERE id = ?").get(id) as Row);
    });
  }

  async pulses(workflowId: string): Promise<PulseRecord[]> {
    return this.run(() => (this.db.prepare("SELECT * FROM pulse_workflow_pulses WHERE workflow_id = ? ORDER BY number").all(workflowId) as Row[]).map((r) => fromRow<PulseRecord>(r)));
  }

  async updatePulse(id: string, patch: PulsePatch): Promise<PulseRecord> {
    return this.run(() => {
      const row = toRow(patch, PULSE_COLUMNS);
      const sets = Object.keys(row).map((c) => `${c} = @${c}`);
      if (sets.length > 0 && this.db.prepare(`UPDATE pulse_workflow_pulses SET ${sets.join(", ")} WHERE id = @__id`).run({ ...row, __id: id }).changes === 0) throw new WorkflowRecordsError("NOT_FOUND", `no pulse ${id}`);
      const found = this.db.prepare("SELECT * FROM pulse_workflow_pulses WHERE id = ?").get(id) as Row | undefined;
      if (!found) throw new WorkflowRecordsError("NOT_FOUND", `no pulse ${id}`);
      return fromRow<PulseRecord>(found);
    });
  }

  async preflight(workflowId: string): Promise<PreflightSetup | undefined> {
    return this.run(() => {
      const row = this.db.prepare("SELECT * FROM pulse_preflight_setups WHERE workflow_id = ?").get(workflowId) as Row | undefined;
      return row ? fromRow<PreflightSetup>(row) : undefined;
    });
  }

  async putPreflight(setup: PreflightSetup): Promise<PreflightSetup> {
    return this.run(() => {
      const row = toRow(setup, PREFLIGHT_COLUMNS);
      const cols = Object.keys(row);
      this.db.prepare(`INSERT OR REPLACE INTO pulse_preflight_setups (${cols.join(", ")}) VALUES (${cols.map((c) => `@${c}`).join(", ")})`).run(row);
      return setup;
    });
  }

  async addBaselines(baselines: PreflightBaseline[]): Promise<void> {
    this.run(() =>
      this.db.transaction(() => {
        for (const b of baselines) insert(this.db, "pulse_preflight_baselines", { id: b.id, workflow_id: b.workflow_id, issueType: b.issueType, source: b.source, pattern: b.pattern, filePath: b.filePath ?? null, description: b.description ?? null });
      })(),
    );
  }

  async baselines(workflowId: string): Promise<PreflightBaseline[]> {
    const rows = this.run(() => this.db.prepare("SELECT * FROM pulse_preflight_baselines WHERE workflow_id = ? ORDER BY rowid").all(workflowId) as Row[]);
    return rows.map((r) => {
      const b: PreflightBaseline = { id: r.id as string, workflow_id: r.workflow_id as string, issueType: r.issueType as PreflightBaseline["issueType"], source: r.source as PreflightBaseline["source"], pattern: r.pattern as string };
      if (r.filePath !== null) b.filePath = r.filePath as string;
      if (r.description !== null) b.description = r.description as string;
      return b;
    });
  }

  async appendEvents(workflowId: string, events: Omit<WorkflowEventRecord, "seq">[]): Promise<number> {
    return this.run(() =>
      this.db.transaction(() => {
        let seq = (this.db.prepare("SELECT max(seq) AS m FROM pulse_workflow_events WHERE workflow_id = ?").get(workflowId) as { m: number | null }).m ?? 0;
        const add = this.db.prepare("INSERT INTO pulse_workflow_events (workflow_id, seq, at, type, data) VALUES (?, ?, ?, ?, ?)");
        for (const e of events) add.run(workflowId, ++seq, e.at, e.type, JSON.stringify(e.data));
        return seq;
      }).immediate(),
    );
  }

  async events(workflowId: string, afterSeq = 0, limit = 500): Promise<WorkflowEventRecord[]> {
    return this.run(() =>
      (this.db.prepare("SELECT seq, at, type, data FROM pulse_workflow_events WHERE workflow_id = ? AND seq > ? ORDER BY seq LIMIT ?").all(workflowId, afterSeq, limit) as { seq: number; at: string; type: string; data: string }[]).map((r) => ({ seq: r.seq, at: r.at, type: r.type, data: JSON.parse(r.data) as unknown })),
    );
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
