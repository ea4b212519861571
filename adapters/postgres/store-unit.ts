/**
 * One UnitOfWork as one PostgreSQL round trip: its statements joined into a single simple-query
 * string, which the server runs as one implicit transaction (all of it, or on any error none of
 * it), with the workspace set first (`set_config(…, true)`: local to that transaction, so a pooled
 * connection never carries a tenant into the next). Values are escaped literals: the simple-query
 * protocol takes no parameters, and one round trip instead of a dozen is what makes a commit fast.
 *
 * The audit events arrive already hashed (chainStep): the host hashes from the chain head it
 * expects, and the unit's first statement, advance_chain (schema.ts), moves the head only if it is
 * still there.
 */
import pg from "pg";
import { canonicalJson } from "../../src/json/canonical-json.js";
import { chainHash } from "../../src/store/audit-chain.js";
import type { MemoryChange, UnitOfWork } from "../../src/store/contracts.js";
import type { AuditEvent } from "../../src/substrates/contracts.js";

export interface ChainHead {
  seq: number;
  hash: string;
}

export interface ChainStep {
  from: ChainHead;
  to: ChainHead;
  links: { seq: number; prev: string; hash: string; event: AuditEvent }[];
}

/** Hashes `events` onto the chain after `head` (throws, changing nothing, on an event that is not JSON). */
export function chainStep(head: ChainHead, events: readonly AuditEvent[]): ChainStep {
  const links: ChainStep["links"] = [];
  let prev = head.hash;
  for (const event of events) {
    const hash = chainHash(prev, event);
    links.push({ seq: head.seq + links.length, prev, hash, event });
    prev = hash;
  }
  return { from: head, to: { seq: head.seq + links.length, hash: prev }, links };
}

const lit = (v: string | null | undefined): string => (v === null || v === undefined ? "NULL" : pg.escapeLiteral(v));
const int = (n: number): string => {
  if (!Number.isSafeInteger(n)) throw new TypeError(`${n} is not an integer`);
  return String(n);
};
/** JSON kept as text, canonical, byte for byte (what a replay returns). */
const json = (v: unknown): string => lit(canonicalJson(v === undefined ? null : v));

export interface UnitSqlOptions {
  /** `"schema".table`. */
  table: (name: string) => string;
  now: string;
  /** The workspace is not yet known to be in the directory. */
  newWorkspace: boolean;
  chain?: ChainStep;
  memory?: { graph: string; rows: readonly MemoryChange[] };
}

