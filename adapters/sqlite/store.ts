/**
 * The embedded durable Store: one SQLite file (better-sqlite3, WAL, synchronous=NORMAL). Each
 * UnitOfWork is one IMMEDIATE transaction, written synchronously, so no other write can come
 * between its rows; the audit chain's head is read inside it, so two processes on one file still
 * extend each workspace's chain one after the other.
 *
 * Memory graphs live in memory (adapters/memory) and are loaded from their rows when first
 * asked for; a committed memory transaction's rows are written with the unit that names it.
 */
import { statSync } from "node:fs";
import { canonicalJson } from "../../src/json/canonical-json.js";
import { chainHash, GENESIS, verifyChain, type ChainLink } from "../../src/store/audit-chain.js";
import type { AuditFilter, AuditPage, ChainReport, IdempotencyRecord, InterruptedIteration, LoopCounters, MemoryChange, PendingSignal, PhaseCommit, Store, StoreInfo, UnitOfWork } from "../../src/store/contracts.js";
import type { AuditEvent, AuditSubstrate, MemorySubstrate } from "../../src/substrates/contracts.js";
import { InMemoryMemory } from "../memory/memory.js";
import { StoreAudit } from "../shared/store-audit.js";
import { openDatabase, storeError, type Database, type Statement } from "./driver.js";
import { componentVersion, migrateComponent } from "./schema-versions.js";
import { STORE_MIGRATIONS, STORE_TABLES } from "./store-schema.js";
import { StoreError } from "../../src/store/contracts.js";

export const STORE_COMPONENT = "store";
export const STORE_SCHEMA_VERSION = STORE_MIGRATIONS.length;
const WRITTEN_BY = "pulse 0.1.0";

interface AuditRow {
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

function eventOf(r: AuditRow): AuditEvent {
  const e: AuditEvent = { event_id: r.event_id, event_type: r.event_type, trace_id: r.trace_id, loop_id: r.loop_id, phase_id: r.phase_id, workspace_id: r.workspace_id, timestamp: r.timestamp, signature: r.signature, seq: r.seq };
  if (r.data !== null) e.data = JSON.parse(r.data) as Record<string, unknown>;
  return e;
}

/** A file opened only to read: it must hold the store's tables, at a version this pulse knows. */
function checkReadable(db: Database, path: string): void {
  const version = componentVersion(db, STORE_COMPONENT);
  if (version === 0) throw new StoreError("STORE_MISSING", `${path}: holds no pulse store (pulse run creates one; --store names another)`);
  if (version > STORE_MIGRATIONS.length) throw new StoreError("STORE_TOO_NEW", `${path}: its store tables are at schema version ${version}, written by a newer pulse; this pulse knows store schema versions up to ${STORE_MIGRATIONS.length}: upgrade pulse`);
}

function json(value: unknown): string {
  return canonicalJson(value === undefined ? null : value);
}

export class SqliteStore implements Store {
  readonly durable = true;
  readonly description: string;
  readonly audit: AuditSubstrate;
  private readonly db: Database;
  private readonly s: Record<string, Statement>;
  private readonly graphs = new Map<string, InMemoryMemory>();
  private readonly graphOf = new Map<MemorySubstrate, string>();
  /** Rows of committed memory transactions awaiting their unit, by graph, workspace and tx id. */
  private readonly staged = new Map<string, MemoryChange[]>();
  private readonly writeUnit: (unit: UnitOfWork) => void;
  /**
   * Each workspace's chain head as this connection last wrote it, valid while SQLite's
   * data_version is `headsAt`: it moves only when another connection commits to the file, which
   * then sends the next unit back to the heads in the file.
   */
  private readonly heads = new Map<string, { next_seq: number; head: string }>();
  private headsAt = -1;
  /** Journal row ids of iterations this store saw start and not yet finish. */
  private readonly running = new Map<string, number>();

  constructor(
    readonly path: string,
    options: { readonly?: boolean; display?: string } = {},
  ) {
    this.description = `sqlite ${options.display ?? path}`;
    this.db = openDatabase(path, options);
    try {
      if (!options.readonly) migrateComponent(this.db, path, STORE_COMPONENT, STORE_MIGRATIONS, WRITTEN_BY);
      else checkReadable(this.db, path);
      this.s = this.prepare();
    } catch (error) {
      this.db.close();
      throw storeError(path, error);
    }
    this.audit = new StoreAudit(this);
    this.writeUnit = this.db.transaction((unit: UnitOfWork) => this.write(unit)).immediate;
  }

