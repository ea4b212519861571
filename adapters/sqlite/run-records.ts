/**
 * The common view of every coding loop's runs in SQLite: two SQL views, `pulse_runs` and
 * `pulse_run_steps`, over the loops' own tables (seed 000's `pulse_sessions` /
 * `pulse_iterations`, the workflows' `pulse_workflows` / `pulse_workflow_pulses`, the agent's
 * `pulse_agent_runs` / `pulse_agent_steps`), which keep every column and are written by each
 * loop as before. Views, not a table every loop writes: nothing to keep in step, and any SQL
 * tool reads them. Migrated as component `run_views` (after the loops' tables, which opening
 * creates when missing); `pulse store export` copies tables, never views.
 */
import { existsSync } from "node:fs";
import { byNewest, shownRun, type RunFilter, type RunKind, type RunRecords, type RunStepView, type RunView } from "../../src/coding/run-records.js";
import { PAYLOAD_KEYS, PULSES_DONE, SESSION_ENDED } from "../../src/coding/run-views.js";
import { VERSION } from "../../src/version.js";
import { migrateAgentRuns } from "./agent-runs.js";
import { openDatabase, storeError, type Database } from "./driver.js";
import { migrateComponent } from "./schema-versions.js";
import { SESSION_MIGRATIONS } from "./session-records.js";
import { WORKFLOW_MIGRATIONS } from "./workflow-records.js";

type Spec = { keys: readonly string[]; json: readonly string[]; bool?: readonly string[] };

/** `json_object('k', k, …)` of a payload's keys, JSON columns as JSON, booleans as booleans. */
function payload(alias: string, spec: Spec): string {
  const value = (k: string) => (spec.json.includes(k) ? `json(${alias}.${k})` : spec.bool?.includes(k) ? `json(CASE WHEN ${alias}.${k} THEN 'true' ELSE 'false' END)` : `${alias}.${k}`);
  return `json_object(${spec.keys.map((k) => `'${k}', ${value(k)}`).join(", ")})`;
}

const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(", ");

export const RUN_VIEW_MIGRATIONS = [
  `CREATE VIEW pulse_runs AS
  SELECT 'session' AS kind, s.id, 'coding.pulse_session' AS loop_id, s.status, s.goal, s.current_iteration AS iteration, s.max_iterations,
    s.last_signal AS signal,
    (SELECT json_group_array(i.commit_hash ORDER BY i.iteration_number) FROM pulse_iterations i WHERE i.session_id = s.id AND i.commit_hash IS NOT NULL) AS commits,
    (SELECT json_group_array(DISTINCT f.value ORDER BY f.value) FROM pulse_iterations i, json_each(i.files_changed) f WHERE i.session_id = s.id) AS files_changed,
    s.total_tokens_used AS tokens, s.total_cost_usd AS cost_usd, s.stop_reason, s.status_reason, s.runner_pid, s.created_at, s.updated_at,
    CASE WHEN s.status IN (${list(SESSION_ENDED)}) THEN s.updated_at END AS finished_at,
    ${payload("s", PAYLOAD_KEYS.session)} AS payload
  FROM pulse_sessions s
  UNION ALL
  SELECT 'workflow', w.id, 'coding.pulsing_workflow', w.status, w.title,
    (SELECT count(*) FROM pulse_workflow_pulses p WHERE p.workflow_id = w.id AND p.status IN (${list(PULSES_DONE)})),
    (SELECT count(*) FROM pulse_workflow_pulses p WHERE p.workflow_id = w.id),
    NULL,
    (SELECT json_group_array(p.checkpoint_commit_sha ORDER BY p.number) FROM pulse_workflow_pulses p WHERE p.workflow_id = w.id AND p.checkpoint_commit_sha IS NOT NULL),
    (SELECT json_group_array(DISTINCT f.value ORDER BY f.value) FROM pulse_workflow_pulses p, json_each(p.files_changed) f WHERE p.workflow_id = w.id),
    w.total_tokens_used, w.total_cost_usd, NULL, w.status_reason, w.runner_pid, w.created_at, w.updated_at, w.finished_at,
    ${payload("w", PAYLOAD_KEYS.workflow)}
  FROM pulse_workflows w
  UNION ALL
  SELECT 'agent', a.id, 'coding.plan_decide_act', a.status, a.request, a.iteration, a.max_iterations, a.last_signal, '[]', '[]',
    a.tokens_used, 0.0, a.reason, a.message, a.runner_pid, a.created_at, a.updated_at, a.finished_at,
    ${payload("a", PAYLOAD_KEYS.agent)}
  FROM pulse_agent_runs a;
  CREATE VIEW pulse_run_steps AS
  SELECT 'session' AS kind, i.session_id AS run_id, i.iteration_number AS number, i.status, i.task_content AS task, i.signal,
    i.output_summary AS summary, i.commit_hash AS "commit", i.files_changed, i.gate, i.tokens_used AS tokens, i.cost_usd, i.error,
    i.started_at, i.finished_at, ${payload("i", PAYLOAD_KEYS.iteration)} AS payload
  FROM pulse_iterations i
  UNION ALL
  SELECT 'workflow', p.workflow_id, p.number, p.status, p.title, NULL, p.summary, p.checkpoint_commit_sha, p.files_changed, p.gate,
    p.tokens_used, p.cost_usd, p.failure_reason, p.started_at, p.ended_at, ${payload("p", PAYLOAD_KEYS.pulse)}
  FROM pulse_workflow_pulses p
  UNION ALL
  SELECT 'agent', t.run_id, t.number, coalesce(t.action_status, json_extract(t.decision, '$.type'), 'none'), coalesce(t.plan_step, ''),
    t.advisory_status, t.result, NULL, '[]', NULL, t.tokens_used, 0.0, CASE WHEN t.action_status = 'error' THEN t.result END,
    t.started_at, t.finished_at, ${payload("t", PAYLOAD_KEYS.step)}
  FROM pulse_agent_steps t;`,
];

