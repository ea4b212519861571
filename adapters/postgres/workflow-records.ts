/**
 * The pulsing workflow's records in the PostgreSQL store (workflow-schema.ts), worked on as the
 * runtime's role. Each call is one statement or one transaction, so a runner killed at any point
 * leaves the last committed state, and every process that opens the same store (a runner, `pulse
 * workflow stop` elsewhere) sees the others' writes. The tables are created by `pulse store
 * migrate`, never here: a store without them is refused in one line saying so.
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
import { PostgresAgentProcesses } from "./agent-processes.js";
import { PostgresDatabase } from "./database.js";
import { notMigrated, openRecordsDatabase, recordOf, recordsError, rowOf, type Row } from "./record-rows.js";
import { WORKFLOW_SCHEMA_VERSION, workflowSchemaVersion, workflowsTooNew } from "./workflow-schema.js";

const JSON_COLUMNS = new Set(["driver", "verify", "artifacts", "unresolved_issues", "files_changed", "gate", "setup_commands", "data"]);
const BIGINT_COLUMNS = new Set(["total_tokens_used", "tokens_used"]);
const toRow = (record: object, columns: readonly string[]) => rowOf(record, (k) => columns.includes(k), JSON_COLUMNS, (k) => new WorkflowRecordsError("INVALID", `no column ${JSON.stringify(k)} in the workflow records`));
const fromRow = <T>(row: Row): T => recordOf<T>(row, BIGINT_COLUMNS);
const storeError = (display: string, error: unknown): Error => recordsError(display, error, (e) => e instanceof WorkflowRecordsError);

const WORKFLOW_COLUMNS = Object.keys(newWorkflowRecord({ id: "", title: "", plan_path: null, repo_path: "", base_ref: "", base_sha: "", base_note: null, branch_name: "", worktree_path: "", driver: { name: "" }, verify: { checks: [] } }, ""));
const PULSE_COLUMNS = Object.keys(newPulseRecord({ id: "", workflow_id: "", number: 0, title: "", description: "" }, ""));
const PREFLIGHT_COLUMNS = ["id", "workflow_id", "status", "progress_message", "error_message", "summary", "setup_commands", "build_success", "created_at", "completed_at"];


const placeholders = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `$${i + from}`).join(", ");

export class PostgresWorkflowRecords implements WorkflowRecords {
  private readonly t: (name: string) => string;

  private constructor(private readonly db: PostgresDatabase) {
    this.t = (name) => db.table(name);
  }

  /** Opens the workflow tables of the store at `url`; refused in one line when they are missing, older or newer. */
  static async open(url: string, options: { onNote?: (message: string) => void } = {}): Promise<PostgresWorkflowRecords> {
    return new PostgresWorkflowRecords(await openRecordsDatabase(url, { version: workflowSchemaVersion, needed: WORKFLOW_SCHEMA_VERSION, tooNew: workflowsTooNew, notMigrated: notMigrated("workflow tables", WORKFLOW_SCHEMA_VERSION) }, storeError, options.onNote));
  }

  /** The agent process records (shared with sessions), over the same connections. */
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

  private async rows(sql: string, params: unknown[]): Promise<Row[]> {
    return (await this.db.pool.query(sql, params)).rows as Row[];
  }

  async create(workflow: NewWorkflow, pulses: Omit<NewPulse, "workflow_id">[]): Promise<WorkflowRecord> {
    const now = new Date().toISOString();
    const record = newWorkflowRecord(workflow, now);
    return this.run(async () => {
      const client = await this.db.pool.connect();
      try {
        await client.query("BEGIN");
        const w = toRow(record, WORKFLOW_COLUMNS);
        const inserted = await client.query(`INSERT INTO ${this.t("pulse_workflows")} (${w.cols.join(", ")}) VALUES (${placeholders(w.cols.length)}) ON CONFLICT (id) DO NOTHING`, w.values);
        if (inserted.rowCount === 0) throw new WorkflowRecordsError("EXISTS", `workflow ${record.id} already exists`);
        for (const p of pulses) {
          const r = toRow(newPulseRecord({ ...p, workflow_id: record.id }, now), PULSE_COLUMNS);
          await client.query(`INSERT INTO ${this.t("pulse_workflow_pulses")} (${r.cols.join(", ")}) VALUES (${placeholders(r.cols.length)})`, r.values);
        }
        await client.query("COMMIT");
        return record;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    });
  }

  async get(id: string): Promise<WorkflowRecord | undefined> {
    return this.run(async () => {
      const cols = WORKFLOW_COLUMNS.join(", ");
      const [exact] = await this.rows(`SELECT ${cols} FROM ${this.t("pulse_workflows")} WHERE id = $1`, [id]);
      if (exact) return fromRow<WorkflowRecord>(exact);
      if (id.length < 4) return undefined;
      const hits = await this.rows(`SELECT ${cols} FROM ${this.t("pulse_workflows")} WHERE left(id, length($1)) = $1 LIMIT 2`, [id]);
      return hits.length === 1 ? fromRow<WorkflowRecord>(hits[0]!) : undefined;
    });
  }

  async list(): Promise<WorkflowRecord[]> {
    return this.run(async () => (await this.rows(`SELECT ${WORKFLOW_COLUMNS.join(", ")} FROM ${this.t("pulse_workflows")} ORDER BY created_at DESC, seq DESC`, [])).map((r) => fromRow<WorkflowRecord>(r)));
  }

  async update(id: string, patch: WorkflowPatch): Promise<WorkflowRecord> {
    return this.run(async () => {
      const { cols, values } = toRow({ ...patch, updated_at: new Date().toISOString() }, WORKFLOW_COLUMNS);
      const [row] = await this.rows(`UPDATE ${this.t("pulse_workflows")} SET ${cols.map((c, i) => `${c} = $${i + 2}`).join(", ")} WHERE id = $1 RETURNING ${WORKFLOW_COLUMNS.join(", ")}`, [id, ...values]);
      if (!row) throw new WorkflowRecordsError("NOT_FOUND", `no workflow ${id}`);
      return fromRow<WorkflowRecord>(row);
    });
  }

  async pulses(workflowId: string): Promise<PulseRecord[]> {
    return this.run(async () => (await this.rows(`SELECT ${PULSE_COLUMNS.join(", ")} FROM ${this.t("pulse_workflow_pulses")} WHERE workflow_id = $1 ORDER BY number`, [workflowId])).map((r) => fromRow<PulseRecord>(r)));
  }

  async updatePulse(id: string, patch: PulsePatch): Promise<PulseRecord> {
    return this.run(async () => {
      const { cols, values } = toRow(patch, PULSE_COLUMNS);
      const [row] = cols.length > 0
        ? await this.rows(`UPDATE ${this.t("pulse_workflow_pulses")} SET ${cols.map((c, i) => `${c} = $${i + 2}`).join(", ")} WHERE id = $1 RETURNING ${PULSE_COLUMNS.join(", ")}`, [id, ...values])
        : await this.rows(`SELECT ${PULSE_COLUMNS.join(", ")} FROM ${this.t("pulse_workflow_pulses")} WHERE id = $1`, [id]);
      if (!row) throw new WorkflowRecordsError("NOT_FOUND", `no pulse ${id}`);
      return fromRow<PulseRecord>(row);
    });
  }

  async preflight(workflowId: string): Promise<PreflightSetup | undefined> {
    return this.run(async () => {
      const [row] = await this.rows(`SELECT ${PREFLIGHT_COLUMNS.join(", ")} FROM ${this.t("pulse_preflight_setups")} WHERE workflow_id = $1`, [workflowId]);
      return row ? fromRow<PreflightSetup>(row) : undefined;
    });
  }

  async putPreflight(setup: PreflightSetup): Promise<PreflightSetup> {
    return this.run(async () => {
      const { cols, values } = toRow(setup, PREFLIGHT_COLUMNS);
      await this.db.pool.query(`INSERT INTO ${this.t("pulse_preflight_setups")} (${cols.join(", ")}) VALUES (${placeholders(cols.length)}) ON CONFLICT (workflow_id) DO UPDATE SET ${cols.filter((c) => c !== "workflow_id").map((c) => `${c} = EXCLUDED.${c}`).join(", ")}`, values);
      return setup;
    });
  }

  async addBaselines(baselines: PreflightBaseline[]): Promise<void> {
    await this.run(async () => {
      for (const b of baselines) {
        await this.db.pool.query(`INSERT INTO ${this.t("pulse_preflight_baselines")} (id, workflow_id, "issueType", source, pattern, "filePath", description) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [b.id, b.workflow_id, b.issueType, b.source, b.pattern, b.filePath ?? null, b.description ?? null]);
      }
    });
  }

  async baselines(workflowId: string): Promise<PreflightBaseline[]> {
    const rows = await this.run(() => this.rows(`SELECT id, workflow_id, "issueType", source, pattern, "filePath", description FROM ${this.t("pulse_preflight_baselines")} WHERE workflow_id = $1 ORDER BY seq`, [workflowId]));
    return rows.map((r) => {
      const b: PreflightBaseline = { id: r.id as string, workflow_id: r.workflow_id as string, issueType: r.issueType as PreflightBaseline["issueType"], source: r.source as PreflightBaseline["source"], pattern: r.pattern as string };
      if (r.filePath !== null) b.filePath = r.filePath as string;
      if (r.description !== null) b.description = r.description as string;
      return b;
    });
  }

  async appendEvents(workflowId: string, events: Omit<WorkflowEventRecord, "seq">[]): Promise<number> {
    return this.run(async () => {
      const client = await this.db.pool.connect();
      try {
        await client.query("BEGIN");
        // One writer per workflow (its runner); the lock keeps two appends from taking one seq.
        await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`pulse_workflow_events:${workflowId}`]);
        let seq = Number((await client.query(`SELECT coalesce(max(seq), 0) AS m FROM ${this.t("pulse_workflow_events")} WHERE workflow_id = $1`, [workflowId])).rows[0]?.m ?? 0);
        for (const e of events) await client.query(`INSERT INTO ${this.t("pulse_workflow_events")} (workflow_id, seq, at, type, data) VALUES ($1, $2, $3, $4, $5)`, [workflowId, ++seq, e.at, e.type, JSON.stringify(e.data)]);
        await client.query("COMMIT");
        return seq;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    });
  }

  async events(workflowId: string, afterSeq = 0, limit = 500): Promise<WorkflowEventRecord[]> {
    return this.run(async () => (await this.rows(`SELECT seq, at, type, data FROM ${this.t("pulse_workflow_events")} WHERE workflow_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, [workflowId, afterSeq, limit])).map((r) => ({ seq: Number(r.seq), at: r.at as string, type: r.type as string, data: r.data })));
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
