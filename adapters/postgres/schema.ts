/**
 * The PostgreSQL store's schema as numbered migrations (`pulse store migrate`). Tables mirror the
 * embedded SQLite store's; on top of them the database itself enforces what the runtime promises:
 *
 *   tenants   every table with a workspace_id has row-level security, ENABLEd and FORCEd, with
 *             the policy workspace_id = current_setting('pulse.workspace', true): a transaction
 *             sees and writes only the workspace it set (SET LOCAL through set_config). Without a
 *             setting it sees nothing (the setting reads '' or NULL, and no row has an empty one).
 *   audit     the runtime's role may only SELECT and INSERT audit events; triggers refuse UPDATE,
 *             DELETE and TRUNCATE for everybody, the tables' owner included
 *   roles     <schema>_owner (NOLOGIN) owns everything; <schema>_app (LOGIN, NOSUPERUSER,
 *             NOBYPASSRLS) is what the runtime works as
 *
 * JSON values are kept as text, byte for byte: an idempotent phase's replay must return exactly
 * what it returned the first time (jsonb would reorder keys).
 */
import type { PostgresAddress } from "./address.js";
import { v5 } from "./schema-memory.js";

/** Tables whose rows belong to one workspace: row-level security applies to each. */
export const TENANT_TABLES = ["iterations", "phases", "idempotency", "audit_events", "audit_chains", "loops", "outbox", "inbox", "memory_nodes", "memory_edges", "memory_state", "memory_mutations"] as const;

/** Table → what the runtime's role may do with it. */
const APP_GRANTS: Record<string, string> = {
  meta: "SELECT",
  iterations: "SELECT, INSERT, UPDATE",
  phases: "SELECT, INSERT",
  idempotency: "SELECT, INSERT",
  audit_events: "SELECT, INSERT",
  audit_chains: "SELECT, INSERT, UPDATE",
  loops: "SELECT, INSERT, UPDATE",
  outbox: "SELECT, INSERT, UPDATE",
  inbox: "SELECT, INSERT",
  documents: "SELECT, INSERT, UPDATE, DELETE",
  memory_nodes: "SELECT, INSERT, UPDATE, DELETE",
  memory_edges: "SELECT, INSERT, UPDATE, DELETE",
  memory_state: "SELECT, INSERT, UPDATE, DELETE",
  memory_mutations: "SELECT, INSERT",
  leases: "SELECT, INSERT, UPDATE",
  ticks: "SELECT, INSERT, UPDATE",
};

const ws = "workspace_id text NOT NULL CHECK (workspace_id <> '')";

