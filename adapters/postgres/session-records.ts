/**
 * Session records in the PostgreSQL store: seed 000's `pulse_sessions` and `pulse_iterations`
 * (session-schema.ts) in the store's schema, worked on as the runtime's role. Each call is one
 * statement, so a runner killed at any point leaves the last committed state, and every process
 * that opens the same store (a runner, `pulse session pause` elsewhere, `pulse serve`) sees the
 * others' writes: pause and abort travel through the `control` column, as on SQLite.
 *
 * The tables are created by `pulse store migrate` (an owner's run), never here: the runtime's
 * role may not create tables, and a store without them is refused in one line saying so.
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
import { StoreError } from "../../src/store/contracts.js";
import { PostgresAgentProcesses } from "./agent-processes.js";
import { PostgresDatabase } from "./database.js";
import { notMigrated, openRecordsDatabase, recordOf, recordsError, rowOf, type Row } from "./record-rows.js";
import { SESSION_SCHEMA_VERSION, sessionSchemaVersion, sessionsTooNew } from "./session-schema.js";

/** Columns kept as jsonb: a JS value is sent as its JSON text (an array would become text[]). */
const JSON_COLUMNS = new Set(["progress_log", "driver", "verify", "gate", "receipt"]);
/** bigint columns, which pg hands back as strings. */
const BIGINT_COLUMNS = new Set(["total_tokens_used", "tokens_used", "max_tokens", "max_wall_ms"]);

const toRow = (record: object, columns: Set<string>) => rowOf(record, (k) => columns.has(k), JSON_COLUMNS, (k) => new SessionRecordsError("INVALID", `no column ${JSON.stringify(k)} in the session records`));
const fromRow = <T>(row: Row): T => recordOf<T>(row, BIGINT_COLUMNS);
const storeError = (display: string, error: unknown): Error => recordsError(display, error, (e) => e instanceof SessionRecordsError);

const SESSION_COLUMNS = Object.keys(newSessionRecord({ id: "", project_name: "", goal: "", max_iterations: 0, repo_path: "", driver: { name: "" }, context_strategy: "none", created_by: "cli" }, ""));
const ITERATION_COLUMNS = Object.keys(newIterationRecord({ id: "", session_id: "", iteration_number: 0, task_content: "" }, ""));
const SESSION_SET = new Set(SESSION_COLUMNS);
const ITERATION_SET = new Set(ITERATION_COLUMNS);


export class PostgresSessionRecords implements SessionRecords {
  private readonly sessions: string;
  private readonly iterationsTable: string;
  private readonly sessionCols = SESSION_COLUMNS.join(", ");
  private readonly iterationCols = ITERATION_COLUMNS.join(", ");

  private constructor(
    private readonly db: PostgresDatabase,
    private readonly now: () => string,
  ) {
    this.sessions = db.table("pulse_sessions");
    this.iterationsTable = db.table("pulse_iterations");
    this.eventsTable = db.table("pulse_session_events");
  }
  private readonly eventsTable: string;

  /**
   * Opens the session tables of the store at `url` (postgres://…?schema=…). Refused in one line
   * (a StoreError) when the server does not answer or the tables are missing, older or newer.
   */
  static async open(url: string, options: { now?: () => string; onNote?: (message: string) => void } = {}): Promise<PostgresSessionRecords> {
    const db = await openRecordsDatabase(url, { version: sessionSchemaVersion, needed: SESSION_SCHEMA_VERSION, tooNew: sessionsTooNew, notMigrated: notMigrated("session tables", SESSION_SCHEMA_VERSION) }, storeError, options.onNote);
    return new PostgresSessionRecords(db, options.now ?? (() => new Date().toISOString()));
  }

  /** The agent process records of these sessions, over the same connections (closed with these). */
  agentProcesses(): PostgresAgentProcesses {
    return new PostgresAgentProcesses(this.db, (fn) => this.run(fn));
  }

