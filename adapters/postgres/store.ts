/**
 * The Store (src/store/contracts.ts) in PostgreSQL, for a fleet of hosts on one database
 * (`--store postgres://…?schema=…`, tables of schema.ts, created by `pulse store migrate`).
 *
 *   - Units of work are written per workspace by store-chain.ts: one call of commit_units
 *     (schema.ts, version 3; rows built by store-unit.ts) in flight per workspace, the units that
 *     queued meanwhile sent together in the next (a group commit, each unit still whole or
 *     absent): one round trip, no BEGIN or COMMIT, as the runtime's role under row-level security
 *     for the workspace, which the function sets itself for its transaction.
 *   - The audit trail is the same BLAKE3 chain as SQLite's (src/store/audit-chain.ts), one per
 *     workspace, hashed by the host from the head it expects and checked by the database, under
 *     the head's row lock when another host moved it first.
 *   - An idempotent phase's record is claimed with INSERT … ON CONFLICT DO NOTHING: when another
 *     unit (another host) committed the signature first, this unit is refused whole
 *     (STORE_IDEMPOTENCY_CLAIMED), so the phase's side effects land once.
 *   - Host-wide reads (interrupted iterations, pending signals, the audit trail of every
 *     workspace) visit the workspaces of the `workspaces` directory one by one, each under its
 *     own setting, in one read-only transaction: row-level security is never switched off.
 */
import { withTraceProblems } from "../../src/store/audit-journal.js";
import { traceProblems } from "./store-verify.js";
import type pg from "pg";
import { StoreError, type AuditFilter, type AuditPage, type ChainReport, type IdempotencyRecord, type InterruptedIteration, type LoopCounters, type MemoryChange, type PendingSignal, type PhaseCommit, type Store, type StoreInfo, type UnitOfWork } from "../../src/store/contracts.js";
import type { AuditSubstrate, MemorySubstrate } from "../../src/substrates/contracts.js";
import { StoreAudit } from "../shared/store-audit.js";
import { parsePostgresUrl, PostgresAddressError, redactPassword, type PostgresAddress } from "./address.js";
import { AUDIT_COLUMNS, checkChain, eventOf, type AuditRow } from "./audit.js";
import { PostgresDatabase, type OpenOptions } from "./database.js";
import { describePgError, PostgresStoreError } from "./errors.js";
import { SCHEMA_VERSION, TENANT_TABLES } from "./schema.js";
import { exportRows } from "./store-export.js";
import { PostgresMemory } from "./store-memory.js";
import type { GraphCounters } from "../memory/graph.js";
import { ChainWriter } from "./store-chain.js";
import type { UnitFence } from "./store-unit.js";

/** A pg failure as the store's one-line error. */
export function storeErrorOf(display: string, error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  if (error instanceof PostgresStoreError) return new StoreError(error.code, error.message, { cause: error });
  if (error instanceof PostgresAddressError) return new StoreError("STORE_SPEC", error.message, { cause: error });
  const code = String((error as { code?: unknown })?.code ?? "");
  const line = describePgError(error);
  if (code === "PU001") return new StoreError("STORE_IDEMPOTENCY_CLAIMED", `${display}: ${line}`, { cause: error });
  if (code === "PU004") return new StoreError("STORE_MEMORY_CONFLICT", `${display}: ${line}`, { cause: error });
  if (code === "PU003") return new StoreError("STORE_LEASE_LOST", `${display}: ${line}`, { cause: error });
  if (/^E(CONNREFUSED|HOSTUNREACH|NOTFOUND|TIMEDOUT)$/.test(code) || code === "53300") {
    return new StoreError("STORE_UNAVAILABLE", `PostgreSQL at ${display} is unavailable: ${line}; nothing of this unit was committed`, { cause: error });
  }
  if (/^(08|57P)/.test(code) || /^E(CONNRESET|PIPE)$/.test(code) || /Connection terminated|connection timeout/i.test(line)) {
    // The connection broke with the unit on the wire: the server may have committed it or not.
    return new StoreError("STORE_UNAVAILABLE", `PostgreSQL at ${display} is unavailable: ${line}; the unit is all committed or not at all, which one is known once the server answers again`, { cause: error, inDoubt: true });
  }
  return new StoreError("STORE_FAILED", `${display}: ${line}`, { cause: error });
}