function v1(s: string, a: PostgresAddress): string {
  const q = (table: string) => `"${s}".${table}`;
  const tables = `
CREATE TABLE ${q("meta")} (key text PRIMARY KEY, value text NOT NULL);

CREATE TABLE ${q("iterations")} (
  id bigserial PRIMARY KEY, loop_id text NOT NULL, ${ws}, trace_id text NOT NULL,
  number integer NOT NULL, entry text NOT NULL, input text NOT NULL, cause text, agent_id text,
  started_at text NOT NULL, status text NOT NULL, closed boolean NOT NULL DEFAULT false,
  error text, finished_at text, resume text, phases_committed integer NOT NULL DEFAULT 0,
  UNIQUE (trace_id, loop_id, workspace_id)
);
CREATE INDEX iterations_running ON ${q("iterations")} (id) WHERE status = 'running';

CREATE TABLE ${q("phases")} (
  id bigserial PRIMARY KEY, iteration_id bigint NOT NULL REFERENCES ${q("iterations")} (id), ${ws},
  phase_id text NOT NULL, signature text NOT NULL, status text NOT NULL, output text NOT NULL, committed_at text NOT NULL
);
CREATE INDEX phases_by_iteration ON ${q("phases")} (iteration_id);

CREATE TABLE ${q("idempotency")} (
  ${ws}, signature text NOT NULL, output text NOT NULL, loop_id text NOT NULL, phase_id text NOT NULL,
  trace_id text NOT NULL, created_at text NOT NULL, PRIMARY KEY (workspace_id, signature)
);

CREATE TABLE ${q("audit_events")} (
  position bigserial PRIMARY KEY, ${ws}, chain_seq bigint NOT NULL, event_id text NOT NULL,
  event_type text NOT NULL, trace_id text NOT NULL, loop_id text NOT NULL, phase_id text, seq integer NOT NULL,
  timestamp text NOT NULL, signature text NOT NULL, data text, prev_hash text NOT NULL, hash text NOT NULL,
  UNIQUE (workspace_id, chain_seq)
);
CREATE INDEX audit_by_trace ON ${q("audit_events")} (trace_id, seq);
CREATE INDEX audit_by_loop ON ${q("audit_events")} (loop_id, position);

CREATE TABLE ${q("audit_chains")} (${ws} PRIMARY KEY, next_seq bigint NOT NULL, head text NOT NULL);

CREATE TABLE ${q("loops")} (loop_id text NOT NULL, ${ws}, snapshot text NOT NULL, updated_at text NOT NULL, PRIMARY KEY (loop_id, workspace_id));

CREATE TABLE ${q("outbox")} (
  id bigserial PRIMARY KEY, connection_id text NOT NULL, event_id text NOT NULL, loop_id text NOT NULL,
  phase_id text NOT NULL, ${ws}, trace_id text NOT NULL, signature text NOT NULL, to_loop text NOT NULL,
  envelope text NOT NULL, created_at text NOT NULL, status text NOT NULL DEFAULT 'pending', detail text, settled_at text,
  UNIQUE (connection_id, event_id)
);
CREATE INDEX outbox_pending ON ${q("outbox")} (id) WHERE status = 'pending';

CREATE TABLE ${q("inbox")} (loop_id text NOT NULL, event_id text NOT NULL, ${ws}, trace_id text NOT NULL, received_at text NOT NULL, PRIMARY KEY (loop_id, event_id));

CREATE TABLE ${q("documents")} (namespace text NOT NULL, key text NOT NULL, value text NOT NULL, updated_at text NOT NULL, PRIMARY KEY (namespace, key));

CREATE TABLE ${q("memory_nodes")} (graph text NOT NULL, ${ws}, node_id text NOT NULL, record text NOT NULL, PRIMARY KEY (graph, workspace_id, node_id));
CREATE TABLE ${q("memory_edges")} (
  graph text NOT NULL, ${ws}, key text NOT NULL, edge_id text NOT NULL, src text NOT NULL, dst text NOT NULL,
  type text NOT NULL, trace_id text NOT NULL, PRIMARY KEY (graph, workspace_id, key)
);
CREATE TABLE ${q("memory_state")} (graph text NOT NULL, ${ws}, kind text NOT NULL, key text NOT NULL, value text NOT NULL, PRIMARY KEY (graph, workspace_id, kind, key));
CREATE TABLE ${q("memory_mutations")} (
  id bigserial PRIMARY KEY, graph text NOT NULL, ${ws}, event_id text NOT NULL, operation text NOT NULL, trace_id text NOT NULL, ids text NOT NULL
);

-- Fleet leases (src/fleet): which host runs a loop's workspace, until when (the database's clock),
-- and the cadence ticks the fleet has fired. Coordination, not tenant data: no row-level security.
CREATE TABLE ${q("leases")} (
  loop_id text NOT NULL, workspace_id text NOT NULL, holder text NOT NULL, epoch bigint NOT NULL,
  expires_at timestamptz NOT NULL, origin timestamptz NOT NULL, PRIMARY KEY (loop_id, workspace_id)
);
CREATE TABLE ${q("ticks")} (
  loop_id text NOT NULL, workspace_id text NOT NULL, scheduled_at bigint NOT NULL, holder text NOT NULL,
  claimed_at timestamptz NOT NULL DEFAULT clock_timestamp(), finished_at timestamptz, PRIMARY KEY (loop_id, workspace_id, scheduled_at)
);

CREATE FUNCTION ${q("refuse_audit_change")}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit events are append-only (PULSE §7.3): % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON ${q("audit_events")} FOR EACH ROW EXECUTE FUNCTION ${q("refuse_audit_change")}();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON ${q("audit_events")} FOR EACH STATEMENT EXECUTE FUNCTION ${q("refuse_audit_change")}();
`;
  const rls = TENANT_TABLES.map(
    (t) => `ALTER TABLE ${q(t)} ENABLE ROW LEVEL SECURITY;
ALTER TABLE ${q(t)} FORCE ROW LEVEL SECURITY;
CREATE POLICY workspace_isolation ON ${q(t)} USING (workspace_id = current_setting('pulse.workspace', true)) WITH CHECK (workspace_id = current_setting('pulse.workspace', true));`,
  ).join("\n");
  const grants = [
    `REVOKE ALL ON ALL TABLES IN SCHEMA "${s}" FROM PUBLIC;`,
    `REVOKE ALL ON SCHEMA "${s}" FROM PUBLIC;`,
    `GRANT USAGE ON SCHEMA "${s}" TO "${a.appRole}";`,
    `GRANT USAGE ON ALL SEQUENCES IN SCHEMA "${s}" TO "${a.appRole}";`,
    ...Object.entries(APP_GRANTS).map(([t, privileges]) => `GRANT ${privileges} ON ${q(t)} TO "${a.appRole}";`),
  ].join("\n");
  return `${tables}\n${rls}\n${grants}`;
}