  private prepare(): Record<string, Statement> {
    const p = (sql: string) => this.db.prepare(sql);
    return {
      startIteration: p("INSERT INTO iterations (loop_id, workspace_id, trace_id, number, entry, input, cause, started_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running') ON CONFLICT DO NOTHING"),
      iterationId: p("SELECT id FROM iterations WHERE loop_id = ? AND workspace_id = ? AND trace_id = ?"),
      phase: p("INSERT INTO phases (iteration_id, phase_id, signature, status, output, next, committed_at) VALUES (?, ?, ?, ?, ?, ?, ?)"),
      finish: p("UPDATE iterations SET status = ?, closed = ?, error = ?, finished_at = ? WHERE id = ?"),
      idempotency: p("INSERT INTO idempotency (workspace_id, signature, loop_id, output, trace_id, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET output = excluded.output, trace_id = excluded.trace_id, created_at = excluded.created_at"),
      head: p("SELECT next_seq, head FROM audit_chains WHERE workspace_id = ?"),
      setHead: p("INSERT INTO audit_chains (workspace_id, next_seq, head) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET next_seq = excluded.next_seq, head = excluded.head"),
      auditEvent: p("INSERT INTO audit_events (workspace_id, chain_seq, event_id, event_type, trace_id, loop_id, phase_id, seq, timestamp, signature, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
      memoryPut: p("INSERT INTO memory_rows (graph, workspace_id, kind, key, value) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET value = excluded.value"),
      memoryDelete: p("DELETE FROM memory_rows WHERE graph = ? AND workspace_id = ? AND kind = ? AND key = ?"),
      memoryRows: p("SELECT workspace_id, kind, key, value FROM memory_rows WHERE graph = ? ORDER BY id"),
      outbox: p("INSERT INTO outbox (connection_id, event_id, loop_id, workspace_id, trace_id, to_loop, envelope, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"),
      inbox: p("INSERT INTO inbox (loop_id, workspace_id, event_id, trace_id, received_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"),
      counters: p("INSERT INTO loops (loop_id, workspace_id, iterations, started, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET iterations = excluded.iterations, started = excluded.started, updated_at = excluded.updated_at"),
      loadCounters: p("SELECT workspace_id, iterations, started FROM loops WHERE loop_id = ?"),
      running: p("SELECT id, workspace_id, trace_id, number, entry, input, cause FROM iterations WHERE loop_id = ? AND status = 'running' ORDER BY id"),
      phasesOf: p("SELECT phase_id, signature, status, output, next FROM phases WHERE iteration_id = ? ORDER BY id"),
      auditSeq: p("SELECT max(seq) AS seq FROM audit_events WHERE trace_id = ? AND loop_id = ? AND workspace_id = ?"),
      loadIdempotency: p("SELECT workspace_id, signature, output FROM idempotency WHERE loop_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?"),
      received: p("SELECT 1 FROM inbox WHERE loop_id = ? AND workspace_id = ? AND event_id = ?"),
      pending: p("SELECT id, connection_id, event_id, loop_id, workspace_id, trace_id, to_loop, envelope FROM outbox WHERE status = 'pending' ORDER BY id LIMIT ?"),
      settle: p("UPDATE outbox SET status = ?, detail = ?, settled_at = ? WHERE connection_id = ? AND event_id = ? AND status = 'pending'"),
      dataVersion: p("PRAGMA data_version"),
      chains: p("SELECT workspace_id, next_seq, head FROM audit_chains ORDER BY workspace_id"),
      chainRows: p("SELECT * FROM audit_events WHERE workspace_id = ? ORDER BY chain_seq"),
    };
  }

  memory(graph: string): MemorySubstrate {
    let memory = this.graphs.get(graph);
    if (memory) return memory;
    memory = new InMemoryMemory((workspaceId, txId, changes) => this.staged.set(`${graph}\u0000${workspaceId}\u0000${txId}`, changes));
    const byWorkspace = new Map<string, MemoryChange[]>();
    for (const r of this.s.memoryRows!.iterate(graph) as IterableIterator<{ workspace_id: string; kind: MemoryChange["kind"]; key: string; value: string }>) {
      let rows = byWorkspace.get(r.workspace_id);
      if (!rows) byWorkspace.set(r.workspace_id, (rows = []));
      rows.push({ kind: r.kind, key: r.key, value: JSON.parse(r.value) as unknown });
    }
    for (const [workspaceId, rows] of byWorkspace) memory.load(workspaceId, rows);
    this.graphs.set(graph, memory);
    this.graphOf.set(memory, graph);
    return memory;
  }

  async commit(unit: UnitOfWork): Promise<void> {
    try {
      this.writeUnit(unit);
    } catch (error) {
      // A rolled-back unit may have cached the id of a row, or a chain head, that is not there.
      this.running.delete(`${unit.loop_id}\u0000${unit.workspace_id}\u0000${unit.trace_id}`);
      this.heads.clear();
      throw storeError(this.path, error);
    }
  }

  private write(unit: UnitOfWork): void {
    const s = this.s;
    const now = new Date().toISOString();
    const { loop_id, workspace_id, trace_id } = unit;
    if (unit.started) {
      const st = unit.started;
      s.startIteration!.run(loop_id, workspace_id, trace_id, st.number, st.entry, json(st.input), st.cause === undefined ? null : json(st.cause), st.started_at);
    }
    const key = `${loop_id}\u0000${workspace_id}\u0000${trace_id}`;
    let iterationId = this.running.get(key);
    const iteration = () => {
      iterationId ??= (s.iterationId!.get(loop_id, workspace_id, trace_id) as { id: number } | undefined)?.id;
      if (iterationId !== undefined && !unit.finished) this.running.set(key, iterationId);
      return iterationId;
    };
    if (unit.phase) {
      const id = iteration();
      if (id !== undefined) s.phase!.run(id, unit.phase.phase_id, unit.phase.signature, unit.phase.status, unit.phase.canonical ?? json(unit.phase.output), unit.phase.next, now);
    }
    if (unit.idempotency) s.idempotency!.run(unit.idempotency.workspace_id, unit.idempotency.signature, loop_id, unit.idempotency.canonical, trace_id, now);
    if (unit.audit.length > 0) this.appendAudit(workspace_id, unit.audit);
    if (unit.memory) {
      const graph = this.graphOf.get(unit.memory.substrate);
      const key = `${graph}\u0000${workspace_id}\u0000${unit.memory.tx_id}`;
      const rows = graph === undefined ? undefined : this.staged.get(key);
      if (rows) {
        for (const r of rows) {
          if (r.value === null) s.memoryDelete!.run(graph, workspace_id, r.kind, r.key);
          else s.memoryPut!.run(graph, workspace_id, r.kind, r.key, JSON.stringify(r.value));
        }
        this.staged.delete(key);
      }
    }
    for (const o of unit.outbox ?? []) s.outbox!.run(o.connection_id, o.event_id, loop_id, workspace_id, trace_id, o.to_loop, json(o.envelope), now);
    if (unit.inbox) s.inbox!.run(loop_id, workspace_id, unit.inbox.event_id, trace_id, now);
    if (unit.finished) {
      const id = iteration();
      const f = unit.finished;
      if (id !== undefined) s.finish!.run(f.status, f.closed ? 1 : 0, f.error ? json(f.error) : null, now, id);
      this.running.delete(key);
    }
    if (unit.counters) s.counters!.run(loop_id, workspace_id, unit.counters.iterations, unit.counters.started ? 1 : 0, now);
  }

  private appendAudit(workspaceId: string, events: readonly AuditEvent[]): void {
    const s = this.s;
    // Read inside the write transaction: no other connection can commit until it ends.
    const version = (s.dataVersion!.get() as { data_version: number }).data_version;
    if (version !== this.headsAt) {
      this.heads.clear();
      this.headsAt = version;
    }
    let head = this.heads.get(workspaceId);
    head ??= (s.head!.get(workspaceId) as { next_seq: number; head: string } | undefined) ?? { next_seq: 0, head: GENESIS };
    let seq = head.next_seq;
    let prev = head.head;
    for (const e of events) {
      const hash = chainHash(prev, e);
      s.auditEvent!.run(workspaceId, seq, e.event_id, e.event_type, e.trace_id, e.loop_id, e.phase_id, e.seq, e.timestamp, e.signature, e.data === undefined ? null : canonicalJson(e.data), prev, hash);
      prev = hash;
      seq++;
    }
    s.setHead!.run(workspaceId, seq, prev);
    this.heads.set(workspaceId, { next_seq: seq, head: prev });
  }

  private read<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(storeError(this.path, error));
    }
  }

