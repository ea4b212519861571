/**
 * The agent's run records and the common view of every coding loop's runs in the PostgreSQL
 * store (run-schema.ts), worked on as the runtime's role, over one pool. The tables and views
 * are created by `pulse store migrate`, never here: a store without them is refused in one line.
 */
import { AGENT_JSON_COLUMNS, AGENT_RUN_COLUMNS, AGENT_STEP_COLUMNS, AgentRunRecordsError, newAgentRunRecord, type AgentRunPatch, type AgentRunRecord, type AgentRunRecords, type AgentStepRecord, type NewAgentRun } from "../../src/coding/agent/run-records.js";
import { byNewest, shownRun, type RunFilter, type RunKind, type RunRecords, type RunStepView, type RunView } from "../../src/coding/run-records.js";
import { PostgresAgentProcesses } from "./agent-processes.js";
import { PostgresDatabase } from "./database.js";
import { openRecordsDatabase, recordOf, recordsError, rowOf, type Row } from "./record-rows.js";
import { RUN_SCHEMA_VERSION, runSchemaVersion, runsNotMigrated, runsTooNew } from "./run-schema.js";

const BIGINT = new Set(["tokens_used", "tokens"]);
const placeholders = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `$${i + from}`).join(", ");
const toRow = (record: object, columns: readonly string[]) => rowOf(record, (k) => columns.includes(k), AGENT_JSON_COLUMNS, (k) => new AgentRunRecordsError("INVALID", `no column ${JSON.stringify(k)} in the agent run records`));

/** One pool for the agent run tables and the run views of a store. */
export class PostgresRuns {
  private constructor(readonly db: PostgresDatabase) {}

