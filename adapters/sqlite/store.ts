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
import { chainHash, eventCanonical, GENESIS, verifyChain, type ChainLink } from "../../src/store/audit-chain.js";
import type { AuditFilter, AuditPage, ChainReport, IdempotencyRecord, InterruptedIteration, LoopCounters, MemoryChange, PendingSignal, PhaseCommit, Store, StoreInfo, UnitOfWork } from "../../src/store/contracts.js";
import type { AuditEvent, AuditSubstrate, MemorySubstrate } from "../../src/substrates/contracts.js";
import { InMemoryMemory } from "../memory/memory.js";
import { StoreAudit } from "../shared/store-audit.js";
import { checkIntegrity, openDatabase, storeError, type Database, type Statement } from "./driver.js";
import { migrateComponent } from "./schema-versions.js";
import { moveFinished, readCounters } from "./store-counters.js";
import { checkReadable, STORE_COMPONENT, STORE_MIGRATIONS, STORE_TABLES } from "./store-schema.js";
import { eventOf, fileTables, iterationJournal, journalIterations, newestIdempotency, prepareStatements, TRACE_POSITIONS, type AuditRow, type IdempotencyRow } from "./store-statements.js";
import { TrailCheck, withTraceProblems } from "../../src/store/audit-journal.js";

export { STORE_COMPONENT };
export const STORE_SCHEMA_VERSION = STORE_MIGRATIONS.length;
const WRITTEN_BY = "pulse 0.1.0";

