/**
 * The pulsing workflow's tables in the PostgreSQL store (`pulse_workflows`, seed 001's
 * `pulse_workflow_pulses`, `pulse_preflight_setups`, `pulse_preflight_baselines`, and the
 * workflows' events), created by `pulse store migrate` in the store's schema, on a version track
 * of their own (the `workflow_schema_version` row of `meta`), as the sessions' tables are. No
 * row-level security, as for sessions: whoever may use the store may see and steer its
 * workflows, as with the SQLite file. Agent processes share the sessions' `pulse_agent_processes`.
 */
import type pg from "pg";
import type { PostgresAddress } from "./address.js";
import { PostgresStoreError } from "./errors.js";

export const WORKFLOW_SCHEMA_VERSION = 1;
export const WORKFLOW_VERSION_KEY = "workflow_schema_version";

function v1(a: PostgresAddress): string {
  const q = (table: string) => `"${a.schema}".${table}`;
  return `
CREATE TABLE ${q("pulse_workflows")} (
  id text PRIMARY KEY, title text NOT NULL, plan_path text, repo_path text NOT NULL, base_ref text NOT NULL,
  base_sha text NOT NULL, base_note text, branch_name text NOT NULL, worktree_path text NOT NULL, merge text, driver jsonb NOT NULL,
  status text NOT NULL, status_reason text, control text, runner_pid integer, turns integer NOT NULL, verify jsonb NOT NULL,
  artifacts jsonb NOT NULL, total_tokens_used bigint NOT NULL, total_cost_usd double precision NOT NULL,
  created_at text NOT NULL, updated_at text NOT NULL, finished_at text,
  seq bigint GENERATED ALWAYS AS IDENTITY
);
CREATE TABLE ${q("pulse_workflow_pulses")} (
  id text PRIMARY KEY, workflow_id text NOT NULL REFERENCES ${q("pulse_workflows")} (id), number integer NOT NULL,
  planned_pulse_id text, title text NOT NULL, description text NOT NULL, status text NOT NULL, initiating_message_id text,
  checkpoint_commit_sha text, summary text, pulse_branch text, worktree_path text, has_unresolved_issues boolean NOT NULL,
  unresolved_issues jsonb NOT NULL, is_recovery_checkpoint boolean NOT NULL, files_changed jsonb NOT NULL,
  turns integer NOT NULL, rejections integer NOT NULL, nudges integer NOT NULL, extensions integer NOT NULL,
  feedback text, gate jsonb, tokens_used bigint NOT NULL, cost_usd double precision NOT NULL,
  created_at text NOT NULL, started_at text, ended_at text, failure_reason text,
  UNIQUE (workflow_id, number)
);
CREATE TABLE ${q("pulse_preflight_setups")} (
  id text PRIMARY KEY, workflow_id text NOT NULL UNIQUE REFERENCES ${q("pulse_workflows")} (id), status text NOT NULL,
  progress_message text, error_message text, summary text, setup_commands jsonb NOT NULL, build_success boolean,
  created_at text NOT NULL, completed_at text
);
CREATE TABLE ${q("pulse_preflight_baselines")} (
  id text PRIMARY KEY, workflow_id text NOT NULL REFERENCES ${q("pulse_workflows")} (id), "issueType" text NOT NULL,
  source text NOT NULL, pattern text NOT NULL, "filePath" text, description text,
  seq bigint GENERATED ALWAYS AS IDENTITY
);
CREATE TABLE ${q("pulse_workflow_events")} (
  workflow_id text NOT NULL REFERENCES ${q("pulse_workflows")} (id), seq integer NOT NULL, at text NOT NULL,
  type text NOT NULL, data jsonb NOT NULL, PRIMARY KEY (workflow_id, seq)
);
GRANT SELECT, INSERT, UPDATE ON ${q("pulse_workflows")}, ${q("pulse_workflow_pulses")}, ${q("pulse_preflight_setups")} TO "${a.appRole}";
GRANT SELECT, INSERT ON ${q("pulse_preflight_baselines")}, ${q("pulse_workflow_events")} TO "${a.appRole}";
GRANT USAGE ON ALL SEQUENCES IN SCHEMA "${a.schema}" TO "${a.appRole}";`;
}

/** Migration n takes the workflow tables from version n to n + 1. */
export function workflowMigrations(a: PostgresAddress): string[] {
  return [v1(a)];
}

export async function workflowSchemaVersion(client: pg.ClientBase | pg.Pool, schema: string): Promise<number> {
  const row = await client.query(`SELECT value FROM "${schema}".meta WHERE key = $1`, [WORKFLOW_VERSION_KEY]);
  return Number(row.rows[0]?.value ?? 0);
}

export function workflowsTooNew(a: PostgresAddress, version: number): PostgresStoreError {
  return new PostgresStoreError("STORE_TOO_NEW", `the workflow tables of schema ${a.schema} at ${a.display} were written by a newer pulse (workflow schema version ${version}); this pulse reads workflow schema versions up to ${WORKFLOW_SCHEMA_VERSION}: upgrade pulse`);
}

/** Brings the workflow tables up to date, in the migration's transaction, as the tables' owner. */
export async function migrateWorkflows(client: pg.ClientBase, a: PostgresAddress): Promise<{ from: number; to: number }> {
  const from = await workflowSchemaVersion(client, a.schema);
  if (from > WORKFLOW_SCHEMA_VERSION) throw workflowsTooNew(a, from);
  if (from < WORKFLOW_SCHEMA_VERSION) {
    await client.query(`SET LOCAL ROLE "${a.ownerRole}"`);
    const steps = workflowMigrations(a);
    for (let v = from; v < WORKFLOW_SCHEMA_VERSION; v++) await client.query(steps[v] as string);
    await client.query(`INSERT INTO "${a.schema}".meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [WORKFLOW_VERSION_KEY, String(WORKFLOW_SCHEMA_VERSION)]);
    await client.query("RESET ROLE");
  }
  return { from, to: WORKFLOW_SCHEMA_VERSION };
}