  static async open(url: string, options: { onNote?: (message: string) => void } = {}): Promise<PostgresRuns> {
    const wrap = (display: string, error: unknown) => recordsError(display, error, (e) => e instanceof AgentRunRecordsError);
    return new PostgresRuns(await openRecordsDatabase(url, { version: runSchemaVersion, needed: RUN_SCHEMA_VERSION, tooNew: runsTooNew, notMigrated: runsNotMigrated }, wrap, options.onNote));
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw recordsError(this.db.address.display, error, (e) => e instanceof AgentRunRecordsError);
    }
  }

  async rows(sql: string, params: unknown[]): Promise<Row[]> {
    return this.run(async () => (await this.db.pool.query(sql, params)).rows as Row[]);
  }

  agentRuns(): PostgresAgentRuns {
    return new PostgresAgentRuns(this);
  }

  /** The agent's action process records (the table sessions and workflows share). */
  agentProcesses(): PostgresAgentProcesses {
    return new PostgresAgentProcesses(this.db, (fn) => this.run(fn));
  }

  runRecords(): PostgresRunRecords {
    return new PostgresRunRecords(this);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

export class PostgresAgentRuns implements AgentRunRecords {
  constructor(private readonly pg: PostgresRuns) {}

  static async open(url: string, options: { onNote?: (message: string) => void } = {}): Promise<PostgresAgentRuns> {
    return new PostgresAgentRuns(await PostgresRuns.open(url, options));
  }

  private get t() {
    return { runs: this.pg.db.table("pulse_agent_runs"), steps: this.pg.db.table("pulse_agent_steps") };
  }

  async create(run: NewAgentRun): Promise<AgentRunRecord> {
    const record = newAgentRunRecord(run, new Date().toISOString());
    const { cols, values } = toRow(record, AGENT_RUN_COLUMNS);
    const inserted = await this.pg.run(() => this.pg.db.pool.query(`INSERT INTO ${this.t.runs} (${cols.join(", ")}) VALUES (${placeholders(cols.length)}) ON CONFLICT (id) DO NOTHING`, values));
    if (inserted.rowCount === 0) throw new AgentRunRecordsError("EXISTS", `agent run ${record.id} already exists`);
    return record;
  }

  async get(id: string): Promise<AgentRunRecord | undefined> {
    const [exact] = await this.pg.rows(`SELECT ${AGENT_RUN_COLUMNS.join(", ")} FROM ${this.t.runs} WHERE id = $1`, [id]);
    if (exact) return recordOf<AgentRunRecord>(exact, BIGINT);
    if (id.length < 4) return undefined;
    const hits = await this.pg.rows(`SELECT ${AGENT_RUN_COLUMNS.join(", ")} FROM ${this.t.runs} WHERE left(id, length($1)) = $1 LIMIT 2`, [id]);
    return hits.length === 1 ? recordOf<AgentRunRecord>(hits[0]!, BIGINT) : undefined;
  }

  async list(): Promise<AgentRunRecord[]> {
    return (await this.pg.rows(`SELECT ${AGENT_RUN_COLUMNS.join(", ")} FROM ${this.t.runs} ORDER BY created_at DESC, id DESC`, [])).map((r) => recordOf<AgentRunRecord>(r, BIGINT));
  }

  async update(id: string, patch: AgentRunPatch): Promise<AgentRunRecord> {
    const { cols, values } = toRow({ ...patch, updated_at: new Date().toISOString() }, AGENT_RUN_COLUMNS);
    const [row] = await this.pg.rows(`UPDATE ${this.t.runs} SET ${cols.map((c, i) => `${c} = $${i + 2}`).join(", ")} WHERE id = $1 RETURNING ${AGENT_RUN_COLUMNS.join(", ")}`, [id, ...values]);
    if (!row) throw new AgentRunRecordsError("NOT_FOUND", `no agent run ${id}`);
    return recordOf<AgentRunRecord>(row, BIGINT);
  }

  async addStep(step: AgentStepRecord): Promise<AgentStepRecord> {
    const [known] = await this.pg.rows(`SELECT 1 FROM ${this.t.runs} WHERE id = $1`, [step.run_id]);
    if (!known) throw new AgentRunRecordsError("NOT_FOUND", `no agent run ${step.run_id}`);
    const { cols, values } = toRow(step, AGENT_STEP_COLUMNS);
    const inserted = await this.pg.run(() => this.pg.db.pool.query(`INSERT INTO ${this.t.steps} (${cols.join(", ")}) VALUES (${placeholders(cols.length)}) ON CONFLICT (run_id, number) DO NOTHING`, values));
    if (inserted.rowCount === 0) throw new AgentRunRecordsError("EXISTS", `agent run ${step.run_id} already has step ${step.number}`);
    return step;
  }

  async steps(runId: string): Promise<AgentStepRecord[]> {
    return (await this.pg.rows(`SELECT ${AGENT_STEP_COLUMNS.join(", ")} FROM ${this.t.steps} WHERE run_id = $1 ORDER BY number`, [runId])).map((r) => recordOf<AgentStepRecord>(r, BIGINT));
  }

  close(): Promise<void> {
    return this.pg.close();
  }
}

export class PostgresRunRecords implements RunRecords {
  constructor(private readonly pg: PostgresRuns) {}

  static async open(url: string, options: { onNote?: (message: string) => void } = {}): Promise<PostgresRunRecords> {
    return new PostgresRunRecords(await PostgresRuns.open(url, options));
  }

  private get views() {
    return { runs: this.pg.db.table("pulse_runs"), steps: this.pg.db.table("pulse_run_steps") };
  }

  async list(filter: RunFilter = {}): Promise<RunView[]> {
    const rows = filter.kind === undefined ? await this.pg.rows(`SELECT * FROM ${this.views.runs}`, []) : await this.pg.rows(`SELECT * FROM ${this.views.runs} WHERE kind = $1`, [filter.kind]);
    return rows.map((r) => recordOf<RunView>(r, BIGINT)).sort(byNewest).map(shownRun);
  }

  async get(kind: RunKind, id: string): Promise<RunView | undefined> {
    const [exact] = await this.pg.rows(`SELECT * FROM ${this.views.runs} WHERE kind = $1 AND id = $2`, [kind, id]);
    if (exact) return shownRun(recordOf<RunView>(exact, BIGINT));
    if (id.length < 4) return undefined;
    const hits = await this.pg.rows(`SELECT * FROM ${this.views.runs} WHERE kind = $1 AND left(id, length($2)) = $2 LIMIT 2`, [kind, id]);
    return hits.length === 1 ? shownRun(recordOf<RunView>(hits[0]!, BIGINT)) : undefined;
  }

  async steps(kind: RunKind, runId: string): Promise<RunStepView[]> {
    return (await this.pg.rows(`SELECT * FROM ${this.views.steps} WHERE kind = $1 AND run_id = $2 ORDER BY number`, [kind, runId])).map((r) => recordOf<RunStepView>(r, BIGINT));
  }

  close(): Promise<void> {
    return this.pg.close();
  }
}