/**
 * Version 2: what the Store contract (src/store/contracts.ts, adapters/postgres/store.ts) keeps
 * beyond version 1, and two checks the database makes inside a unit of work's transaction:
 *
 *   workspaces        the directory of workspaces that hold rows (names only, no row-level
 *                     security, like leases): host-wide reads (interrupted iterations, pending
 *                     signals, `pulse audit`) visit each workspace under its own setting
 *   claim_idempotency INSERT … ON CONFLICT DO NOTHING; a signature another unit committed first
 *                     aborts this unit (SQLSTATE PU001), so its side effects never land twice
 *   advance_chain     moves a workspace's audit chain head from the head the host hashed from,
 *                     or aborts the unit (PU002) when another writer moved it first
 */
function v2(s: string, a: PostgresAddress): string {
  const q = (table: string) => `"${s}".${table}`;
  const backfilled = ["iterations", "idempotency", "audit_chains", "loops", "outbox", "inbox", "memory_state"];
  return `
ALTER TABLE ${q("phases")} ADD COLUMN next text;
ALTER TABLE ${q("idempotency")} ALTER COLUMN phase_id DROP NOT NULL, ADD COLUMN id bigserial;
CREATE INDEX idempotency_by_loop ON ${q("idempotency")} (loop_id, id);
CREATE INDEX iterations_running_by_loop ON ${q("iterations")} (loop_id, id) WHERE status = 'running';
ALTER TABLE ${q("outbox")} ALTER COLUMN phase_id DROP NOT NULL, ALTER COLUMN signature DROP NOT NULL,
  DROP CONSTRAINT outbox_connection_id_event_id_key, ADD CONSTRAINT outbox_once UNIQUE (workspace_id, connection_id, event_id);
ALTER TABLE ${q("inbox")} DROP CONSTRAINT inbox_pkey, ADD PRIMARY KEY (loop_id, workspace_id, event_id);
ALTER TABLE ${q("memory_state")} ADD COLUMN id bigserial;
CREATE INDEX memory_state_by_graph ON ${q("memory_state")} (graph, id);

CREATE TABLE ${q("workspaces")} (workspace_id text PRIMARY KEY CHECK (workspace_id <> ''), first_seen timestamptz NOT NULL DEFAULT now());
${backfilled.map((t) => `ALTER TABLE ${q(t)} NO FORCE ROW LEVEL SECURITY;
INSERT INTO ${q("workspaces")} (workspace_id) SELECT DISTINCT workspace_id FROM ${q(t)} ON CONFLICT DO NOTHING;
ALTER TABLE ${q(t)} FORCE ROW LEVEL SECURITY;`).join("\n")}

CREATE FUNCTION ${q("claim_idempotency")}(p_ws text, p_sig text, p_output text, p_loop text, p_phase text, p_trace text, p_at text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO ${q("idempotency")} (workspace_id, signature, output, loop_id, phase_id, trace_id, created_at) VALUES (p_ws, p_sig, p_output, p_loop, p_phase, p_trace, p_at) ON CONFLICT DO NOTHING;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'phase signature % of workspace % was committed first by another unit (another host ran it): this one is not committed, so its side effects do not land twice', p_sig, p_ws USING ERRCODE = 'PU001';
  END IF;
END $$;

CREATE FUNCTION ${q("advance_chain")}(p_ws text, p_from_seq bigint, p_from_head text, p_to_seq bigint, p_to_head text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF p_from_seq = 0 THEN
    INSERT INTO ${q("audit_chains")} AS c (workspace_id, next_seq, head) VALUES (p_ws, p_to_seq, p_to_head)
      ON CONFLICT (workspace_id) DO UPDATE SET next_seq = EXCLUDED.next_seq, head = EXCLUDED.head WHERE c.next_seq = 0;
  ELSE
    UPDATE ${q("audit_chains")} SET next_seq = p_to_seq, head = p_to_head WHERE workspace_id = p_ws AND next_seq = p_from_seq AND head = p_from_head;
  END IF;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'the audit chain of workspace % moved on since event %', p_ws, p_from_seq USING ERRCODE = 'PU002';
  END IF;
END $$;

REVOKE ALL ON ${q("workspaces")} FROM PUBLIC;
GRANT SELECT, INSERT ON ${q("workspaces")} TO "${a.appRole}";
GRANT USAGE ON ALL SEQUENCES IN SCHEMA "${s}" TO "${a.appRole}";
REVOKE ALL ON FUNCTION ${q("claim_idempotency")}(text, text, text, text, text, text, text), ${q("advance_chain")}(text, bigint, text, bigint, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ${q("claim_idempotency")}(text, text, text, text, text, text, text), ${q("advance_chain")}(text, bigint, text, bigint, text) TO "${a.appRole}";
`;
}

