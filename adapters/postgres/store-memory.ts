/**
 * A memory graph of the PostgreSQL store: the in-memory graph (adapters/memory) of each workspace,
 * loaded from its `memory_state` rows the first time a call names it, and whose committed
 * transactions become rows written with the unit of work that names them (store.ts).
 *
 * A host reads a workspace's rows once, and again after refresh(): a fleet host taking a loop of
 * the workspace over calls it (Store.refresh), so it sees what the previous holder committed.
 */
import type { MemoryChange } from "../../src/store/contracts.js";
import type { CallContext, MemorySubstrate } from "../../src/substrates/contracts.js";
import { InMemoryMemory, type ChangeRecorder } from "../memory/memory.js";

export type RowLoader = (workspaceId: string) => Promise<MemoryChange[]>;

export class PostgresMemory implements MemorySubstrate {
  /** What answers a call without a valid workspace: the graph refuses it, with its reason. */
  private readonly unbound: InMemoryMemory;
  private readonly workspaces = new Map<string, { graph: InMemoryMemory; loading: Promise<void> }>();

  constructor(
    private readonly loadRows: RowLoader,
    private readonly onCommit: ChangeRecorder,
  ) {
    this.unbound = new InMemoryMemory(onCommit);
  }

  /** Loads the call's workspace once; an invalid context is left to the graph to refuse. */
  private async ready(ctx: CallContext): Promise<InMemoryMemory> {
    const workspace = (ctx as { workspace_id?: unknown } | undefined)?.workspace_id;
    if (typeof workspace !== "string" || workspace === "") return this.unbound;
    let entry = this.workspaces.get(workspace);
    if (!entry) {
      const graph = new InMemoryMemory(this.onCommit);
      const loading = this.loadRows(workspace).then((rows) => graph.load(workspace, rows));
      entry = { graph, loading };
      this.workspaces.set(workspace, entry);
      // A failed load (the database away) is tried again on the next call.
      loading.catch(() => this.workspaces.get(workspace) === entry && this.workspaces.delete(workspace));
    }
    await entry.loading;
    return entry.graph;
  }

  /**
   * Forgets the workspace's graph, so the next call reads its rows again; kept while one of its
   * transactions is open here (another loop of this host is mid-phase on it).
   */
  refresh(workspaceId: string): void {
    const entry = this.workspaces.get(workspaceId);
    if (entry && entry.graph.openTransactions(workspaceId) === 0) this.workspaces.delete(workspaceId);
  }

  async retrieve_context(args: Parameters<MemorySubstrate["retrieve_context"]>[0], ctx: CallContext) {
    return (await this.ready(ctx)).retrieve_context(args, ctx);
  }
  async store_node(args: Parameters<MemorySubstrate["store_node"]>[0], ctx: CallContext) {
    return (await this.ready(ctx)).store_node(args, ctx);
  }
  async store_edge(args: Parameters<MemorySubstrate["store_edge"]>[0], ctx: CallContext) {
    return (await this.ready(ctx)).store_edge(args, ctx);
  }
  async learn_from_outcome(args: Parameters<MemorySubstrate["learn_from_outcome"]>[0], ctx: CallContext) {
    return (await this.ready(ctx)).learn_from_outcome(args, ctx);
  }
  async consolidate(args: Parameters<MemorySubstrate["consolidate"]>[0], ctx: CallContext) {
    return (await this.ready(ctx)).consolidate(args, ctx);
  }
  async topology_analyze(args: Parameters<MemorySubstrate["topology_analyze"]>[0], ctx: CallContext) {
    return (await this.ready(ctx)).topology_analyze(args, ctx);
  }
  async begin_transaction(args: Parameters<MemorySubstrate["begin_transaction"]>[0], ctx: CallContext) {
    return (await this.ready(ctx)).begin_transaction(args, ctx);
  }
  async commit_transaction(args: Parameters<MemorySubstrate["commit_transaction"]>[0], ctx: CallContext) {
    return (await this.ready(ctx)).commit_transaction(args, ctx);
  }
  async rollback_transaction(args: Parameters<MemorySubstrate["rollback_transaction"]>[0], ctx: CallContext) {
    return (await this.ready(ctx)).rollback_transaction(args, ctx);
  }
}