  counters(loopId: string): Promise<Map<string, LoopCounters>> {
    return this.read(() => new Map((this.s.loadCounters!.all(loopId) as { workspace_id: string; iterations: number; started: number }[]).map((r) => [r.workspace_id, { iterations: r.iterations, started: r.started === 1 }])));
  }

  interrupted(loopId: string): Promise<InterruptedIteration[]> {
    return this.read(() =>
      (this.s.running!.all(loopId) as { id: number; workspace_id: string; trace_id: string; number: number; entry: string; input: string; cause: string | null }[]).map((r) => {
        const phases = (this.s.phasesOf!.all(r.id) as { phase_id: string; signature: string; status: PhaseCommit["status"]; output: string; next: string | null }[]).map((p) => ({ ...p, output: JSON.parse(p.output) as unknown }));
        const seq = (this.s.auditSeq!.get(r.trace_id, loopId, r.workspace_id) as { seq: number | null }).seq;
        const it: InterruptedIteration = { loop_id: loopId, workspace_id: r.workspace_id, trace_id: r.trace_id, number: r.number, entry: r.entry, input: JSON.parse(r.input) as unknown, phases, audit_seq: seq === null ? 0 : seq + 1 };
        if (r.cause !== null) it.cause = JSON.parse(r.cause) as unknown;
        return it;
      }),
    );
  }