  private async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw storeError(this.db.address.display, error);
    }
  }

  private async one(sql: string, params: unknown[]): Promise<Row | undefined> {
    return (await this.db.pool.query(sql, params)).rows[0] as Row | undefined;
  }

  async create(session: NewSession): Promise<SessionRecord> {
    const record = newSessionRecord(session, this.now());
    return this.run(async () => {
      const { cols, values } = toRow(record, SESSION_SET);
      const inserted = await this.db.pool.query(`INSERT INTO ${this.sessions} (${cols.join(", ")}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(", ")}) ON CONFLICT (id) DO NOTHING`, values);
      if (inserted.rowCount === 0) throw new SessionRecordsError("EXISTS", `session ${record.id} already exists`);
      return record;
    });
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    return this.run(async () => {
      const exact = await this.one(`SELECT ${this.sessionCols} FROM ${this.sessions} WHERE id = $1`, [id]);
      if (exact) return fromRow<SessionRecord>(exact);
      // A unique prefix of at least 4 characters, as on SQLite; ambiguous finds nothing rather than a guess.
      if (id.length < 4) return undefined;
      const hits = (await this.db.pool.query(`SELECT ${this.sessionCols} FROM ${this.sessions} WHERE left(id, length($1)) = $1 LIMIT 2`, [id])).rows as Row[];
      return hits.length === 1 ? fromRow<SessionRecord>(hits[0]!) : undefined;
    });
  }

  async list(filter: { status?: SessionStatus } = {}): Promise<SessionRecord[]> {
    return this.run(async () => {
      const rows = (filter.status === undefined
        ? await this.db.pool.query(`SELECT ${this.sessionCols} FROM ${this.sessions} ORDER BY created_at DESC, seq DESC`)
        : await this.db.pool.query(`SELECT ${this.sessionCols} FROM ${this.sessions} WHERE status = $1 ORDER BY created_at DESC, seq DESC`, [filter.status])).rows as Row[];
      return rows.map((r) => fromRow<SessionRecord>(r));
    });
  }

  async update(id: string, patch: SessionPatch): Promise<SessionRecord> {
    return this.run(async () => {
      const { cols, values } = toRow({ ...patch, updated_at: this.now() }, SESSION_SET);
      const sets = cols.map((c, i) => `${c} = $${i + 2}`);
      const row = await this.one(`UPDATE ${this.sessions} SET ${sets.join(", ")} WHERE id = $1 RETURNING ${this.sessionCols}`, [id, ...values]);
      if (!row) throw new SessionRecordsError("NOT_FOUND", `no session ${id}`);
      return fromRow<SessionRecord>(row);
    });
  }

  requestControl(id: string, control: ControlRequest | null): Promise<SessionRecord> {
    return this.update(id, { control });
  }

  async addIteration(iteration: NewIteration): Promise<IterationRecord> {
    const record = newIterationRecord(iteration, this.now());
    return this.run(async () => {
      const { cols, values } = toRow(record, ITERATION_SET);
      try {
        await this.db.pool.query(`INSERT INTO ${this.iterationsTable} (${cols.join(", ")}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(", ")})`, values);
      } catch (error) {
        // The database decides, so two processes racing cannot both add the same iteration.
        const code = (error as { code?: string }).code;
        if (code === "23503") throw new SessionRecordsError("NOT_FOUND", `no session ${record.session_id}`);
        if (code === "23505") throw new SessionRecordsError("EXISTS", `session ${record.session_id} already has iteration ${record.iteration_number} (or id ${record.id})`);
        throw error;
      }
      return record;
    });
  }

  async updateIteration(id: string, patch: IterationPatch): Promise<IterationRecord> {
    return this.run(async () => {
      const { cols, values } = toRow(patch, ITERATION_SET);
      const row =
        cols.length > 0
          ? await this.one(`UPDATE ${this.iterationsTable} SET ${cols.map((c, i) => `${c} = $${i + 2}`).join(", ")} WHERE id = $1 RETURNING ${this.iterationCols}`, [id, ...values])
          : await this.one(`SELECT ${this.iterationCols} FROM ${this.iterationsTable} WHERE id = $1`, [id]);
      if (!row) throw new SessionRecordsError("NOT_FOUND", `no iteration ${id}`);
      return fromRow<IterationRecord>(row);
    });
  }

  async iterations(sessionId: string): Promise<IterationRecord[]> {
    return this.run(async () => ((await this.db.pool.query(`SELECT ${this.iterationCols} FROM ${this.iterationsTable} WHERE session_id = $1 ORDER BY iteration_number`, [sessionId])).rows as Row[]).map((r) => fromRow<IterationRecord>(r)));
  }

  async appendEvents(sessionId: string, events: NewSessionEventRecord[]): Promise<number> {
    return this.run(async () => {
      if (events.length === 0) {
        if (!(await this.one(`SELECT 1 FROM ${this.sessions} WHERE id = $1`, [sessionId]))) throw new SessionRecordsError("NOT_FOUND", `no session ${sessionId}`);
        return Number((await this.one(`SELECT coalesce(max(seq), 0) AS m FROM ${this.eventsTable} WHERE session_id = $1`, [sessionId]))!.m);
      }
      try {
        // One statement numbers the batch on from the last seq; the primary key refuses a second writer's overlap.
        const row = await this.one(
          `WITH ins AS (INSERT INTO ${this.eventsTable} (session_id, seq, at, type, data)
           SELECT $1, base.m + e.n, e.at, e.type, e.data::jsonb
           FROM (SELECT coalesce(max(seq), 0) AS m FROM ${this.eventsTable} WHERE session_id = $1) base,
                unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS e(at, type, data, n)
           RETURNING seq) SELECT max(seq) AS seq FROM ins`,
          [sessionId, events.map((e) => e.at), events.map((e) => e.type), events.map((e) => JSON.stringify(e.data))],
        );
        return Number(row!.seq);
      } catch (error) {
        if ((error as { code?: string }).code === "23503") throw new SessionRecordsError("NOT_FOUND", `no session ${sessionId}`);
        throw error;
      }
    });
  }

  async events(sessionId: string, afterSeq = 0, limit = EVENTS_PAGE): Promise<SessionEventRecord[]> {
    return this.run(async () =>
      ((await this.db.pool.query(`SELECT seq, at, type, data FROM ${this.eventsTable} WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, [sessionId, afterSeq, limit])).rows as SessionEventRecord[]).map((r) => ({ seq: Number(r.seq), at: r.at, type: r.type, data: r.data })),
    );
  }

  async close(): Promise<void> {
    await this.db.close().catch(() => undefined);
  }
}
