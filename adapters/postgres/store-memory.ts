/**
 * A memory graph of the PostgreSQL store: the in-memory graph (adapters/memory) of each workspace,
 * loaded from its `memory_state` rows the first time a call names it, and whose committed
 * transactions become rows written with the unit of work that names them (store.ts).
 *
 * Several hosts of a fleet may write one graph (two loops sharing `memory://…`, their leases on
 * different hosts), so (schema version 5, schema-memory.ts):
 *   - ids come from blocks the database reserves for this host alone (reserve_memory_ids): two
 *     hosts never hand out the same node_N or mem_evt_N;
 *   - each row a unit writes names the row it replaces; the database refuses a unit whose rows
 *     another host changed meanwhile (PU004) instead of replacing them, and the graph is read again;
 *   - a transaction, or a call outside one, first compares the graph's stamp (a token each commit
 *     leaves in the counters row) with the one this host last saw, and reads the graph again when
 *     another host committed since: reads see the other host's commits from the next transaction on.
 */
import { randomUUID } from "node:crypto";
import type { MemoryChange } from "../../src/store/contracts.js";
import type { CallContext, MemorySubstrate } from "../../src/substrates/contracts.js";
import type { GraphCounters } from "../memory/graph.js";
import { InMemoryMemory } from "../memory/memory.js";

/** How a graph's rows are read and its ids reserved (store.ts). */
export interface GraphRows {
  load(workspaceId: string): Promise<MemoryChange[]>;
  /** The first ids of a block of `size` of each kind, reserved for this host alone. */
  reserve(workspaceId: string, local: GraphCounters, size: number): Promise<GraphCounters>;
  /** The stamp the last commit left in the graph's counters row ("" when none). */
  stamp(workspaceId: string): Promise<string>;
}

/** Told a committed transaction's rows, with the loaded graph (Entry) they were made on. */
export type StagedRecorder = (workspaceId: string, txId: string, changes: MemoryChange[], entry: object) => void;

/** Ids reserved at a time, and how few left make the next call reserve more first. */
const BLOCK = 1000;
const LOW = 100;

interface Entry {
  graph: InMemoryMemory;
  loading: Promise<void>;
  /** The stamp of the rows this host last read or wrote. */
  stamp: string;
  /** Units with this graph's rows on the wire: the database may be behind this host. */
  inflight: number;
  /** Differs from the database (a unit refused or lost): read again when quiet. */
  stale: boolean;
  reserving?: Promise<void> | undefined;
}

const stampOf = (rows: readonly MemoryChange[]): string => {
  const counters = rows.find((r) => r.kind === "counters")?.value as { stamp?: unknown } | undefined;
  return typeof counters?.stamp === "string" ? counters.stamp : "";
};

export class PostgresMemory implements MemorySubstrate {
  /** What answers a call without a valid workspace: the graph refuses it, with its reason. */
  private readonly unbound: InMemoryMemory;
  private readonly workspaces = new Map<string, Entry>();
  /** Stamps are this host's: a prefix of its own and a count. */
  private readonly writer = randomUUID().slice(0, 8);
  private stamps = 0;

  constructor(
    private readonly rows: GraphRows,
    private readonly onCommit: StagedRecorder,
  ) {
    this.unbound = new InMemoryMemory();
  }

  private open(workspace: string): Entry {
    const entry = {} as Entry;
    entry.graph = new InMemoryMemory((ws, txId, changes) => this.onCommit(ws, txId, changes, entry));
    entry.stamp = "";
    entry.inflight = 0;
    entry.stale = false;
    entry.loading = this.rows.load(workspace).then((rows) => {
      entry.graph.load(workspace, rows);
      // Every id from now on comes from a block the database reserved for this host.
      entry.graph.idAllocator(workspace).limitIds();
      entry.stamp = stampOf(rows);
    });
    this.workspaces.set(workspace, entry);
    // A failed load (the database away) is tried again on the next call.
    entry.loading.catch(() => this.workspaces.get(workspace) === entry && this.workspaces.delete(workspace));
    return entry;
  }

  /** Nothing of this host is open or on the wire for the graph: it may be read again. */
  private quiet(workspace: string, entry: Entry): boolean {
    return this.workspaces.get(workspace) === entry && entry.inflight === 0 && entry.graph.openTransactions(workspace) === 0;
  }