  idempotency(loopId: string, limit: number): Promise<IdempotencyRecord[]> {
    return this.read(() => (this.s.loadIdempotency!.all(loopId, limit) as { workspace_id: string; signature: string; output: string }[]).map((r) => ({ workspace_id: r.workspace_id, signature: r.signature, canonical: r.output })));
  }

  received(loopId: string, workspaceId: string, eventId: string): Promise<boolean> {
    return this.read(() => this.s.received!.get(loopId, workspaceId, eventId) !== undefined);
  }

  pending(limit: number): Promise<PendingSignal[]> {
    return this.read(() => (this.s.pending!.all(limit) as (Omit<PendingSignal, "envelope"> & { envelope: string })[]).map((r) => ({ ...r, envelope: JSON.parse(r.envelope) as unknown })));
  }

  settle(connectionId: string, eventId: string, outcome: "delivered" | "dropped", detail?: string): Promise<void> {
    return this.read(() => void this.s.settle!.run(outcome, detail ?? null, new Date().toISOString(), connectionId, eventId));
  }

  queryAudit(filter: AuditFilter): Promise<AuditPage> {
    return this.read(() => {
      const where: string[] = ["position > ?"];
      const params: unknown[] = [filter.after ?? 0];
      if (filter.loop_id !== undefined) (where.push("loop_id = ?"), params.push(filter.loop_id));
      if (filter.trace_id !== undefined) (where.push("trace_id = ?"), params.push(filter.trace_id));
      if (filter.workspace_id !== undefined) (where.push("workspace_id = ?"), params.push(filter.workspace_id));
      const rows = this.db.prepare(`SELECT * FROM audit_events WHERE ${where.join(" AND ")} ORDER BY position LIMIT ?`).all(...params, filter.limit + 1) as AuditRow[];
      const more = rows.length > filter.limit;
      if (more) rows.pop();
      const page: AuditPage = { events: rows.map((r) => ({ event: eventOf(r), chain_seq: r.chain_seq, prev_hash: r.prev_hash, hash: r.hash, position: r.position })) };
      if (more) page.next = (rows[rows.length - 1] as AuditRow).position;
      return page;
    });
  }

  verifyAudit(workspaceId?: string): Promise<ChainReport[]> {
    return this.read(() => {
      const chains = (this.s.chains!.all() as { workspace_id: string; next_seq: number; head: string }[]).filter((c) => workspaceId === undefined || c.workspace_id === workspaceId);
      return chains.map((c) => {
        const links: ChainLink[] = (this.s.chainRows!.all(c.workspace_id) as AuditRow[]).map((r) => ({ chain_seq: r.chain_seq, event: eventOf(r), prev_hash: r.prev_hash, hash: r.hash }));
        return { workspace_id: c.workspace_id, ...verifyChain(links, { next_seq: c.next_seq, hash: c.head }) };
      });
    });
  }

  info(): Promise<StoreInfo> {
    return this.read(() => {
      const counts: Record<string, number> = {};
      for (const t of STORE_TABLES) counts[t] = (this.db.prepare(`SELECT count(*) AS n FROM ${t}`).get() as { n: number }).n;
      let bytes = 0;
      for (const suffix of ["", "-wal"]) {
        try {
          bytes += statSync(this.path + suffix).size;
        } catch {
          // no WAL file (checkpointed and removed)
        }
      }
      return { kind: "sqlite", location: this.path, version: STORE_SCHEMA_VERSION, bytes, counts };
    });
  }

  /** Every row of every table, table by table (pulse store export). */
  *rows(): Generator<{ table: string; row: Record<string, unknown> }> {
    for (const table of STORE_TABLES) for (const row of this.db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).iterate() as IterableIterator<Record<string, unknown>>) yield { table, row };
  }

  /** Rebuilds the file to its smallest size (pulse store vacuum). */
  vacuum(): void {
    try {
      this.db.pragma("wal_checkpoint(TRUNCATE)");
      this.db.exec("VACUUM");
      // In WAL mode VACUUM writes the rebuilt file through the WAL: fold it back in.
      this.db.pragma("wal_checkpoint(TRUNCATE)");
    } catch (error) {
      throw storeError(this.path, error);
    }
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