/**
 * Version 3: commit_units, a batch of units of work of one workspace (store-batch.ts) in one
 * call: one round trip, no BEGIN or COMMIT of its own (the call is its own transaction, or part
 * of the caller's), one statement per table for the whole batch, planned once per connection.
 *
 *   SECURITY INVOKER  it runs as the runtime's role, under row-level security: it sets the
 *                     workspace itself (set_config(…, true), local to the transaction) and every
 *                     row it writes is checked against that setting by the tables' policies
 *   the chain         advance_chain's check first, as a single unit did (the head's row lock
 *                     before any other row: one lock order, no deadlocks)
 *   claims            INSERT … ON CONFLICT DO NOTHING for every idempotency record of the batch;
 *                     fewer inserted than sent (another unit, another host, committed one first;
 *                     or the batch claims one twice) aborts the whole batch with PU001, and the
 *                     host sends its units again one by one, so only the unit that lost is refused
 *
 * p is one jsonb object with an array of rows per table (absent when empty); `n` orders a table's
 * rows as the units came, so serial ids (phases, audit positions, memory rows) follow the units.
 * Rows that name an existing row (a phase's iteration, an iteration's end, a memory row deleted)
 * find it by its unique key, one index lookup per row (LATERAL, or a loop): the plan is cached,
 * and a join planned while the table looked small would scan the whole table at every call.
 */
