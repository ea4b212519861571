/**
 * `pulse store export --jsonl --store postgres://…`: every row of the store's tables (and then of
 * the coding sessions' tables), table by table, as `{ table, row }` (the SQLite store's shape), streamed through a server-side cursor a
 * few hundred rows at a time, never the whole table in memory.
 *
 * One read-only REPEATABLE READ transaction: the export is one snapshot of every workspace, even
 * while hosts write. Row-level security stays on: each workspace of the directory is read under
 * its own setting, one cursor at a time, each closed before the setting changes (a policy reads
 * the setting while the cursor fetches).
 */
import pg from "pg";

/** The tables, in the order exported, and what orders each one's rows. */
const EXPORTED: [table: string, orderBy: string][] = [
  ["workspaces", "workspace_id"],
  ["iterations", "id"],
  ["phases", "id"],
  ["idempotency", "id"],
  ["audit_events", "position"],
  ["audit_chains", "workspace_id"],
  ["loops", "loop_id"],
  ["outbox", "id"],
  ["inbox", "loop_id, event_id"],
  ["memory_state", "id"],
  ["memory_nodes", "graph, node_id"],
  ["memory_edges", "graph, key"],
  ["memory_mutations", "id"],
];

/** The coding sessions' tables (session-schema.ts), after the store's: no workspace, one pass each, when the schema has them. */
const SESSION_TABLES: [table: string, orderBy: string][] = [
  ["pulse_sessions", "seq"],
  ["pulse_iterations", "session_id, iteration_number"],
  ["pulse_agent_processes", "seq"],
  // The pulsing workflow's (workflow-schema.ts).
  ["pulse_workflows", "seq"],
  ["pulse_workflow_pulses", "workflow_id, number"],
  ["pulse_preflight_setups", "workflow_id"],
  ["pulse_preflight_baselines", "seq"],
  ["pulse_workflow_events", "workflow_id, seq"],
  // The agent's runs (run-schema.ts); the views over every loop's tables are not exported.
  ["pulse_agent_runs", "created_at, id"],
  ["pulse_agent_steps", "run_id, number"],
];

/** Rows fetched per round trip. */
const FETCH = 500;

const INT8 = 20;
/** bigint columns (ids, positions, chain seqs) as numbers, like the SQLite store's, while exact. */
const types = {
  getTypeParser: (oid: number, format?: "text" | "binary") => {
    if (oid !== INT8) return pg.types.getTypeParser(oid, format);
    return (v: string) => (Number.isSafeInteger(Number(v)) ? Number(v) : v);
  },
} as pg.CustomTypesConfig;

export async function* exportRows(pool: pg.Pool, table: (name: string) => string): AsyncGenerator<{ table: string; row: Record<string, unknown> }> {
  const client = await pool.connect();
  let open = false;
  try {
    await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    open = true;
    // One table's rows through a cursor, a batch at a time, so a large store never sits in memory.
    async function* rowsOf(name: string, orderBy: string): AsyncGenerator<{ table: string; row: Record<string, unknown> }> {
      await client.query(`DECLARE pulse_export NO SCROLL CURSOR FOR SELECT * FROM ${table(name)} ORDER BY ${orderBy}`);
      for (;;) {
        const batch = await client.query<Record<string, unknown>>({ text: `FETCH ${FETCH} FROM pulse_export`, types });
        for (const row of batch.rows) yield { table: name, row };
        if (batch.rows.length < FETCH) break;
      }
      await client.query("CLOSE pulse_export");
    }
    const workspaces = (await client.query<{ workspace_id: string }>(`SELECT workspace_id FROM ${table("workspaces")} ORDER BY workspace_id`)).rows.map((r) => r.workspace_id);
    for (const [name, orderBy] of EXPORTED) {
      // The directory itself has no row-level security: one pass. Every other table: one per workspace.
      for (const ws of name === "workspaces" ? [undefined] : workspaces) {
        if (ws !== undefined) await client.query("SELECT set_config('pulse.workspace', $1, true)", [ws]);
        yield* rowsOf(name, orderBy);
      }
    }
    for (const [name, orderBy] of SESSION_TABLES) {
      if (!(await client.query("SELECT to_regclass($1) IS NOT NULL AS present", [table(name)])).rows[0]?.present) continue;
      yield* rowsOf(name, orderBy);
    }
    await client.query("COMMIT");
    open = false;
  } finally {
    // A consumer that stopped early (or a failure) ends the transaction, and with it the cursor;
    // a connection that cannot even roll back is dropped, not pooled.
    let broken = false;
    if (open) await client.query("ROLLBACK").catch(() => (broken = true));
    client.release(broken);
  }
}