export function unitSql(unit: UnitOfWork, o: UnitSqlOptions): string {
  const t = o.table;
  const { loop_id, workspace_id, trace_id } = unit;
  const [loop, ws, trace, now] = [lit(loop_id), lit(workspace_id), lit(trace_id), lit(o.now)];
  const iteration = `loop_id = ${loop} AND workspace_id = ${ws} AND trace_id = ${trace}`;
  const s: string[] = [`SELECT set_config('pulse.workspace', ${ws}, true)`];
  if (o.newWorkspace) s.push(`INSERT INTO ${t("workspaces")} (workspace_id) VALUES (${ws}) ON CONFLICT DO NOTHING`);
  // The chain head's row lock first: every unit of a workspace takes its locks in one order (no
  // deadlocks), and the whole unit is one round trip, so the lock is held only while it executes.
  if (o.chain && o.chain.links.length > 0) {
    const { from, to } = o.chain;
    s.push(`SELECT ${t("advance_chain")}(${ws}, ${int(from.seq)}, ${lit(from.hash)}, ${int(to.seq)}, ${lit(to.hash)})`);
  }
  if (unit.started) {
    const st = unit.started;
    s.push(`INSERT INTO ${t("iterations")} (loop_id, workspace_id, trace_id, number, entry, input, cause, started_at, status) VALUES (${loop}, ${ws}, ${trace}, ${int(st.number)}, ${lit(st.entry)}, ${json(st.input)}, ${st.cause === undefined ? "NULL" : json(st.cause)}, ${lit(st.started_at)}, 'running') ON CONFLICT DO NOTHING`);
  }
  if (unit.phase) {
    const p = unit.phase;
    s.push(`INSERT INTO ${t("phases")} (iteration_id, workspace_id, phase_id, signature, status, output, next, committed_at) SELECT id, workspace_id, ${lit(p.phase_id)}, ${lit(p.signature)}, ${lit(p.status)}, ${p.canonical !== undefined ? lit(p.canonical) : json(p.output)}, ${lit(p.next)}, ${now} FROM ${t("iterations")} WHERE ${iteration}`);
  }
  if (unit.idempotency) {
    const i = unit.idempotency;
    s.push(`SELECT ${t("claim_idempotency")}(${lit(i.workspace_id)}, ${lit(i.signature)}, ${lit(i.canonical)}, ${loop}, ${lit(unit.phase?.phase_id)}, ${trace}, ${now})`);
  }
  if (o.chain && o.chain.links.length > 0) {
    const rows = o.chain.links.map(({ seq, prev, hash, event: e }) => `(${ws}, ${int(seq)}, ${lit(e.event_id)}, ${lit(e.event_type)}, ${lit(e.trace_id)}, ${lit(e.loop_id)}, ${lit(e.phase_id)}, ${int(e.seq)}, ${lit(e.timestamp)}, ${lit(e.signature)}, ${e.data === undefined ? "NULL" : json(e.data)}, ${lit(prev)}, ${lit(hash)})`);
    s.push(`INSERT INTO ${t("audit_events")} (workspace_id, chain_seq, event_id, event_type, trace_id, loop_id, phase_id, seq, timestamp, signature, data, prev_hash, hash) VALUES ${rows.join(", ")}`);
  }
  if (o.memory) {
    const g = lit(o.memory.graph);
    for (const r of o.memory.rows) {
      if (r.value === null) s.push(`DELETE FROM ${t("memory_state")} WHERE graph = ${g} AND workspace_id = ${ws} AND kind = ${lit(r.kind)} AND key = ${lit(r.key)}`);
      else s.push(`INSERT INTO ${t("memory_state")} (graph, workspace_id, kind, key, value) VALUES (${g}, ${ws}, ${lit(r.kind)}, ${lit(r.key)}, ${lit(JSON.stringify(r.value))}) ON CONFLICT (graph, workspace_id, kind, key) DO UPDATE SET value = EXCLUDED.value`);
    }
  }
  for (const e of unit.outbox ?? []) {
    s.push(`INSERT INTO ${t("outbox")} (connection_id, event_id, loop_id, phase_id, workspace_id, trace_id, signature, to_loop, envelope, created_at) VALUES (${lit(e.connection_id)}, ${lit(e.event_id)}, ${loop}, ${lit(unit.phase?.phase_id)}, ${ws}, ${trace}, ${lit(unit.phase?.signature)}, ${lit(e.to_loop)}, ${json(e.envelope)}, ${now}) ON CONFLICT DO NOTHING`);
  }
  if (unit.inbox) s.push(`INSERT INTO ${t("inbox")} (loop_id, workspace_id, event_id, trace_id, received_at) VALUES (${loop}, ${ws}, ${lit(unit.inbox.event_id)}, ${trace}, ${now}) ON CONFLICT DO NOTHING`);
  if (unit.finished) {
    const f = unit.finished;
    s.push(`UPDATE ${t("iterations")} SET status = ${lit(f.status)}, closed = ${f.closed ? "true" : "false"}, error = ${f.error ? json(f.error) : "NULL"}, finished_at = ${now} WHERE ${iteration}`);
  }
  if (unit.counters) {
    s.push(`INSERT INTO ${t("loops")} (loop_id, workspace_id, snapshot, updated_at) VALUES (${loop}, ${ws}, ${json(unit.counters)}, ${now}) ON CONFLICT (loop_id, workspace_id) DO UPDATE SET snapshot = EXCLUDED.snapshot, updated_at = EXCLUDED.updated_at`);
  }
  return s.join(";\n");
}