/** Events appended after the trace index's watermark before a unit brings the index up to date. */
const TRACE_INDEX_BATCH = 2048;
/** Iterations ended between two moves of the watermark of finished iterations. */
const FINISHED_BATCH = 1024;
/** Events a workspace's chain grows by between two checkpoints of its head (audit_chains). */
const CHECKPOINT_EVERY = 4096;

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
   * What this connection knows of the file, valid while SQLite's data_version is `knownAt`: it
   * moves only when another connection commits to the file, which sends the next unit back to
   * the file. Each workspace's chain head (and the checkpoint of it in audit_chains), the loop
   * counters last written, the trace index's watermark.
   */
  private readonly heads = new Map<string, { next_seq: number; head: string; checkpointed: number }>();
  private readonly countersWritten = new Map<string, string>();
  /** Loop and workspace pairs whose counters the file already says started (an iteration of theirs ended). */
  private readonly startedDurable = new Set<string>();
  private tracesUpTo: number | undefined;
  private knownAt = -1;
  /** Iterations this connection finished since it last moved the watermark of finished ones. */
  private finishedSince = 0;
  /** Journal rows (id, number) of iterations this store saw start and not yet finish. */
  private readonly running = new Map<string, { id: number; number: number }>();

  constructor(
    readonly path: string,
    options: { readonly?: boolean; display?: string } = {},
  ) {
    this.description = `sqlite ${options.display ?? path}`;
    this.db = openDatabase(path, options);
    try {
      // A damaged file is not written to: what a write might make of its damaged pages is unknown.
      if (!options.readonly) checkIntegrity(this.db, path);
      if (!options.readonly) migrateComponent(this.db, path, STORE_COMPONENT, STORE_MIGRATIONS, WRITTEN_BY);
      else checkReadable(this.db, path);
      this.s = prepareStatements(this.db);
    } catch (error) {
      this.db.close();
      throw storeError(path, error);
    }
    this.audit = new StoreAudit(this);
    this.writeUnit = this.db.transaction((unit: UnitOfWork) => this.write(unit)).immediate;
    if (!options.readonly) {
      try {
        this.db.transaction(() => {
          this.indexTraces(0);
          moveFinished(this.s, new Date().toISOString());
        }).immediate();
      } catch (error) {
        this.db.close();
        throw storeError(path, error);
      }
    }
  }

  /** Sends the next unit to the file for what another connection may have changed. */
  private reloadIfChanged(): void {
    const version = (this.s.dataVersion!.get() as { data_version: number }).data_version;
    if (version === this.knownAt) return;
    this.knownAt = version;
    this.heads.clear();
    this.countersWritten.clear();
    this.startedDurable.clear();
    this.tracesUpTo = undefined;
  }

  /**
   * Brings the trace index up to date when `lastPosition` is at least `batch` events past its
   * watermark.
   */
  private indexTraces(batch: number, lastPosition?: number): void {
    const s = this.s;
    this.tracesUpTo ??= (s.tracesUpTo!.get() as { value: number }).value;
    const last = lastPosition ?? (s.lastPosition!.get() as { position: number }).position;
    if (last - this.tracesUpTo < batch) return;
    s.indexTraces!.run(this.tracesUpTo);
    s.setTracesUpTo!.run(last);
    this.tracesUpTo = last;
  }

  memory(graph: string): MemorySubstrate {
    let memory = this.graphs.get(graph);
    if (memory) return memory;
    // A phase's transaction waits for its unit; any other write is committed on its own, now.
    memory = new InMemoryMemory(
      (workspaceId, txId, changes, journaled) => (journaled ? this.staged.set(`${graph}\u0000${workspaceId}\u0000${txId}`, changes) : this.writeMemory(graph, workspaceId, changes)),
      (workspaceId, changes) => this.writeMemory(graph, workspaceId, changes),
    );
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
      this.knownAt = -1;
      throw storeError(this.path, error);
    }
  }

  private write(unit: UnitOfWork): void {
    const s = this.s;
    this.reloadIfChanged();
    const now = new Date().toISOString();
    const { loop_id, workspace_id, trace_id } = unit;
    if (unit.started) {
      const st = unit.started;
      s.startIteration!.run(loop_id, workspace_id, trace_id, st.number, st.entry, json(st.input), st.cause === undefined ? null : json(st.cause), st.started_at);
    }
    const key = `${loop_id}\u0000${workspace_id}\u0000${trace_id}`;
    let row = this.running.get(key);
    const iteration = () => {
      row ??= s.iterationId!.get(loop_id, workspace_id, trace_id) as { id: number; number: number } | undefined;
      if (row !== undefined && !unit.finished) this.running.set(key, row);
      return row?.id;
    };
    let idempotency = unit.idempotency;
    if (unit.phase) {
      const id = iteration();
      if (id !== undefined) {
        const p = unit.phase;
        const output = p.canonical ?? json(p.output);
        // The phase's idempotency record travels in its row: no other table, no index written.
        const own = idempotency !== undefined && idempotency.workspace_id === workspace_id ? idempotency : undefined;
        s.phase!.run(id, p.phase_id, p.signature, p.status, output, p.next, now, own?.signature ?? null, own === undefined || own.canonical === output ? null : own.canonical);
        if (own) idempotency = undefined;
      }
    }
    if (idempotency) s.idempotency!.run(idempotency.workspace_id, idempotency.signature, loop_id, idempotency.canonical, trace_id, now);
    if (unit.audit.length > 0) this.appendAudit(workspace_id, unit.audit);
    if (unit.memory) {
      const graph = this.graphOf.get(unit.memory.substrate);
      const key = `${graph}\u0000${workspace_id}\u0000${unit.memory.tx_id}`;
      const rows = graph === undefined ? undefined : this.staged.get(key);
      if (graph !== undefined && rows) {
        this.memoryRows(graph, workspace_id, rows);
        this.staged.delete(key);
      }
    }
    for (const o of unit.outbox ?? []) s.outbox!.run(o.connection_id, o.event_id, loop_id, workspace_id, trace_id, o.to_loop, json(o.envelope), now);
    if (unit.inbox) s.inbox!.run(loop_id, workspace_id, unit.inbox.event_id, trace_id, now);
    const at = `${loop_id}\u0000${workspace_id}`;
    if (unit.finished) {
      const id = iteration();
      const f = unit.finished;
      if (id !== undefined) s.finish!.run(f.status, f.closed ? 1 : 0, f.error ? json(f.error) : null, now, id);
      if (id !== undefined) this.startedDurable.add(at);
      this.running.delete(key);
      // The watermark of finished iterations moves up every so many ends (a scan that stops at the first still running).
      if (++this.finishedSince >= FINISHED_BATCH) {
        moveFinished(this.s, now);
        this.finishedSince = 0;
      }
    }
    const c = unit.counters;
    if (c) {
      // Written only when the journal's rows do not say as much (store-counters.ts): the row
      // carries its number, an ended row says the loop started; most units write none.
      const id = unit.started || unit.phase || unit.finished ? iteration() : undefined;
      const implied = id !== undefined && row !== undefined && row.number >= c.iterations && (!c.started || unit.finished !== undefined || this.startedDurable.has(at));
      const written = `${c.iterations}|${c.started}`;
      if (!implied && this.countersWritten.get(at) !== written) {
        s.counters!.run(loop_id, workspace_id, c.iterations, c.started ? 1 : 0, now);
        this.countersWritten.set(at, written);
        if (c.started) this.startedDurable.add(at);
      }
    }
  }

  private memoryRows(graph: string, workspaceId: string, rows: readonly MemoryChange[]): void {
    for (const r of rows) {
      if (r.value === null) this.s.memoryDelete!.run(graph, workspaceId, r.kind, r.key);
      else this.s.memoryPut!.run(graph, workspaceId, r.kind, r.key, JSON.stringify(r.value));
    }
  }

  /** Memory written outside a phase (by a host's own code): its own transaction, committed now. */
  private writeMemory(graph: string, workspaceId: string, rows: readonly MemoryChange[]): void {
    try {
      this.db.transaction(() => this.memoryRows(graph, workspaceId, rows)).immediate();
    } catch (error) {
      throw storeError(this.path, error);
    }
  }

  private appendAudit(workspaceId: string, events: readonly AuditEvent[]): void {
    const s = this.s;
    // Read inside the write transaction (after reloadIfChanged()): no other connection can commit until it ends.
    let head = this.heads.get(workspaceId);
    // A stale checkpoint (far behind the end of the trail) is moved up once the head is known.
    let stale = false;
    if (!head) {
      // No checkpoint: the workspace has no chain yet (one is written when it starts).
      const checkpoint = s.checkpoint!.get(workspaceId) as { next_seq: number; head: string; upto: number } | undefined;
      const last = checkpoint && (s.headAfter!.get(checkpoint.upto, workspaceId) as { chain_seq: number; hash: string } | undefined);
      head = last ? { next_seq: last.chain_seq + 1, head: last.hash, checkpointed: checkpoint.next_seq } : checkpoint ? { next_seq: checkpoint.next_seq, head: checkpoint.head, checkpointed: checkpoint.next_seq } : { next_seq: 0, head: GENESIS, checkpointed: -1 };
      stale = checkpoint !== undefined && (s.lastPosition!.get() as { position: number }).position - checkpoint.upto > CHECKPOINT_EVERY;
    }
    let seq = head.next_seq;
    let prev = head.head;
    let position = 0;
    for (const e of events) {
      const data = e.data === undefined ? null : canonicalJson(e.data);
      const hash = chainHash(prev, e, eventCanonical(e, data));
      position = Number(s.auditEvent!.run(workspaceId, seq, e.event_id, e.event_type, e.trace_id, e.loop_id, e.phase_id, e.seq, e.timestamp, e.signature, data, prev, hash).lastInsertRowid);
      prev = hash;
      seq++;
    }
    let checkpointed = head.checkpointed;
    if (stale || checkpointed < 0 || seq - checkpointed >= CHECKPOINT_EVERY) {
      s.setCheckpoint!.run(workspaceId, seq, prev, position);
      checkpointed = seq;
    }
    this.heads.set(workspaceId, { next_seq: seq, head: prev, checkpointed });
    this.indexTraces(TRACE_INDEX_BATCH, position);
  }

  private read<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(storeError(this.path, error));
    }
  }

  counters(loopId: string): Promise<Map<string, LoopCounters>> {
    return this.read(() => readCounters(this.s, loopId));
  }

  interrupted(loopId: string): Promise<InterruptedIteration[]> {
    return this.read(() =>
      (this.s.running!.all(loopId) as { id: number; workspace_id: string; trace_id: string; number: number; entry: string; input: string; cause: string | null; phases_after: number }[]).map((r) => {
        const phases = (this.s.phasesOf!.all(r.phases_after, r.id) as { phase_id: string; signature: string; status: PhaseCommit["status"]; output: string; next: string | null }[]).map((p) => ({ ...p, output: JSON.parse(p.output) as unknown }));
        const seq = (this.s.auditSeq!.get({ trace: r.trace_id, loop: loopId, workspace: r.workspace_id }) as { seq: number | null }).seq;
        const it: InterruptedIteration = { loop_id: loopId, workspace_id: r.workspace_id, trace_id: r.trace_id, number: r.number, entry: r.entry, input: JSON.parse(r.input) as unknown, phases, audit_seq: seq === null ? 0 : seq + 1 };
        if (r.cause !== null) it.cause = JSON.parse(r.cause) as unknown;
        return it;
      }),
    );
  }

  journal(loopId: string, workspaceId: string, traceId: string): Promise<{ input: unknown; phases: PhaseCommit[] } | undefined> {
    return this.read(() => iterationJournal(this.db, loopId, workspaceId, traceId));
  }

  idempotency(loopId: string, limit: number): Promise<IdempotencyRecord[]> {
    // Two sources, each newest first: phase rows and records committed without a phase.
    return this.read(() => newestIdempotency([this.s.phaseIdempotency!.iterate(loopId), this.s.loadIdempotency!.iterate(loopId)] as IterableIterator<IdempotencyRow>[], limit));
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
      if (filter.trace_id !== undefined) (where.push(`position IN (${TRACE_POSITIONS.replaceAll("@trace", "?")})`), params.push(filter.trace_id, filter.trace_id));
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
      // Damage in pages verify would not read (an index, a free page) is damage too.
      checkIntegrity(this.db, this.path);
      // One pass over the trail: a workspace's events are in chain order by position.
      const chains = new Map<string, ChainLink[]>();
      const checkpoints = new Map((this.s.checkpoints!.all() as { workspace_id: string; next_seq: number; head: string }[]).map((c) => [c.workspace_id, c]));
      for (const ws of checkpoints.keys()) chains.set(ws, []);
      const trails = new TrailCheck();
      for (const r of this.s.allEvents!.iterate() as IterableIterator<AuditRow>) {
        if (workspaceId !== undefined && r.workspace_id !== workspaceId) continue;
        let links = chains.get(r.workspace_id);
        if (!links) chains.set(r.workspace_id, (links = []));
        links.push({ chain_seq: r.chain_seq, event: eventOf(r), prev_hash: r.prev_hash, hash: r.hash });
        trails.add(r);
      }
      const reports = [...chains]
        .filter(([ws]) => workspaceId === undefined || ws === workspaceId)
        .map(([workspace_id, links]) => {
          const c = checkpoints.get(workspace_id);
          return { workspace_id, ...verifyChain(links, c && { next_seq: c.next_seq, hash: c.head, reached: true }) };
        });
      return withTraceProblems(reports, trails.problems(journalIterations(this.db, workspaceId)));
    });
  }

  info(): Promise<StoreInfo> {
    return this.read(() => {
      const counts: Record<string, number> = {};
      for (const { name } of fileTables(this.db, STORE_TABLES)) counts[name] = (this.db.prepare(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n;
      // Most idempotency records are columns of their phase's row.
      counts.idempotency = (counts.idempotency ?? 0) + (this.db.prepare("SELECT count(*) AS n FROM phases WHERE idempotency_key IS NOT NULL").get() as { n: number }).n;
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
    try {
      for (const { name, order } of fileTables(this.db, STORE_TABLES)) for (const row of this.db.prepare(`SELECT * FROM "${name}"${order}`).iterate() as IterableIterator<Record<string, unknown>>) yield { table: name, row };
    } catch (error) {
      throw storeError(this.path, error);
    }
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
    if (!this.db.open) return;
    try {
      // Checkpoints each chain head this connection wrote since its last checkpoint.
      if (!this.db.readonly && this.heads.size > 0) {
        this.db.transaction(() => {
          this.reloadIfChanged();
          const upto = (this.s.lastPosition!.get() as { position: number }).position;
          for (const [workspaceId, h] of this.heads) if (h.next_seq > h.checkpointed) this.s.setCheckpoint!.run(workspaceId, h.next_seq, h.head, upto);
        }).immediate();
      }
    } catch {
      // Only a checkpoint: the chain itself is committed; verify checks against the last one written.
    } finally {
      this.db.close();
    }
  }
}
