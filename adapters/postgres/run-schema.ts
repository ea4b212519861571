/**
 * The agent's run tables (`pulse_agent_runs`, `pulse_agent_steps`) and the common view of every
 * coding loop's runs (`pulse_runs`, `pulse_run_steps`, as in SQLite: views over the loops' own
 * tables) in the PostgreSQL store, created by `pulse store migrate` after the session and
 * workflow tables, on a version track of their own (the `run_schema_version` row of `meta`).
 * No row-level security, as for sessions and workflows.
 */
import type pg from "pg";
import { PAYLOAD_KEYS, PULSES_DONE, SESSION_ENDED } from "../../src/coding/run-views.js";
import type { PostgresAddress } from "./address.js";
import { PostgresStoreError } from "./errors.js";

export const RUN_SCHEMA_VERSION = 1;
export const RUN_VERSION_KEY = "run_schema_version";

type Spec = { keys: readonly string[]; json: readonly string[]; bool?: readonly string[] };
/** `jsonb_build_object('k', k, …)`: jsonb and boolean columns are JSON already, text[] becomes a JSON array. */
const payload = (alias: string, spec: Spec) => `jsonb_build_object(${spec.keys.map((k) => `'${k}', ${alias}.${k}`).join(", ")})`;
const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(", ");

function v1(a: PostgresAddress): string {
  const q = (table: string) => `"${a.schema}".${table}`;
  return `
CREATE TABLE ${q("pulse_agent_runs")} (
  id text PRIMARY KEY, request text NOT NULL, mode text NOT NULL, workdir text NOT NULL, status text NOT NULL,
  reason text, message text, iteration integer NOT NULL, max_iterations integer NOT NULL, actions_used integer NOT NULL,
  max_actions integer NOT NULL, tokens_used bigint NOT NULL, last_signal text, runner_pid integer, report_path text,
  created_at text NOT NULL, updated_at text NOT NULL, finished_at text
);
CREATE TABLE ${q("pulse_agent_steps")} (
  run_id text NOT NULL REFERENCES ${q("pulse_agent_runs")} (id), number integer NOT NULL, plan_step text, decision jsonb,
  action text, action_run_id text, args jsonb, action_status text, result text, feedback jsonb, advisory_status text,
  advisory_reason text, progress jsonb, tokens_used bigint NOT NULL, started_at text NOT NULL, finished_at text NOT NULL,
  PRIMARY KEY (run_id, number)
);
CREATE VIEW ${q("pulse_runs")} AS
SELECT 'session'::text AS kind, s.id, 'coding.pulse_session'::text AS loop_id, s.status, s.goal, s.current_iteration AS iteration, s.max_iterations,
  s.last_signal AS signal,
  coalesce((SELECT jsonb_agg(i.commit_hash ORDER BY i.iteration_number) FROM ${q("pulse_iterations")} i WHERE i.session_id = s.id AND i.commit_hash IS NOT NULL), '[]'::jsonb) AS commits,
  coalesce((SELECT jsonb_agg(DISTINCT f ORDER BY f) FROM ${q("pulse_iterations")} i, unnest(i.files_changed) f WHERE i.session_id = s.id), '[]'::jsonb) AS files_changed,
  s.total_tokens_used AS tokens, s.total_cost_usd AS cost_usd, s.stop_reason, s.status_reason, s.runner_pid, s.created_at, s.updated_at,
  CASE WHEN s.status IN (${list(SESSION_ENDED)}) THEN s.updated_at END AS finished_at,
  ${payload("s", PAYLOAD_KEYS.session)} AS payload
FROM ${q("pulse_sessions")} s
UNION ALL
SELECT 'workflow', w.id, 'coding.pulsing_workflow', w.status, w.title,
  (SELECT count(*)::integer FROM ${q("pulse_workflow_pulses")} p WHERE p.workflow_id = w.id AND p.status IN (${list(PULSES_DONE)})),
  (SELECT count(*)::integer FROM ${q("pulse_workflow_pulses")} p WHERE p.workflow_id = w.id),
  NULL,
  coalesce((SELECT jsonb_agg(p.checkpoint_commit_sha ORDER BY p.number) FROM ${q("pulse_workflow_pulses")} p WHERE p.workflow_id = w.id AND p.checkpoint_commit_sha IS NOT NULL), '[]'::jsonb),
  coalesce((SELECT jsonb_agg(DISTINCT f ORDER BY f) FROM ${q("pulse_workflow_pulses")} p, jsonb_array_elements_text(p.files_changed) f WHERE p.workflow_id = w.id), '[]'::jsonb),
  w.total_tokens_used, w.total_cost_usd, NULL, w.status_reason, w.runner_pid, w.created_at, w.updated_at, w.finished_at,
  ${payload("w", PAYLOAD_KEYS.workflow)}
FROM ${q("pulse_workflows")} w
UNION ALL
SELECT 'agent', r.id, 'coding.plan_decide_act', r.status, r.request, r.iteration, r.max_iterations, r.last_signal, '[]'::jsonb, '[]'::jsonb,
  r.tokens_used, 0::double precision, r.reason, r.message, r.runner_pid, r.created_at, r.updated_at, r.finished_at,
  ${payload("r", PAYLOAD_KEYS.agent)}
FROM ${q("pulse_agent_runs")} r;
CREATE VIEW ${q("pulse_run_steps")} AS
SELECT 'session'::text AS kind, i.session_id AS run_id, i.iteration_number AS number, i.status, i.task_content AS task, i.signal,
  i.output_summary AS summary, i.commit_hash AS "commit", to_jsonb(i.files_changed) AS files_changed, i.gate, i.tokens_used AS tokens,
  i.cost_usd, i.error, i.started_at, i.finished_at, ${payload("i", PAYLOAD_KEYS.iteration)} AS payload
FROM ${q("pulse_iterations")} i
UNION ALL
SELECT 'workflow', p.workflow_id, p.number, p.status, p.title, NULL, p.summary, p.checkpoint_commit_sha, p.files_changed, p.gate,
  p.tokens_used, p.cost_usd, p.failure_reason, p.started_at, p.ended_at, ${payload("p", PAYLOAD_KEYS.pulse)}
FROM ${q("pulse_workflow_pulses")} p
UNION ALL
SELECT 'agent', t.run_id, t.number, coalesce(t.action_status, t.decision->>'type', 'none'), coalesce(t.plan_step, ''), t.advisory_status,
  t.result, NULL, '[]'::jsonb, NULL, t.tokens_used, 0::double precision, CASE WHEN t.action_status = 'error' THEN t.result END,
  t.started_at, t.finished_at, ${payload("t", PAYLOAD_KEYS.step)}
FROM ${q("pulse_agent_steps")} t;
GRANT SELECT, INSERT, UPDATE ON ${q("pulse_agent_runs")} TO "${a.appRole}";
GRANT SELECT, INSERT ON ${q("pulse_agent_steps")} TO "${a.appRole}";
GRANT SELECT ON ${q("pulse_runs")}, ${q("pulse_run_steps")} TO "${a.appRole}";`;
}

