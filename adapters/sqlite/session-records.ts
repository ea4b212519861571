/**
 * Session records in SQLite: seed 000's `pulse_sessions` and `pulse_iterations` tables in the
 * shared `.pulse/pulse.db` (the store's file), migrated as component `sessions` of
 * `pulse_schema_versions`. Each call is one statement or one transaction, so a runner killed at
 * any point leaves the last committed state, which the next runner resumes from; several
 * processes (a runner, `pulse session pause`, `pulse serve`) share the file through WAL.
 */
import {
  newIterationRecord,
  newSessionRecord,
  SessionRecordsError,
  type ControlRequest,
  type IterationPatch,
  type IterationRecord,
  type NewIteration,
  type NewSession,
  type SessionPatch,
  type SessionRecord,
  type SessionRecords,
  type SessionStatus,
  EVENTS_PAGE,
  type NewSessionEventRecord,
  type SessionEventRecord,
} from "../../src/coding/session/records.js";
import { VERSION } from "../../src/version.js";
import { openDatabase, storeError, type Database } from "./driver.js";
import { migrateComponent } from "./schema-versions.js";

export const SESSION_MIGRATIONS = [
  `CREATE TABLE pulse_sessions (
    id TEXT PRIMARY KEY, project_name TEXT NOT NULL, goal TEXT NOT NULL, max_iterations INTEGER NOT NULL,
    current_iteration INTEGER NOT NULL, status TEXT NOT NULL, last_signal TEXT, progress_log TEXT NOT NULL,
    anchor_turn_id TEXT, branch_name TEXT, created_by TEXT NOT NULL, total_commits INTEGER NOT NULL,
    total_tokens_used INTEGER NOT NULL, repo_path TEXT NOT NULL, driver TEXT NOT NULL, context_strategy TEXT NOT NULL,
    total_cost_usd REAL NOT NULL, stop_reason TEXT, status_reason TEXT, control TEXT, runner_pid INTEGER,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL
  ) STRICT;
  CREATE INDEX pulse_sessions_status ON pulse_sessions (status, created_at);
  CREATE TABLE pulse_iterations (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES pulse_sessions (id), iteration_number INTEGER NOT NULL,
    inbox_task_id TEXT, task_content TEXT NOT NULL, status TEXT NOT NULL, signal TEXT, output_summary TEXT,
    output_full TEXT, commit_hash TEXT, files_changed TEXT NOT NULL, anchor_turn_id TEXT, anchor_strategy TEXT,
    anchor_hint_next TEXT, context_tokens INTEGER NOT NULL, slice_id TEXT, signal_source TEXT, signal_reason TEXT,
    anchor_resolution_ms REAL, anchor_salience REAL, anchor_depth INTEGER, tokens_used INTEGER NOT NULL,
    cost_usd REAL NOT NULL, error TEXT, started_at TEXT NOT NULL, finished_at TEXT,
    UNIQUE (session_id, iteration_number)
  ) STRICT;`,
  // 1: each session in its own worktree on its own branch (null worktree_path: in the user's checkout).
  `ALTER TABLE pulse_sessions ADD COLUMN worktree_path TEXT;
  ALTER TABLE pulse_sessions ADD COLUMN base_ref TEXT;
  ALTER TABLE pulse_sessions ADD COLUMN base_sha TEXT;`,
  `ALTER TABLE pulse_sessions ADD COLUMN verify TEXT;
  ALTER TABLE pulse_iterations ADD COLUMN gate TEXT;`,
  // 3: budgets that pause a session (null: the profile's).
  `ALTER TABLE pulse_sessions ADD COLUMN max_cost_usd REAL;
  ALTER TABLE pulse_sessions ADD COLUMN max_tokens INTEGER;
  ALTER TABLE pulse_sessions ADD COLUMN max_wall_ms INTEGER;`,
  // 4: each session's event stream, append-only, read by seq from any process (logs --follow --events, REST, MCP).
  `CREATE TABLE pulse_session_events (
    session_id TEXT NOT NULL REFERENCES pulse_sessions (id), seq INTEGER NOT NULL, at TEXT NOT NULL,
    type TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
  ) STRICT;`,
  // 5: each iteration's receipt (model, tokens by kind, dollars, where the price came from).
  `ALTER TABLE pulse_iterations ADD COLUMN receipt TEXT;`,
];