  /**
   * The call's workspace graph, loaded, read again when stale or (for a transaction's start or a
   * call outside one) when another host committed since; ids reserved first for a write.
   */
  private async ready(ctx: CallContext, use: "read" | "write" | "begin"): Promise<InMemoryMemory> {
    const workspace = (ctx as { workspace_id?: unknown } | undefined)?.workspace_id;
    if (typeof workspace !== "string" || workspace === "") return this.unbound;
    let entry = this.workspaces.get(workspace);
    if (entry && entry.stale && this.quiet(workspace, entry)) entry = undefined;
    else if (entry && (use === "begin" || ctx.tx_id === undefined) && this.quiet(workspace, entry)) {
      const seen = entry;
      await seen.loading.catch(() => undefined);
      // The database away: the graph as last read answers (the unit's commit reports the outage).
      const stamp = await this.rows.stamp(workspace).catch(() => seen.stamp);
      if (stamp !== seen.stamp && this.quiet(workspace, seen)) entry = undefined;
    }
    entry ??= this.open(workspace);
    await entry.loading;
    if (use !== "read") await this.reserved(workspace, entry);
    return entry.graph;
  }

  private async reserved(workspace: string, entry: Entry): Promise<void> {
    const ids = entry.graph.idAllocator(workspace);
    if (ids.idsLeft() >= LOW) return;
    entry.reserving ??= this.rows
      .reserve(workspace, ids.counters(), BLOCK)
      .then((from) => ids.useIds(from, { node: from.node + BLOCK, edge: from.edge + BLOCK, event: from.event + BLOCK, created: from.created + BLOCK }))
      .finally(() => (entry.reserving = undefined));
    await entry.reserving;
  }

  /**
   * A unit of the workspace's graph is being sent: the stamp its counters row carries, and the
   * one this host saw before (the database marks the graph changed when it holds another).
   * settled() must follow.
   */
  sending(workspace: string): { stamp: string; base: string; entry: Entry | undefined } {
    const entry = this.workspaces.get(workspace);
    const stamp = `${this.writer}-${++this.stamps}`;
    const base = entry?.stamp ?? "";
    if (entry) (entry.inflight++, (entry.stamp = stamp));
    return { stamp, base, entry };
  }

  /** The unit sent: refused or lost, or made on a graph read since, the graph is read again. */
  settled(workspace: string, sent: { entry: Entry | undefined }, staged: object | undefined, ok: boolean): void {
    if (sent.entry) sent.entry.inflight--;
    const current = this.workspaces.get(workspace);
    if (current && (!ok || current !== staged || current !== sent.entry)) current.stale = true;
  }

  /**
   * Forgets the workspace's graph, so the next call reads its rows again; kept while one of its
   * transactions is open here (another loop of this host is mid-phase on it).
   */
  refresh(workspaceId: string): void {
    const entry = this.workspaces.get(workspaceId);
    if (entry && this.quiet(workspaceId, entry)) this.workspaces.delete(workspaceId);
  }

  async retrieve_context(args: Parameters<MemorySubstrate["retrieve_context"]>[0], ctx: CallContext) {
    return (await this.ready(ctx, "read")).retrieve_context(args, ctx);
  }
  async store_node(args: Parameters<MemorySubstrate["store_node"]>[0], ctx: CallContext) {
    return (await this.ready(ctx, "write")).store_node(args, ctx);
  }
  async store_edge(args: Parameters<MemorySubstrate["store_edge"]>[0], ctx: CallContext) {
    return (await this.ready(ctx, "write")).store_edge(args, ctx);
  }
  async learn_from_outcome(args: Parameters<MemorySubstrate["learn_from_outcome"]>[0], ctx: CallContext) {
    return (await this.ready(ctx, "write")).learn_from_outcome(args, ctx);
  }
  async consolidate(args: Parameters<MemorySubstrate["consolidate"]>[0], ctx: CallContext) {
    return (await this.ready(ctx, "write")).consolidate(args, ctx);
  }
  async topology_analyze(args: Parameters<MemorySubstrate["topology_analyze"]>[0], ctx: CallContext) {
    return (await this.ready(ctx, "read")).topology_analyze(args, ctx);
  }
  async begin_transaction(args: Parameters<MemorySubstrate["begin_transaction"]>[0], ctx: CallContext) {
    return (await this.ready(ctx, "begin")).begin_transaction(args, ctx);
  }
  async commit_transaction(args: Parameters<MemorySubstrate["commit_transaction"]>[0], ctx: CallContext) {
    return (await this.ready(ctx, "read")).commit_transaction(args, ctx);
  }
  async rollback_transaction(args: Parameters<MemorySubstrate["rollback_transaction"]>[0], ctx: CallContext) {
    return (await this.ready(ctx, "read")).rollback_transaction(args, ctx);
  }
}