function v3(s: string, a: PostgresAddress): string {
  const q = (table: string) => `"${s}".${table}`;
  const rows = (key: string, columns: string) => `jsonb_to_recordset(p->'${key}') AS x(${columns})`;
  const signature = "text, boolean, bigint, text, bigint, text, text, jsonb";
  return `
CREATE FUNCTION ${q("commit_units")}(p_ws text, p_new_ws boolean, p_from_seq bigint, p_from_head text, p_to_seq bigint, p_to_head text, p_now text, p jsonb)
RETURNS void LANGUAGE plpgsql SECURITY INVOKER AS $$
DECLARE
  r record;
  v_claimed text[];
  v_lost text;
BEGIN
  PERFORM set_config('pulse.workspace', p_ws, true);
  IF p_new_ws THEN
    INSERT INTO ${q("workspaces")} (workspace_id) VALUES (p_ws) ON CONFLICT DO NOTHING;
  END IF;
  -- advance_chain's check, inlined (a nested call costs more than the statement)
  IF p_to_seq IS NOT NULL THEN
    IF p_from_seq = 0 THEN
      INSERT INTO ${q("audit_chains")} AS c (workspace_id, next_seq, head) VALUES (p_ws, p_to_seq, p_to_head)
        ON CONFLICT (workspace_id) DO UPDATE SET next_seq = EXCLUDED.next_seq, head = EXCLUDED.head WHERE c.next_seq = 0;
    ELSE
      UPDATE ${q("audit_chains")} SET next_seq = p_to_seq, head = p_to_head WHERE workspace_id = p_ws AND next_seq = p_from_seq AND head = p_from_head;
    END IF;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'the audit chain of workspace % moved on since event %', p_ws, p_from_seq USING ERRCODE = 'PU002';
    END IF;
  END IF;
  IF p ? 'started' THEN
    INSERT INTO ${q("iterations")} (loop_id, workspace_id, trace_id, number, entry, input, cause, started_at, status)
      SELECT x.loop_id, p_ws, x.trace_id, x.number, x.entry, x.input, x.cause, x.started_at, 'running'
      FROM ${rows("started", "n int, loop_id text, trace_id text, number int, entry text, input text, cause text, started_at text")} ORDER BY x.n
      ON CONFLICT DO NOTHING;
  END IF;
  IF p ? 'phases' THEN
    INSERT INTO ${q("phases")} (iteration_id, workspace_id, phase_id, signature, status, output, next, committed_at)
      SELECT i.id, p_ws, x.phase_id, x.signature, x.status, x.output, x.next, p_now
      FROM ${rows("phases", "n int, loop_id text, trace_id text, phase_id text, signature text, status text, output text, next text")}
      CROSS JOIN LATERAL (SELECT id FROM ${q("iterations")} WHERE trace_id = x.trace_id AND loop_id = x.loop_id AND workspace_id = p_ws LIMIT 1) i
      ORDER BY x.n;
  END IF;
  IF p ? 'claims' THEN
    WITH ins AS (
      INSERT INTO ${q("idempotency")} (workspace_id, signature, output, loop_id, phase_id, trace_id, created_at)
        SELECT p_ws, x.signature, x.output, x.loop_id, x.phase_id, x.trace_id, p_now
        FROM ${rows("claims", "n int, signature text, output text, loop_id text, phase_id text, trace_id text")} ORDER BY x.n
        ON CONFLICT DO NOTHING RETURNING signature)
    SELECT array_agg(signature) INTO v_claimed FROM ins;
    IF coalesce(cardinality(v_claimed), 0) < jsonb_array_length(p->'claims') THEN
      SELECT x.signature INTO v_lost FROM ${rows("claims", "n int, signature text")}
        WHERE v_claimed IS NULL OR NOT x.signature = ANY (v_claimed) ORDER BY x.n LIMIT 1;
      RAISE EXCEPTION 'phase signature % of workspace % was committed first by another unit (another host ran it): this one is not committed, so its side effects do not land twice', coalesce(v_lost, '(claimed twice in one batch)'), p_ws USING ERRCODE = 'PU001';
    END IF;
  END IF;
  IF p ? 'audit' THEN
    INSERT INTO ${q("audit_events")} (workspace_id, chain_seq, event_id, event_type, trace_id, loop_id, phase_id, seq, timestamp, signature, data, prev_hash, hash)
      SELECT p_ws, x.chain_seq, x.event_id, x.event_type, x.trace_id, x.loop_id, x.phase_id, x.seq, x.timestamp, x.signature, x.data, x.prev_hash, x.hash
      FROM ${rows("audit", "chain_seq bigint, event_id text, event_type text, trace_id text, loop_id text, phase_id text, seq int, timestamp text, signature text, data text, prev_hash text, hash text")} ORDER BY x.chain_seq;
  END IF;
  IF p ? 'forget' THEN
    FOR r IN SELECT * FROM ${rows("forget", "graph text, kind text, key text")} LOOP
      DELETE FROM ${q("memory_state")} WHERE graph = r.graph AND workspace_id = p_ws AND kind = r.kind AND key = r.key;
    END LOOP;
  END IF;
  IF p ? 'memory' THEN
    INSERT INTO ${q("memory_state")} (graph, workspace_id, kind, key, value)
      SELECT x.graph, p_ws, x.kind, x.key, x.value FROM ${rows("memory", "n int, graph text, kind text, key text, value text")} ORDER BY x.n
      ON CONFLICT (graph, workspace_id, kind, key) DO UPDATE SET value = EXCLUDED.value;
  END IF;
  IF p ? 'outbox' THEN
    INSERT INTO ${q("outbox")} (connection_id, event_id, loop_id, phase_id, workspace_id, trace_id, signature, to_loop, envelope, created_at)
      SELECT x.connection_id, x.event_id, x.loop_id, x.phase_id, p_ws, x.trace_id, x.signature, x.to_loop, x.envelope, p_now
      FROM ${rows("outbox", "n int, connection_id text, event_id text, loop_id text, phase_id text, trace_id text, signature text, to_loop text, envelope text")} ORDER BY x.n
      ON CONFLICT DO NOTHING;
  END IF;
  IF p ? 'inbox' THEN
    INSERT INTO ${q("inbox")} (loop_id, workspace_id, event_id, trace_id, received_at)
      SELECT x.loop_id, p_ws, x.event_id, x.trace_id, p_now FROM ${rows("inbox", "n int, loop_id text, event_id text, trace_id text")} ORDER BY x.n
      ON CONFLICT DO NOTHING;
  END IF;
  IF p ? 'finished' THEN
    FOR r IN SELECT * FROM ${rows("finished", "loop_id text, trace_id text, status text, closed boolean, error text")} LOOP
      UPDATE ${q("iterations")} SET status = r.status, closed = r.closed, error = r.error, finished_at = p_now
        WHERE trace_id = r.trace_id AND loop_id = r.loop_id AND workspace_id = p_ws;
    END LOOP;
  END IF;
  IF p ? 'counters' THEN
    INSERT INTO ${q("loops")} (loop_id, workspace_id, snapshot, updated_at)
      SELECT x.loop_id, p_ws, x.snapshot, p_now FROM ${rows("counters", "loop_id text, snapshot text")}
      ON CONFLICT (loop_id, workspace_id) DO UPDATE SET snapshot = EXCLUDED.snapshot, updated_at = EXCLUDED.updated_at;
  END IF;
END $$;

REVOKE ALL ON FUNCTION ${q("commit_units")}(${signature}) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION ${q("commit_units")}(${signature}) TO "${a.appRole}";
`;
}