/** Columns holding JSON (arrays, objects) rather than scalars. */
const JSON_COLUMNS = new Set(["progress_log", "driver", "files_changed", "verify", "gate", "receipt"]);

type Row = Record<string, unknown>;

const SESSION_COLUMNS = new Set(Object.keys(newSessionRecord({ id: "", project_name: "", goal: "", max_iterations: 0, repo_path: "", driver: { name: "" }, context_strategy: "none", created_by: "cli" }, "")));
const ITERATION_COLUMNS = new Set(Object.keys(newIterationRecord({ id: "", session_id: "", iteration_number: 0, task_content: "" }, "")));

/** A record as SQL parameters; a key that is no column is a programming error, never SQL. */
function toRow(record: object, columns: Set<string>): Row {
  const row: Row = {};
  for (const [k, v] of Object.entries(record)) {
    if (!columns.has(k)) throw new SessionRecordsError("INVALID", `no column ${JSON.stringify(k)} in the session records`);
    if (v !== undefined) row[k] = JSON_COLUMNS.has(k) ? JSON.stringify(v) : v;
  }
  return row;
}

function fromRow<T>(row: Row): T {
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) out[k] = JSON_COLUMNS.has(k) && typeof v === "string" ? JSON.parse(v) : v;
  return out as T;
}

export class SqliteSessionRecords implements SessionRecords {
  private constructor(
    private readonly db: Database,
    readonly path: string,
    private readonly now: () => string,
  ) {}

  /** Opens (creating and migrating when needed) the session tables of the SQLite file at `path`. */
  static open(path: string, options: { now?: () => string } = {}): SqliteSessionRecords {
    const db = openDatabase(path);
    try {
      migrateComponent(db, path, "sessions", SESSION_MIGRATIONS, `pulse ${VERSION}`);
    } catch (error) {
      db.close();
      throw storeError(path, error);
    }
    return new SqliteSessionRecords(db, path, options.now ?? (() => new Date().toISOString()));
  }