export class PostgresStore implements Store {
  readonly durable = true;
  readonly description: string;
  readonly audit: AuditSubstrate;
  private readonly units: ChainWriter;
  /** Workspaces known to be in the directory. */
  private readonly known = new Set<string>();
  private readonly graphs = new Map<string, PostgresMemory>();
  private readonly graphOf = new Map<MemorySubstrate, string>();
  /** Committed memory transactions' rows until their unit is written, with the graph they were made on. */
  private readonly staged = new Map<string, { changes: MemoryChange[]; entry: object }>();
  /** Outbox ids pending() returned, with their workspace (settle's row-level security). */
  private readonly outboxWorkspace = new Map<string, string>();

  /** The fleet lease a loop's units are committed under (fenceWith), if any. */
  private fencing: ((loopId: string, workspaceId: string) => UnitFence | undefined) | undefined;

  private readonly ready: Promise<PostgresDatabase>;
  private readonly address: PostgresAddress;

  /** The store at `url` over `database`, a connection to it being opened (PostgresDatabase.open). */
  constructor(url: string, database: Promise<PostgresDatabase>) {
    this.address = parsePostgresUrl(url);
    this.description = `postgres ${this.address.display} schema ${this.address.schema}`;
    this.audit = new StoreAudit(this);
    this.units = new ChainWriter(() => this.pool(), this.t);
    this.ready = database.catch((error: unknown) => {
      throw storeErrorOf(this.address.display, error);
    });
    // Each call reports a failed connection; none goes unhandled meanwhile.
    this.ready.catch(() => undefined);
  }

  /**
   * The store at `url`, connecting in the background (calls wait for it): as the runtime's role,
   * switching with SET ROLE and telling `onNote` so when connected as an owner or a superuser.
   */
  static connect(url: string, options: OpenOptions = {}): PostgresStore {
    try {
      parsePostgresUrl(url);
      return new PostgresStore(url, PostgresDatabase.open(url, options));
    } catch (error) {
      throw storeErrorOf(redactPassword(url), error);
    }
  }

  /** connect(), once connected: an unreachable or unmigrated database is refused here, in one line. */
  static async open(url: string, options: OpenOptions = {}): Promise<PostgresStore> {
    const store = PostgresStore.connect(url, options);
    await store.ready;
    return store;
  }

  private get display(): string {
    return this.address.display;
  }

  private t = (name: string): string => `"${this.address.schema}".${name}`;

  private async pool(): Promise<pg.Pool> {
    return (await this.ready).pool;
  }

  memory(graph: string): MemorySubstrate {
    let memory = this.graphs.get(graph);
    if (memory) return memory;
    const load = async (workspaceId: string): Promise<MemoryChange[]> => {
      const rows = await this.read(workspaceId, (c) => c.query<{ kind: MemoryChange["kind"]; key: string; value: string }>(`SELECT kind, key, value FROM ${this.t("memory_state")} WHERE graph = $1 ORDER BY id`, [graph])).catch((error: unknown) => {
        throw storeErrorOf(this.display, error);
      });
      return rows.rows.map((r) => ({ kind: r.kind, key: r.key, value: JSON.parse(r.value) as unknown }));
    };
    const counters = `SELECT value FROM ${this.t("memory_state")} WHERE graph = $1 AND kind = 'counters' AND key = ''`;
    const rows = {
      load,
      reserve: async (workspaceId: string, local: GraphCounters, size: number): Promise<GraphCounters> => {
        try {
          const r = await (await this.pool()).query<{ from: string }>(`SELECT ${this.t("reserve_memory_ids")}($1, $2, $3, $4) AS from`, [workspaceId, graph, JSON.stringify(local), size]);
          return JSON.parse(r.rows[0]!.from) as GraphCounters;
        } catch (error) {
          throw storeErrorOf(this.display, error);
        }
      },
      stamp: async (workspaceId: string): Promise<string> => {
        const r = await this.read(workspaceId, (c) => c.query<{ value: string }>(counters, [graph]));
        const value = r.rows[0] ? (JSON.parse(r.rows[0].value) as { stamp?: unknown }) : {};
        return typeof value.stamp === "string" ? value.stamp : "";
      },
    };
    memory = new PostgresMemory(rows, (workspaceId, txId, changes, entry) => this.staged.set(`${graph}\u0000${workspaceId}\u0000${txId}`, { changes, entry }));
    this.graphs.set(graph, memory);
    this.graphOf.set(memory, graph);
    return memory;
  }

  /** The next call of a memory graph in the workspace reads the database again (a fleet takeover). */
  refresh(workspaceId: string): void {
    for (const graph of this.graphs.values()) graph.refresh(workspaceId);
  }

