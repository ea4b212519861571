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

/** Migration n takes the schema from version n-1 to n. */
export function migrations(a: PostgresAddress): string[] {
  return [v1(a.schema, a), v2(a.schema, a)];
}

export const SCHEMA_VERSION = 2;