  private run<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof SessionRecordsError) throw error;
      throw storeError(this.path, error);
    }
  }

  async create(session: NewSession): Promise<SessionRecord> {
    const record = newSessionRecord(session, this.now());
    return this.run(() => {
      if (this.db.prepare("SELECT 1 FROM pulse_sessions WHERE id = ?").get(record.id)) throw new SessionRecordsError("EXISTS", `session ${record.id} already exists`);
      const row = toRow(record, SESSION_COLUMNS);
      const cols = Object.keys(row);
      this.db.prepare(`INSERT INTO pulse_sessions (${cols.join(", ")}) VALUES (${cols.map((c) => `@${c}`).join(", ")})`).run(row);
      return record;
    });
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    return this.run(() => {
      const exact = this.db.prepare("SELECT * FROM pulse_sessions WHERE id = ?").get(id) as Row | undefined;
      if (exact) return fromRow<SessionRecord>(exact);
      if (id.length < 4 || /[%_]/.test(id)) return undefined;
      const hits = this.db.prepare("SELECT * FROM pulse_sessions WHERE id LIKE ? LIMIT 2").all(`${id}%`) as Row[];
      return hits.length === 1 ? fromRow<SessionRecord>(hits[0]!) : undefined;
    });
  }

  async list(filter: { status?: SessionStatus } = {}): Promise<SessionRecord[]> {
    return this.run(() => {
      const rows = (filter.status === undefined
        ? this.db.prepare("SELECT * FROM pulse_sessions ORDER BY created_at DESC, rowid DESC").all()
        : this.db.prepare("SELECT * FROM pulse_sessions WHERE status = ? ORDER BY created_at DESC, rowid DESC").all(filter.status)) as Row[];
      return rows.map((r) => fromRow<SessionRecord>(r));
    });
  }

  async update(id: string, patch: SessionPatch): Promise<SessionRecord> {
    return this.run(() => {
      const row = toRow({ ...patch, updated_at: this.now() }, SESSION_COLUMNS);
      const sets = Object.keys(row).map((c) => `${c} = @${c}`);
      const changed = this.db.prepare(`UPDATE pulse_sessions SET ${sets.join(", ")} WHERE id = @__id`).run({ ...row, __id: id });
      if (changed.changes === 0) throw new SessionRecordsError("NOT_FOUND", `no session ${id}`);
      return fromRow<SessionRecord>(this.db.prepare("SELECT * FROM pulse_sessions WHERE id = ?").get(id) as Row);
    });
  }

  requestControl(id: string, control: ControlRequest | null): Promise<SessionRecord> {
    return this.update(id, { control });
  }

  async addIteration(iteration: NewIteration): Promise<IterationRecord> {
    const record = newIterationRecord(iteration, this.now());
    return this.run(() => {
      if (!this.db.prepare("SELECT 1 FROM pulse_sessions WHERE id = ?").get(record.session_id)) throw new SessionRecordsError("NOT_FOUND", `no session ${record.session_id}`);
      if (this.db.prepare("SELECT 1 FROM pulse_iterations WHERE id = ? OR (session_id = ? AND iteration_number = ?)").get(record.id, record.session_id, record.iteration_number)) {
        throw new SessionRecordsError("EXISTS", `session ${record.session_id} already has iteration ${record.iteration_number} (or id ${record.id})`);
      }
      const row = toRow(record, ITERATION_COLUMNS);
      const cols = Object.keys(row);
      this.db.prepare(`INSERT INTO pulse_iterations (${cols.join(", ")}) VALUES (${cols.map((c) => `@${c}`).join(", ")})`).run(row);
      return record;
    });
  }

  async updateIteration(id: string, patch: IterationPatch): Promise<IterationRecord> {
    return this.run(() => {
      const row = toRow(patch, ITERATION_COLUMNS);
      const sets = Object.keys(row).map((c) => `${c} = @${c}`);
      if (sets.length > 0) {
        const changed = this.db.prepare(`UPDATE pulse_iterations SET ${sets.join(", ")} WHERE id = @__id`).run({ ...row, __id: id });
        if (changed.changes === 0) throw new SessionRecordsError("NOT_FOUND", `no iteration ${id}`);
      }
      const found = this.db.prepare("SELECT * FROM pulse_iterations WHERE id = ?").get(id) as Row | undefined;
      if (!found) throw new SessionRecordsError("NOT_FOUND", `no iteration ${id}`);
      return fromRow<IterationRecord>(found);
    });
  }

  async iterations(sessionId: string): Promise<IterationRecord[]> {
    return this.run(() => (this.db.prepare("SELECT * FROM pulse_iterations WHERE session_id = ? ORDER BY iteration_number").all(sessionId) as Row[]).map((r) => fromRow<IterationRecord>(r)));
  }

  async appendEvents(sessionId: string, events: NewSessionEventRecord[]): Promise<number> {
    return this.run(() =>
      this.db.transaction(() => {
        if (!this.db.prepare("SELECT 1 FROM pulse_sessions WHERE id = ?").get(sessionId)) throw new SessionRecordsError("NOT_FOUND", `no session ${sessionId}`);
        let seq = ((this.db.prepare("SELECT max(seq) AS m FROM pulse_session_events WHERE session_id = ?").get(sessionId) as { m: number | null }).m ?? 0);
        const insert = this.db.prepare("INSERT INTO pulse_session_events (session_id, seq, at, type, data) VALUES (?, ?, ?, ?, ?)");
        for (const e of events) insert.run(sessionId, ++seq, e.at, e.type, JSON.stringify(e.data));
        return seq;
      }).immediate(),
    );
  }

  async events(sessionId: string, afterSeq = 0, limit = EVENTS_PAGE): Promise<SessionEventRecord[]> {
    return this.run(() =>
      (this.db.prepare("SELECT seq, at, type, data FROM pulse_session_events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?").all(sessionId, afterSeq, limit) as { seq: number; at: string; type: string; data: string }[]).map((r) => ({ seq: r.seq, at: r.at, type: r.type, data: JSON.parse(r.data) as unknown })),
    );
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