type Row = Record<string, unknown>;
const JSON_FIELDS = ["commits", "files_changed", "gate", "payload"];

function viewOf<T>(row: Row): T {
  const out: Row = { ...row };
  for (const k of JSON_FIELDS) if (typeof out[k] === "string") out[k] = JSON.parse(out[k] as string);
  if ("commits" in out && out.commits === null) out.commits = [];
  if ("files_changed" in out && out.files_changed === null) out.files_changed = [];
  return out as T;
}

/** Creates (when missing) every loop's tables and the views over them in an open file. */
export function migrateRunViews(db: Database, path: string): void {
  const by = `pulse ${VERSION}`;
  migrateComponent(db, path, "sessions", SESSION_MIGRATIONS, by);
  migrateComponent(db, path, "workflows", WORKFLOW_MIGRATIONS, by);
  migrateAgentRuns(db, path);
  migrateComponent(db, path, "run_views", RUN_VIEW_MIGRATIONS, by);
}

export class SqliteRunRecords implements RunRecords {
  private constructor(
    private readonly db: Database | undefined,
    readonly path: string,
  ) {}

  /**
   * Opens the views of the file at `path`. A file that does not exist holds no runs: nothing is
   * created for a reader (`pulse runs` on a fresh checkout lists nothing and writes nothing).
   */
  static open(path: string): SqliteRunRecords {
    if (!existsSync(path)) return new SqliteRunRecords(undefined, path);
    const db = openDatabase(path);
    try {
      migrateRunViews(db, path);
    } catch (error) {
      db.close();
      throw storeError(path, error);
    }
    return new SqliteRunRecords(db, path);
  }

  private rows(sql: string, ...params: unknown[]): Row[] {
    if (!this.db) return [];
    try {
      return this.db.prepare(sql).all(...params) as Row[];
    } catch (error) {
      throw storeError(this.path, error);
    }
  }

  async list(filter: RunFilter = {}): Promise<RunView[]> {
    const rows = filter.kind === undefined ? this.rows("SELECT * FROM pulse_runs ORDER BY created_at DESC, id DESC") : this.rows("SELECT * FROM pulse_runs WHERE kind = ? ORDER BY created_at DESC, id DESC", filter.kind);
    return rows.map((r) => viewOf<RunView>(r)).sort(byNewest).map(shownRun);
  }

  async get(kind: RunKind, id: string): Promise<RunView | undefined> {
    const [exact] = this.rows("SELECT * FROM pulse_runs WHERE kind = ? AND id = ?", kind, id);
    if (exact) return shownRun(viewOf<RunView>(exact));
    if (id.length < 4 || /[%_]/.test(id)) return undefined;
    const hits = this.rows("SELECT * FROM pulse_runs WHERE kind = ? AND id LIKE ? LIMIT 2", kind, `${id}%`);
    return hits.length === 1 ? shownRun(viewOf<RunView>(hits[0]!)) : undefined;
  }

  async steps(kind: RunKind, runId: string): Promise<RunStepView[]> {
    return this.rows("SELECT * FROM pulse_run_steps WHERE kind = ? AND run_id = ? ORDER BY number", kind, runId).map((r) => viewOf<RunStepView>(r));
  }

  async close(): Promise<void> {
    if (this.db?.open) this.db.close();
  }
}