/**
 * Version 4: commit_units again (version 3's body, CREATE OR REPLACE), with two additions for a
 * fleet (src/fleet):
 *
 *   ticks     the unit that ends an iteration of a periodic tick (its recorded cause `{cadence:
 *             "periodic", scheduled_at}`) also marks that tick finished, in the same transaction:
 *             a host killed before its own finishTick round trip leaves no tick to run again
 *   fences    `p.fences` names the leases (loop, holder, epoch) the batch's units are committed
 *             under; a lease row that names another holder or epoch aborts the batch (PU003;
 *             the host sends its units again one by one, so only the fenced unit is refused).
 *             The row is locked FOR SHARE until the commit: a takeover (an UPDATE of the row)
 *             waits for it, and the new holder then reads what it committed
 */
function v4(s: string): string {
  const v3Body = v3(s, { appRole: "" } as PostgresAddress).split("\nREVOKE ALL ON FUNCTION")[0]!;
  const finished = `      UPDATE ${`"${s}".iterations`} SET status = r.status, closed = r.closed, error = r.error, finished_at = p_now
        WHERE trace_id = r.trace_id AND loop_id = r.loop_id AND workspace_id = p_ws;
    END LOOP;`;
  if (!v3Body.includes(finished)) throw new Error("schema.ts: version 3's commit_units changed; version 4 must follow it");
  const marked = `      UPDATE ${`"${s}".iterations`} SET status = r.status, closed = r.closed, error = r.error, finished_at = p_now
        WHERE trace_id = r.trace_id AND loop_id = r.loop_id AND workspace_id = p_ws
        RETURNING cause INTO v_cause;
      -- The tick of a periodic iteration is finished with it (a cause that is not such a tick: nothing).
      IF v_cause IS NOT NULL AND v_cause LIKE '{%' THEN
        v_tick := v_cause::jsonb;
        IF v_tick->>'cadence' = 'periodic' AND coalesce(v_tick->>'scheduled_at', '') ~ '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d{1,3})?Z$' THEN
          UPDATE ${`"${s}".ticks`} SET finished_at = clock_timestamp()
            WHERE loop_id = r.loop_id AND workspace_id = p_ws AND finished_at IS NULL
              AND scheduled_at = round(extract(epoch FROM (v_tick->>'scheduled_at')::timestamptz) * 1000)::bigint;
        END IF;
      END IF;
    END LOOP;`;
  const opening = `  IF p_new_ws THEN`;
  const fenced = `  -- The fleet's fence: each unit's lease must still name its holder and epoch (locked until
  -- commit, so a takeover waits for this transaction and then reads what it committed).
  IF p ? 'fences' THEN
    FOR r IN SELECT * FROM jsonb_to_recordset(p->'fences') AS x(loop_id text, holder text, epoch bigint) LOOP
      PERFORM 1 FROM "${s}".leases WHERE loop_id = r.loop_id AND workspace_id = p_ws AND holder = r.holder AND epoch = r.epoch FOR SHARE;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'loop % of workspace % is no longer held by % at lease epoch %: another host of the fleet took it over, so this unit is not committed', r.loop_id, p_ws, r.holder, r.epoch USING ERRCODE = 'PU003';
      END IF;
    END LOOP;
  END IF;
${opening}`;
  if (!v3Body.includes(opening)) throw new Error("schema.ts: version 3's commit_units changed; version 4 must follow it");
  return v3Body
    .replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION")
    .replace(opening, () => fenced)
    .replace("  v_lost text;\n", "  v_lost text;\n  v_cause text;\n  v_tick jsonb;\n")
    .replace(finished, () => marked);
}