export function runMigrations(a: PostgresAddress): string[] {
  return [v1(a)];
}

export async function runSchemaVersion(client: pg.ClientBase | pg.Pool, schema: string): Promise<number> {
  const row = await client.query(`SELECT value FROM "${schema}".meta WHERE key = $1`, [RUN_VERSION_KEY]);
  return Number(row.rows[0]?.value ?? 0);
}

export function runsTooNew(a: PostgresAddress, version: number): PostgresStoreError {
  return new PostgresStoreError("STORE_TOO_NEW", `the run tables of schema ${a.schema} at ${a.display} were written by a newer pulse (run schema version ${version}); this pulse reads run schema versions up to ${RUN_SCHEMA_VERSION}: upgrade pulse`);
}

export function runsNotMigrated(a: PostgresAddress, version: number): PostgresStoreError {
  return new PostgresStoreError("STORE_NOT_MIGRATED", `schema ${a.schema} at ${a.display} has ${version === 0 ? "no agent run tables or run views" : `run tables at version ${version}, this pulse needs ${RUN_SCHEMA_VERSION}`}: run pulse store migrate --store '${a.storeArg}' with an owner's credentials first`);
}

/** Brings the run tables and views up to date (after the session and workflow tables they read), as the tables' owner. */
export async function migrateRuns(client: pg.ClientBase, a: PostgresAddress): Promise<{ from: number; to: number }> {
  const from = await runSchemaVersion(client, a.schema);
  if (from > RUN_SCHEMA_VERSION) throw runsTooNew(a, from);
  if (from < RUN_SCHEMA_VERSION) {
    await client.query(`SET LOCAL ROLE "${a.ownerRole}"`);
    const steps = runMigrations(a);
    for (let v = from; v < RUN_SCHEMA_VERSION; v++) await client.query(steps[v] as string);
    await client.query(`INSERT INTO "${a.schema}".meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [RUN_VERSION_KEY, String(RUN_SCHEMA_VERSION)]);
    await client.query("RESET ROLE");
  }
  return { from, to: RUN_SCHEMA_VERSION };
}
