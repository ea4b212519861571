/**
 * A memory graph of the PostgreSQL store: the in-memory graph (adapters/memory) whose workspaces
 * are loaded from their `memory_state` rows the first time a call names them, and whose committed
 * transactions become rows written with the unit of work that names them (store.ts).
 *
 * A host reads a workspace's rows once; the fleet's lease keeps one host on a loop's workspace at
 * a time (docs/deploy.md says what that means for graphs shared between loops).
 */
import type { MemoryChange } from "../../src/store/contracts.js";
import type { CallContext, MemorySubstrate } from "../../src/substrates/contracts.js";
import { InMemoryMemory } from "../memory/memory.js";

export type RowLoader = (workspaceId: string) => Promise<MemoryChange[]>;

export class PostgresMemory implements MemorySubstrate {
  private readonly inner: InMemoryMemory;
  private readonly loaded = new Map<string, Promise<void>>();

  constructor(
    private readonly loadRows: RowLoader,
    onCommit: (workspaceId: string, txId: string, changes: MemoryChange[]) => void,
  ) {
    this.inner = new InMemoryMemory(onCommit);
  }

  /** Loads the call's workspace once; an invalid context is left to the graph to refuse. */
  private async ready(ctx: CallContext): Promise<InMemoryMemory> {
    const workspace = (ctx as { workspace_id?: unknown } | undefined)?.workspace_id;
    if (typeof workspace !== "string" || workspace === "") return this.inner;
    let loading = this.loaded.get(workspace);
    if (!loading) {
      loading = this.loadRows(workspace).then((rows) => this.inner.load(workspace, rows));
      // A failed load (the database away) is tried again on the next call.
      loading.catch(() => this.loaded.delete(workspace));
      this.loaded.set(workspace, loading);
    }
    await loading;
    return this.inner;
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
