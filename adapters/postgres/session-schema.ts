/**
 * The coding sessions' tables in the PostgreSQL store (seed 000's `pulse_sessions` and
 * `pulse_iterations`, every column the SQLite ones have, and `pulse_agent_processes`), created by `pulse store migrate` in the
 * store's schema. They are versioned on a track of their own (the `session_schema_version` row of
 * `meta`), so that the store's SCHEMA_VERSION and the sessions' move independently and neither
 * renumbers the other.
 *
 * No row-level security: a session is not a workspace's (its id is the workspace of the loop
 * iterations it drives); whoever may use the store may see and steer its sessions, as with the
 * SQLite file. The seed's column types where it names them (progress_log jsonb, files_changed
 * text[]), so the seed's SQL runs on them; ids and timestamps as text, as the SQLite tables keep
 * them.
 */
import type pg from "pg";
import type { PostgresAddress } from "./address.js";
import { PostgresStoreError } from "./errors.js";

export const SESSION_SCHEMA_VERSION = 5;
export const SESSION_VERSION_KEY = "session_schema_version";

function v1(a: PostgresAddress): string {
  const q = (table: string) => `"${a.schema}".${table}`;
  return `
CREATE TABLE ${q("pulse_sessions")} (
  id text PRIMARY KEY, project_name text NOT NULL, goal text NOT NULL, max_iterations integer NOT NULL,
  current_iteration integer NOT NULL, status text NOT NULL, last_signal text, progress_log jsonb NOT NULL,
  anchor_turn_id text, branch_name text, created_by text NOT NULL, total_commits integer NOT NULL,
  total_tokens_used bigint NOT NULL, repo_path text NOT NULL, driver jsonb NOT NULL, context_strategy text NOT NULL,
  total_cost_usd double precision NOT NULL, stop_reason text, status_reason text, control text, runner_pid integer,
  created_at text NOT NULL, updated_at text NOT NULL,
  worktree_path text, base_ref text, base_sha text, verify jsonb,
  -- The order sessions were recorded in: newest first among those created in the same millisecond.
  seq bigint GENERATED ALWAYS AS IDENTITY
);
CREATE INDEX pulse_sessions_status ON ${q("pulse_sessions")} (status, created_at);
CREATE TABLE ${q("pulse_iterations")} (
  id text PRIMARY KEY, session_id text NOT NULL REFERENCES ${q("pulse_sessions")} (id), iteration_number integer NOT NULL,
  inbox_task_id text, task_content text NOT NULL, status text NOT NULL, signal text, output_summary text,
  output_full text, commit_hash text, files_changed text[] NOT NULL, anchor_turn_id text, anchor_strategy text,
  anchor_hint_next text, context_tokens integer NOT NULL, slice_id text, signal_source text, signal_reason text,
  anchor_resolution_ms double precision, anchor_salience double precision, anchor_depth integer, tokens_used bigint NOT NULL,
  cost_usd double precision NOT NULL, error text, gate jsonb, started_at text NOT NULL, finished_at text,
  UNIQUE (session_id, iteration_number)
);
GRANT SELECT, INSERT, UPDATE ON ${q("pulse_sessions")}, ${q("pulse_iterations")} TO "${a.appRole}";
GRANT USAGE ON ALL SEQUENCES IN SCHEMA "${a.schema}" TO "${a.appRole}";`;
}

/** 2: the agent processes sessions have running (what a later pulse's reaper stops after a dead runner). */
function v2(a: PostgresAddress): string {
  const q = (table: string) => `"${a.schema}".${table}`;
  return `
CREATE TABLE ${q("pulse_agent_processes")} (
  session_id text NOT NULL, iteration integer NOT NULL, pid integer NOT NULL, pgid integer NOT NULL,
  start_time bigint NOT NULL, marker text NOT NULL, runner_pid integer NOT NULL, recorded_at text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  PRIMARY KEY (session_id, marker)
);
GRANT SELECT, INSERT, UPDATE, DELETE ON ${q("pulse_agent_processes")} TO "${a.appRole}";
GRANT USAGE ON ALL SEQUENCES IN SCHEMA "${a.schema}" TO "${a.appRole}";`;
}

/** 3: budgets that pause a session (null: the profile's), as in SQLite. */
function v3(a: PostgresAddress): string {
  const q = (table: string) => `"${a.schema}".${table}`;
  return `
ALTER TABLE ${q("pulse_sessions")} ADD COLUMN max_cost_usd double precision, ADD COLUMN max_tokens bigint, ADD COLUMN max_wall_ms bigint;`;
}

/** 4: each session's event stream, append-only, read by seq (as in SQLite). */
function v4(a: PostgresAddress): string {
  const q = (table: string) => `"${a.schema}".${table}`;
  return `
CREATE TABLE ${q("pulse_session_events")} (
  session_id text NOT NULL REFERENCES ${q("pulse_sessions")} (id), seq integer NOT NULL, at text NOT NULL,
  type text NOT NULL, data jsonb NOT NULL,
  PRIMARY KEY (session_id, seq)
);
GRANT SELECT, INSERT ON ${q("pulse_session_events")} TO "${a.appRole}";`;
}

/** 5: each iteration's receipt (as in SQLite). */
function v5(a: PostgresAddress): string {
  return `ALTER TABLE "${a.schema}".pulse_iterations ADD COLUMN receipt jsonb;`;
}

/** Migration n takes the session tables from version n to n + 1. */
export function sessionMigrations(a: PostgresAddress): string[] {
  return [v1(a), v2(a), v3(a), v4(a), v5(a)];
}

/** The session tables' version in a store's schema (0: none yet; the schema must have `meta`). */
export async function sessionSchemaVersion(client: pg.ClientBase | pg.Pool, schema: string): Promise<number> {
  const row = await client.query(`SELECT value FROM "${schema}".meta WHERE key = $1`, [SESSION_VERSION_KEY]);
  return Number(row.rows[0]?.value ?? 0);
}

export function sessionsTooNew(a: PostgresAddress, version: number): PostgresStoreError {
  return new PostgresStoreError("STORE_TOO_NEW", `the session tables of schema ${a.schema} at ${a.display} were written by a newer pulse (session schema version ${version}); this pulse reads session schema versions up to ${SESSION_SCHEMA_VERSION}: upgrade pulse`);
}

/** Brings the session tables up to date, in the migration's transaction, as the tables' owner. */
export async function migrateSessions(client: pg.ClientBase, a: PostgresAddress): Promise<{ from: number; to: number }> {
  const from = await sessionSchemaVersion(client, a.schema);
  if (from > SESSION_SCHEMA_VERSION) throw sessionsTooNew(a, from);
  if (from < SESSION_SCHEMA_VERSION) {
    await client.query(`SET LOCAL ROLE "${a.ownerRole}"`);
    const steps = sessionMigrations(a);
    for (let v = from; v < SESSION_SCHEMA_VERSION; v++) await client.query(steps[v] as string);
    await client.query(`INSERT INTO "${a.schema}".meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`, [SESSION_VERSION_KEY, String(SESSION_SCHEMA_VERSION)]);
    await client.query("RESET ROLE");
  }
  return { from, to: SESSION_SCHEMA_VERSION };
}