  /**
   * Fences this host's units by its fleet leases: `fence` names the lease (holder, epoch) a loop's
   * units in a workspace are committed under (an epoch of 0, which no lease has, when the loop is
   * the fleet's but not held here), or undefined for a loop outside the fleet. The database then
   * refuses, whole, a unit whose lease row names another holder or epoch (STORE_LEASE_LOST): a
   * commit delayed past a takeover cannot land after the new holder resumed its phase. Only when
   * the fleet's leases (`leasesUrl`) are in this store's database and schema: false otherwise.
   */
  fenceWith(leasesUrl: string, fence: (loopId: string, workspaceId: string) => UnitFence | undefined): boolean {
    // Only where the leases are: the check reads this schema's lease rows.
    const leases = parsePostgresUrl(leasesUrl);
    if (leases.display !== this.address.display || leases.schema !== this.address.schema) return false;
    this.fencing = fence;
    return true;
  }

  async commit(unit: UnitOfWork): Promise<void> {
    const ws = unit.workspace_id;
    if (ws === "") throw new StoreError("STORE_NO_WORKSPACE", "a unit of work needs a workspace: the empty string is none");
    const graph = unit.memory ? this.graphOf.get(unit.memory.substrate) : undefined;
    const memoryKey = unit.memory && graph !== undefined ? `${graph}\u0000${ws}\u0000${unit.memory.tx_id}` : undefined;
    const staged = memoryKey === undefined ? undefined : this.staged.get(memoryKey);
    const memory = staged && graph !== undefined ? this.graphs.get(graph) : undefined;
    const sent = memory?.sending(ws);
    // The counters row carries the unit's stamp: other hosts see from it that the graph moved on.
    const rows = staged?.changes.map((c) => (c.kind === "counters" ? { ...c, value: { ...(c.value as object), stamp: sent!.stamp }, prev: sent!.base } : c));
    try {
      await this.ready;
      const fence = this.fencing?.(unit.loop_id, ws);
      await this.units.write(ws, { unit, newWorkspace: !this.known.has(ws), ...(rows && graph !== undefined ? { memory: { graph, rows } } : {}), ...(fence ? { fence } : {}) });
      if (sent) memory!.settled(ws, sent, staged!.entry, true);
    } catch (error) {
      if (sent) memory!.settled(ws, sent, staged!.entry, false);
      throw storeErrorOf(this.display, error);
    }
    this.known.add(ws);
    if (memoryKey !== undefined) this.staged.delete(memoryKey);
  }

  /** `fn` in one read-only transaction seeing only `ws`'s rows. */
  private async read<T>(ws: string, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return (await this.ready).inWorkspace(ws, async (c) => {
      await c.query("SET TRANSACTION READ ONLY");
      return fn(c);
    });
  }