/**
 * Version 6: the chain heads (`audit_chains`) are as append-only as the events: a head only moves
 * forward (a greater next_seq, or the same one and hash), and is never deleted or truncated. A
 * head moved back by hand would hide events cut from the end of its chain from verify.
 */
function v6(s: string): string {
  return `
CREATE FUNCTION "${s}".refuse_head_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.workspace_id = OLD.workspace_id AND (NEW.next_seq > OLD.next_seq OR (NEW.next_seq = OLD.next_seq AND NEW.head = OLD.head)) THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'audit chain heads only move forward (PULSE §7.3): % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER audit_chains_forward_only BEFORE UPDATE OR DELETE ON "${s}".audit_chains FOR EACH ROW EXECUTE FUNCTION "${s}".refuse_head_change();
CREATE TRIGGER audit_chains_no_truncate BEFORE TRUNCATE ON "${s}".audit_chains FOR EACH STATEMENT EXECUTE FUNCTION "${s}".refuse_head_change();
`;
}

/** Migration n takes the schema from version n-1 to n. */
export function migrations(a: PostgresAddress): string[] {
  return [v1(a.schema, a), v2(a.schema, a), v3(a.schema, a), v4(a.schema), v5(a.schema, a, v4(a.schema)), v6(a.schema)];
}

export const SCHEMA_VERSION = 6;
