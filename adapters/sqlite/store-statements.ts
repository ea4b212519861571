/**
 * The SQLite store's statements (adapters/sqlite/store.ts), prepared once per connection, and the
 * row shapes and merges its reads need.
 */
import type { IdempotencyRecord, PhaseCommit } from "../../src/store/contracts.js";
import type { JournalIteration } from "../../src/store/audit-journal.js";
import type { AuditEvent } from "../../src/substrates/contracts.js";
import type { Database, Statement } from "./driver.js";

export interface AuditRow {
  position: number;
  workspace_id: string;
  chain_seq: number;
  event_id: string;
  event_type: string;
  trace_id: string;
  loop_id: string;
  phase_id: string | null;
  seq: number;
  timestamp: string;
  signature: string;
  data: string | null;
  prev_hash: string;
  hash: string;
}

export function eventOf(r: AuditRow): AuditEvent {
  const e: AuditEvent = { event_id: r.event_id, event_type: r.event_type, trace_id: r.trace_id, loop_id: r.loop_id, phase_id: r.phase_id, workspace_id: r.workspace_id, timestamp: r.timestamp, signature: r.signature, seq: r.seq };
  if (r.data !== null) e.data = JSON.parse(r.data) as Record<string, unknown>;
  return e;
}

/**
 * The positions of a trace's events (@trace): those the trace index holds, and those after its
 * watermark, which it does not hold yet.
 */
export const TRACE_POSITIONS = "SELECT position FROM audit_traces WHERE trace_id = @trace UNION ALL SELECT position FROM audit_events WHERE position > (SELECT value FROM store_state WHERE key = 'audit_traces_upto') AND trace_id = @trace";