  /** `fn` for every workspace of the directory, each under its own setting, in one read-only transaction. */
  private async everyWorkspace<T>(fn: (c: pg.PoolClient, ws: string) => Promise<T>, only?: string): Promise<{ ws: string; value: T }[]> {
    try {
      const pool = await this.pool();
      const all = (await pool.query<{ workspace_id: string }>(`SELECT workspace_id FROM ${this.t("workspaces")} ORDER BY workspace_id`)).rows.map((r) => r.workspace_id);
      const workspaces = only === undefined ? all : all.filter((w) => w === only);
      if (workspaces.length === 0) return [];
      const client = await pool.connect();
      try {
        await client.query("BEGIN READ ONLY");
        const out: { ws: string; value: T }[] = [];
        for (const ws of workspaces) {
          await client.query("SELECT set_config('pulse.workspace', $1, true)", [ws]);
          out.push({ ws, value: await fn(client, ws) });
        }
        await client.query("COMMIT");
        return out;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    } catch (error) {
      throw storeErrorOf(this.display, error);
    }
  }

  async counters(loopId: string): Promise<Map<string, LoopCounters>> {
    const found = await this.everyWorkspace((c) => c.query<{ snapshot: string }>(`SELECT snapshot FROM ${this.t("loops")} WHERE loop_id = $1`, [loopId]));
    const out = new Map<string, LoopCounters>();
    for (const { ws, value } of found) {
      const row = value.rows[0];
      if (row) out.set(ws, JSON.parse(row.snapshot) as LoopCounters);
    }
    return out;
  }

  async interrupted(loopId: string): Promise<InterruptedIteration[]> {
    const found = await this.everyWorkspace(async (c, ws) => {
      const running = (await c.query<{ id: string; trace_id: string; number: number; entry: string; input: string; cause: string | null }>(`SELECT id, trace_id, number, entry, input, cause FROM ${this.t("iterations")} WHERE loop_id = $1 AND status = 'running' ORDER BY id`, [loopId])).rows;
      const out: (InterruptedIteration & { id: number })[] = [];
      for (const r of running) {
        const phases = (await c.query<{ phase_id: string; signature: string; status: PhaseCommit["status"]; output: string; next: string | null }>(`SELECT phase_id, signature, status, output, next FROM ${this.t("phases")} WHERE iteration_id = $1 ORDER BY id`, [r.id])).rows.map((p) => ({ ...p, output: JSON.parse(p.output) as unknown }));
        const seq = (await c.query<{ seq: number | null }>(`SELECT max(seq) AS seq FROM ${this.t("audit_events")} WHERE trace_id = $1 AND loop_id = $2`, [r.trace_id, loopId])).rows[0]?.seq ?? null;
        const it: InterruptedIteration & { id: number } = { id: Number(r.id), loop_id: loopId, workspace_id: ws, trace_id: r.trace_id, number: r.number, entry: r.entry, input: JSON.parse(r.input) as unknown, phases, audit_seq: seq === null ? 0 : seq + 1 };
        if (r.cause !== null) it.cause = JSON.parse(r.cause) as unknown;
        out.push(it);
      }
      return out;
    });
    return found
      .flatMap((f) => f.value)
      .sort((a, b) => a.id - b.id)
      .map(({ id: _id, ...it }) => it);
  }

  async idempotency(loopId: string, limit: number): Promise<IdempotencyRecord[]> {
    const found = await this.everyWorkspace((c) => c.query<{ id: string; workspace_id: string; signature: string; output: string }>(`SELECT id, workspace_id, signature, output FROM ${this.t("idempotency")} WHERE loop_id = $1 ORDER BY id DESC LIMIT $2`, [loopId, limit]));
    return found
      .flatMap((f) => f.value.rows)
      .sort((a, b) => Number(b.id) - Number(a.id))
      .slice(0, limit)
      .map((r) => ({ workspace_id: r.workspace_id, signature: r.signature, canonical: r.output }));
  }

  async received(loopId: string, workspaceId: string, eventId: string): Promise<boolean> {
    try {
      return (await this.read(workspaceId, (c) => c.query(`SELECT 1 FROM ${this.t("inbox")} WHERE loop_id = $1 AND event_id = $2`, [loopId, eventId]))).rowCount === 1;
    } catch (error) {
      throw storeErrorOf(this.display, error);
    }
  }

  async iteration(loopId: string, workspaceId: string, traceId: string): Promise<{ status: string } | undefined> {
    try {
      const r = await this.read(workspaceId, (c) => c.query<{ status: string }>(`SELECT status FROM ${this.t("iterations")} WHERE loop_id = $1 AND trace_id = $2`, [loopId, traceId]));
      return r.rows[0] ? { status: r.rows[0].status } : undefined;
    } catch (error) {
      throw storeErrorOf(this.display, error);
    }
  }

  async journal(loopId: string, workspaceId: string, traceId: string): Promise<{ input: unknown; phases: PhaseCommit[] } | undefined> {
    try {
      return await this.read(workspaceId, async (c) => {
        const it = (await c.query<{ id: string; input: string }>(`SELECT id, input FROM ${this.t("iterations")} WHERE loop_id = $1 AND workspace_id = $2 AND trace_id = $3`, [loopId, workspaceId, traceId])).rows[0];
        if (!it) return undefined;
        const rows = (await c.query<{ phase_id: string; signature: string; status: PhaseCommit["status"]; output: string; next: string | null }>(`SELECT phase_id, signature, status, output, next FROM ${this.t("phases")} WHERE iteration_id = $1 ORDER BY id`, [it.id])).rows;
        return { input: typeof it.input === "string" ? (JSON.parse(it.input) as unknown) : (it.input as unknown), phases: rows.map((p) => ({ ...p, output: typeof p.output === "string" ? (JSON.parse(p.output) as unknown) : (p.output as unknown) })) };
      });
    } catch (error) {
      throw storeErrorOf(this.display, error);
    }
  }

  async pending(limit: number): Promise<PendingSignal[]> {
    type Row = { id: string; connection_id: string; event_id: string; loop_id: string; workspace_id: string; trace_id: string; to_loop: string; envelope: string };
    const found = await this.everyWorkspace((c) => c.query<Row>(`SELECT id, connection_id, event_id, loop_id, workspace_id, trace_id, to_loop, envelope FROM ${this.t("outbox")} WHERE status = 'pending' ORDER BY id LIMIT $1`, [limit]));
    const rows = found.flatMap((f) => f.value.rows).sort((a, b) => Number(a.id) - Number(b.id)).slice(0, limit);
    return rows.map((r) => {
      this.outboxWorkspace.set(outboxKey(r.connection_id, r.event_id), r.workspace_id);
      return { ...r, id: Number(r.id), envelope: JSON.parse(r.envelope) as unknown };
    });
  }

  async settle(connectionId: string, eventId: string, outcome: "delivered" | "dropped", detail?: string): Promise<void> {
    const db = await this.ready;
    const where = `connection_id = $4 AND event_id = $5`;
    const update = (ws: string) => db.inWorkspace(ws, (c) => c.query(`UPDATE ${this.t("outbox")} SET status = $1, detail = $2, settled_at = $3 WHERE ${where} AND status = 'pending'`, [outcome, detail ?? null, new Date().toISOString(), connectionId, eventId]));
    const key = outboxKey(connectionId, eventId);
    try {
      const ws = this.outboxWorkspace.get(key);
      if (ws !== undefined) {
        await update(ws);
        this.outboxWorkspace.delete(key);
        return;
      }
      // A signal this host did not list in pending() (another host's, or one sent before a restart): find its workspaces.
      const owners = (await this.everyWorkspace((c) => c.query(`SELECT 1 FROM ${this.t("outbox")} WHERE connection_id = $1 AND event_id = $2 AND status = 'pending'`, [connectionId, eventId]))).filter((f) => (f.value.rowCount ?? 0) > 0);
      for (const owner of owners) await update(owner.ws);
    } catch (error) {
      throw storeErrorOf(this.display, error);
    }
  }

  async queryAudit(filter: AuditFilter): Promise<AuditPage> {
    const where: string[] = ["position > $1"];
    const params: unknown[] = [filter.after ?? 0];
    if (filter.loop_id !== undefined) (params.push(filter.loop_id), where.push(`loop_id = $${params.length}`));
    if (filter.trace_id !== undefined) (params.push(filter.trace_id), where.push(`trace_id = $${params.length}`));
    params.push(filter.limit + 1);
    const sql = `SELECT ${AUDIT_COLUMNS} FROM ${this.t("audit_events")} WHERE ${where.join(" AND ")} ORDER BY position LIMIT $${params.length}`;
    const found = await this.everyWorkspace((c) => c.query<AuditRow>(sql, params), filter.workspace_id);
    const rows = found.flatMap((f) => f.value.rows).sort((a, b) => Number(a.position) - Number(b.position));
    const more = rows.length > filter.limit;
    const kept = rows.slice(0, filter.limit);
    const page: AuditPage = { events: kept.map((r) => ({ event: eventOf(r), chain_seq: Number(r.chain_seq), prev_hash: r.prev_hash, hash: r.hash, position: Number(r.position) })) };
    if (more) page.next = Number(kept[kept.length - 1]?.position);
    return page;
  }

  async verifyAudit(workspaceId?: string): Promise<ChainReport[]> {
    const db = await this.ready;
    const found = await this.everyWorkspace(async (c, ws) => ({ chain: await checkChain(c, db), problems: await traceProblems(c, this.t, ws) }), workspaceId);
    const reports = found.flatMap(({ ws, value }) => (value.chain ? [{ workspace_id: ws, ...value.chain }] : []));
    return withTraceProblems(reports, found.flatMap(({ value }) => value.problems));
  }

  async info(): Promise<StoreInfo> {
    const counted = await this.everyWorkspace(async (c) => {
      const out: Record<string, number> = {};
      for (const t of TENANT_TABLES) out[t] = (await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.t(t)}`)).rows[0]?.n ?? 0;
      return out;
    });
    const counts: Record<string, number> = Object.fromEntries(TENANT_TABLES.map((t) => [t, 0]));
    for (const { value } of counted) for (const [t, n] of Object.entries(value)) counts[t] = (counts[t] ?? 0) + n;
    counts.workspaces = counted.length;
    try {
      const size = await (await this.pool()).query<{ bytes: string | null }>("SELECT sum(pg_total_relation_size(c.oid))::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'", [this.address.schema]);
      return { kind: "postgres", location: `${this.display} schema ${this.address.schema}`, version: SCHEMA_VERSION, bytes: Number(size.rows[0]?.bytes ?? 0), counts };
    } catch (error) {
      throw storeErrorOf(this.display, error);
    }
  }

  /** Every row of the store's tables for `pulse store export --jsonl`, streamed (store-export.ts). */
  async *rows(): AsyncGenerator<{ table: string; row: Record<string, unknown> }> {
    try {
      yield* exportRows(await this.pool(), this.t);
    } catch (error) {
      throw storeErrorOf(this.display, error);
    }
  }

  async close(): Promise<void> {
    const db = await this.ready.catch(() => undefined);
    await db?.close();
  }
}

function outboxKey(connectionId: string, eventId: string): string {
  return `${connectionId}\u0000${eventId}`;
}