export function prepareStatements(db: Database): Record<string, Statement> {
  const p = (sql: string) => db.prepare(sql);
  return {
    // phases_after: the iteration's phase rows follow this one (found without an index on iteration_id).
    startIteration: p("INSERT INTO iterations (loop_id, workspace_id, trace_id, number, entry, input, cause, started_at, status, phases_after) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', (SELECT coalesce(max(id), 0) FROM phases)) ON CONFLICT DO NOTHING"),
    iterationId: p("SELECT id, number FROM iterations WHERE loop_id = ? AND workspace_id = ? AND trace_id = ?"),
    phase: p("INSERT INTO phases (iteration_id, phase_id, signature, status, output, next, committed_at, idempotency_key, idempotency_output) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"),
    finish: p("UPDATE iterations SET status = ?, closed = ?, error = ?, finished_at = ? WHERE id = ?"),
    idempotency: p("INSERT INTO idempotency (workspace_id, signature, loop_id, output, trace_id, created_at) VALUES (?, ?, ?, ?, ?, ?)"),
    // A backward scan from the end of the trail down to the checkpoint's position.
    headAfter: p("SELECT chain_seq, hash FROM audit_events WHERE position > ? AND workspace_id = ? ORDER BY position DESC LIMIT 1"),
    checkpoint: p("SELECT next_seq, head, upto FROM audit_chains WHERE workspace_id = ?"),
    setCheckpoint: p("INSERT INTO audit_chains (workspace_id, next_seq, head, upto) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET next_seq = excluded.next_seq, head = excluded.head, upto = excluded.upto WHERE excluded.next_seq >= audit_chains.next_seq AND excluded.upto >= audit_chains.upto"),
    tracesUpTo: p("SELECT value FROM store_state WHERE key = 'audit_traces_upto'"),
    indexTraces: p("INSERT OR IGNORE INTO audit_traces (trace_id, seq, position) SELECT trace_id, seq, position FROM audit_events WHERE position > ?"),
    setTracesUpTo: p("UPDATE store_state SET value = ? WHERE key = 'audit_traces_upto'"),
    lastPosition: p("SELECT coalesce(max(position), 0) AS position FROM audit_events"),
    auditEvent: p("INSERT INTO audit_events (workspace_id, chain_seq, event_id, event_type, trace_id, loop_id, phase_id, seq, timestamp, signature, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
    memoryPut: p("INSERT INTO memory_rows (graph, workspace_id, kind, key, value) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET value = excluded.value"),
    memoryDelete: p("DELETE FROM memory_rows WHERE graph = ? AND workspace_id = ? AND kind = ? AND key = ?"),
    memoryRows: p("SELECT workspace_id, kind, key, value FROM memory_rows WHERE graph = ? ORDER BY id"),
    outbox: p("INSERT INTO outbox (connection_id, event_id, loop_id, workspace_id, trace_id, to_loop, envelope, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"),
    inbox: p("INSERT INTO inbox (loop_id, workspace_id, event_id, trace_id, received_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"),
    counters: p("INSERT INTO loops (loop_id, workspace_id, iterations, started, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET iterations = excluded.iterations, started = excluded.started, updated_at = excluded.updated_at"),
    loadCounters: p("SELECT workspace_id, iterations, started FROM loops WHERE loop_id = ?"),
    // Store schema version 4: `loops` holds the counters up to the watermark of finished
    // iterations; the iterations after it carry the rest (their numbers, and whether one ended).
    countersAfter: p("SELECT workspace_id, max(number) AS iterations, max(status <> 'running') AS started FROM iterations WHERE id > (SELECT value FROM store_state WHERE key = 'iterations_finished_upto') AND +loop_id = ? GROUP BY workspace_id"),
    finishedValue: p("SELECT value FROM store_state WHERE key = 'iterations_finished_upto'"),
    // Folds the counters of iterations the watermark passed (all ended) into `loops`.
    foldCounters: p("INSERT INTO loops (loop_id, workspace_id, iterations, started, updated_at) SELECT loop_id, workspace_id, max(number), 1, ? FROM iterations WHERE id > ? AND id <= ? GROUP BY loop_id, workspace_id ON CONFLICT DO UPDATE SET iterations = max(loops.iterations, excluded.iterations), started = 1, updated_at = excluded.updated_at"),
    // `+loop_id`: a scan of the rows after the watermark, not of the loop's every iteration in its index.
    running: p("SELECT id, workspace_id, trace_id, number, entry, input, cause, phases_after FROM iterations WHERE id > (SELECT value FROM store_state WHERE key = 'iterations_finished_upto') AND +loop_id = ? AND status = 'running' ORDER BY id"),
    // Up to the first iteration still running (a scan from the watermark that stops there).
    finishedUpTo: p("UPDATE store_state SET value = coalesce((SELECT id FROM iterations WHERE id > value AND status = 'running' ORDER BY id LIMIT 1) - 1, (SELECT max(id) FROM iterations), value) WHERE key = 'iterations_finished_upto'"),
    phasesOf: p("SELECT phase_id, signature, status, output, next FROM phases WHERE id > ? AND iteration_id = ? ORDER BY id"),
    auditSeq: p(`SELECT max(seq) AS seq FROM audit_events WHERE position IN (${TRACE_POSITIONS}) AND loop_id = @loop AND workspace_id = @workspace`),
    // Newest first, each source in commit order; read() merges them and keeps each signature's newest.
    phaseIdempotency: p("SELECT i.workspace_id, p.idempotency_key AS signature, coalesce(p.idempotency_output, p.output) AS output, p.committed_at AS at, p.id FROM phases p JOIN iterations i ON i.id = p.iteration_id WHERE p.idempotency_key IS NOT NULL AND i.loop_id = ? ORDER BY p.id DESC"),
    loadIdempotency: p("SELECT workspace_id, signature, output, created_at AS at, id FROM idempotency WHERE loop_id = ? ORDER BY id DESC"),
    received: p("SELECT 1 FROM inbox WHERE loop_id = ? AND workspace_id = ? AND event_id = ?"),
    pending: p("SELECT id, connection_id, event_id, loop_id, workspace_id, trace_id, to_loop, envelope FROM outbox WHERE status = 'pending' ORDER BY id LIMIT ?"),
    settle: p("UPDATE outbox SET status = ?, detail = ?, settled_at = ? WHERE connection_id = ? AND event_id = ? AND status = 'pending'"),
    dataVersion: p("PRAGMA data_version"),
    checkpoints: p("SELECT workspace_id, next_seq, head FROM audit_chains"),
    allEvents: p("SELECT * FROM audit_events ORDER BY position"),
  };
}


export type IdempotencyRow = { workspace_id: string; signature: string; output: string; at: string; id: number };

/** The newest `limit` records of two sources read newest first, each signature once (its newest). */
export function newestIdempotency(sources: IterableIterator<IdempotencyRow>[], limit: number): IdempotencyRecord[] {
  type Row = IdempotencyRow;
  const heads = sources.map((it) => it.next());
  const out: IdempotencyRecord[] = [];
  const seen = new Set<string>();
  try {
    while (out.length < limit) {
      const [a, b] = heads as [IteratorResult<Row>, IteratorResult<Row>];
      if (a.done && b.done) break;
      const i = b.done || (!a.done && a.value.at >= b.value.at) ? 0 : 1;
      const r = (heads[i] as IteratorYieldResult<Row>).value;
      heads[i] = (sources[i] as IterableIterator<Row>).next();
      const key = `${r.workspace_id}\u0000${r.signature}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ workspace_id: r.workspace_id, signature: r.signature, canonical: r.output });
    }
  } finally {
    for (const it of sources) it.return?.();
  }
  return out;
}

/** One iteration's input and committed phases, by its trace (Store.journal). */
export function iterationJournal(db: Database, loopId: string, workspaceId: string, traceId: string): { input: unknown; phases: PhaseCommit[] } | undefined {
  const it = db.prepare("SELECT id, input FROM iterations WHERE loop_id = ? AND workspace_id = ? AND trace_id = ?").get(loopId, workspaceId, traceId) as { id: number; input: string } | undefined;
  if (!it) return undefined;
  const phases = (db.prepare("SELECT phase_id, signature, status, output, next FROM phases WHERE iteration_id = ? ORDER BY id").all(it.id) as { phase_id: string; signature: string; status: PhaseCommit["status"]; output: string; next: string | null }[]).map((p) => ({ ...p, output: JSON.parse(p.output) as unknown }));
  return { input: JSON.parse(it.input) as unknown, phases };
}

/** The journal's iterations with their committed phases (of one workspace, or all), for `pulse audit verify`. */
export function journalIterations(db: Database, workspaceId?: string): JournalIteration[] {
  const byId = new Map<number, JournalIteration>();
  for (const r of db.prepare("SELECT id, workspace_id, loop_id, trace_id, status FROM iterations ORDER BY id").iterate() as IterableIterator<{ id: number; workspace_id: string; loop_id: string; trace_id: string; status: string }>) {
    if (workspaceId !== undefined && r.workspace_id !== workspaceId) continue;
    byId.set(r.id, { workspace_id: r.workspace_id, loop_id: r.loop_id, trace_id: r.trace_id, finished: r.status !== "running", phases: [] });
  }
  // One scan of the phases (they have no index on iteration_id).
  for (const p of db.prepare("SELECT iteration_id, phase_id, status FROM phases ORDER BY id").iterate() as IterableIterator<{ iteration_id: number; phase_id: string; status: string }>) byId.get(p.iteration_id)?.phases.push({ phase_id: p.phase_id, status: p.status });
  return [...byId.values()];
}

/**
 * Every table in the file, for `pulse store info` and `pulse store export`: the store's own
 * (STORE_TABLES order) first, then the others any pulse writes there (the sessions' tables, the
 * schema versions, the watermarks, the trace index), by name; `order` is how to read one in
 * order (a WITHOUT ROWID table has no rowid: its primary key is its order).
 */
export function fileTables(db: Database, first: readonly string[]): { name: string; order: string }[] {
  const all = db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name").all() as { name: string; sql: string }[];
  const rank = (name: string) => (first.includes(name) ? first.indexOf(name) : first.length);
  return all.sort((a, b) => rank(a.name) - rank(b.name)).map((t) => ({ name: t.name, order: /WITHOUT\s+ROWID/i.test(t.sql) ? "" : " ORDER BY rowid" }));
}
