/**
 * In-memory §9.1 memory substrate: one knowledge graph per workspace, transactions as overlays
 * (graph.ts), SCC/κ analysis (topology.ts). Everything is partitioned by ctx.workspace_id, down
 * to id counters and transactions, so one workspace cannot even infer another's activity.
 */
import { SubstrateRequestError } from "../../src/substrates/contracts.js";
import type { CallContext, ConfidenceUpdate, MemoryEdge, MemoryNode, MemorySubstrate, RetrieveContextResult } from "../../src/substrates/contracts.js";
import type { ConsolidationEvent, OutcomeSignal, OutcomeStatus, TopologyContext, TopologyNode } from "../../src/tokens/types.js";
import { TOKEN_VERSION } from "../../src/tokens/types.js";
import { canonicalJson, cloneJson } from "../shared/json.js";
import { badRequest, checkContext, describe, requireArgs, requireString } from "../shared/validate.js";
import { jsonArgument, scopeNodeIds, stringArray, validNode, validOutcome } from "./memory-args.js";
import { CommittedView, edgeKey, WorkspaceGraph } from "./graph.js";
import { grouped, wordsOf, type NodeQuery } from "./node-index.js";
import { Transaction } from "./transaction.js";
import { RecordingView, replayChanges } from "./graph-changes.js";
import type { MemoryChange } from "../../src/store/contracts.js";
import type { EdgeRecord, GraphView, Mutation, NodeRecord, StoredNode } from "./graph.js";
import { topologyContext } from "./topology.js";

const SLOT = "memory";

/** Confidence change per outcome (§6.3 statuses); a timeout says nothing about the beliefs. */
export const CONFIDENCE_DELTAS: Readonly<Record<OutcomeStatus, number>> = { success: 0.05, partial: 0.01, failure: -0.05, timeout: 0 };
export const DEFAULT_CONFIDENCE = 0.5;
export const DEFAULT_K = 10;

interface WorkspaceState {
  graph: WorkspaceGraph;
  committed: CommittedView;
  transactions: Map<string, Transaction>;
  nextTx: number;
}

/**
 * Told every committed transaction's changes, as rows (a persistent store writes them), and
 * whether the runtime journals them with a phase (CallContext.journaled).
 */
export type ChangeRecorder = (workspaceId: string, txId: string, changes: MemoryChange[], journaled: boolean) => void;
/** Told the changes of a write made outside any transaction, as it lands. */
export type DirectRecorder = (workspaceId: string, changes: MemoryChange[]) => void;

export class InMemoryMemory implements MemorySubstrate {
  private readonly workspaces = new Map<string, WorkspaceState>();

  constructor(
    private readonly recorder?: ChangeRecorder,
    private readonly direct?: DirectRecorder,
  ) {}

  /** Replays persisted rows into a workspace's graph (a store opening). */
  load(workspaceId: string, changes: Iterable<MemoryChange>): void {
    replayChanges(this.workspace(workspaceId).graph, changes);
  }

  async retrieve_context(args: { query: unknown; k?: number }, ctx: CallContext): Promise<RetrieveContextResult> {
    const view = this.view(ctx);
    const a = requireArgs(SLOT, "retrieve_context", args);
    const k = a.k === undefined ? DEFAULT_K : a.k;
    if (typeof k !== "number" || !Number.isInteger(k) || k < 0) throw badRequest(SLOT, `retrieve_context: k must be an integer ≥ 0, got ${describe(k)}`);
    const query = nodeQuery(jsonArgument(a.query ?? null, "retrieve_context: query"));
    const chosen = view.retrieve(query, k);
    return { nodes: chosen.map((record) => cloneJson(record.node)), topology: topologyOf(ctx.trace_id, view, chosen) };
  }

  async store_node(args: { node: MemoryNode }, ctx: CallContext): Promise<{ node_id: string; audit_event_id: string; existing: boolean }> {
    return this.written(ctx, (view) => this.storeNode(view, args, ctx));
  }

  private storeNode(view: GraphView, args: { node: MemoryNode }, ctx: CallContext): { node_id: string; audit_event_id: string; existing: boolean } {
    const node = validNode(requireArgs(SLOT, "store_node", args).node);
    if (node.signature !== undefined) {
      const id = view.nodeIdForSignature(node.signature);
      const existing = id === undefined ? undefined : view.node(id);
      if (existing) return { node_id: existing.node.id, audit_event_id: existing.audit_event_id, existing: true };
    }
    if (node.id !== undefined) {
      const existing = view.node(node.id);
      if (existing) {
        // Same node again is a harmless replay; anything else would rewrite history (§7.2).
        if (sameContent(existing.node, node)) return { node_id: existing.node.id, audit_event_id: existing.audit_event_id, existing: true };
        throw new SubstrateRequestError(SLOT, "NODE_EXISTS", `store_node: node "${node.id}" already exists with different content; stored nodes are never rewritten (only their confidence changes, through learn_from_outcome)`);
      }
    }
    const { graph } = view;
    const id = node.id ?? graph.allocateNodeId((candidate) => view.node(candidate) !== undefined);
    const stored: StoredNode = { ...node, id, confidence: node.confidence ?? DEFAULT_CONFIDENCE };
    const auditEventId = graph.allocateEventId();
    const words = [...wordsOf(stored.content, wordsOf(stored.type ?? ""))];
    const key = canonicalJson([stored.type ?? null, stored.content ?? null]);
    view.putNode({ node: stored, trace_id: ctx.trace_id, audit_event_id: auditEventId, words, key, created: graph.allocateCreated(), rev: 0 });
    if (stored.signature !== undefined) view.setSignature(stored.signature, id);
    view.record({ event_id: auditEventId, operation: "store_node", trace_id: ctx.trace_id, ids: [id] });
    return { node_id: id, audit_event_id: auditEventId, existing: false };
  }

  async store_edge(args: MemoryEdge, ctx: CallContext): Promise<{ edge_id: string }> {
    return this.written(ctx, (view) => this.storeEdge(view, args, ctx));
  }

  private storeEdge(view: GraphView, args: MemoryEdge, ctx: CallContext): { edge_id: string } {
    const a = requireArgs(SLOT, "store_edge", args);
    const src = requireString(SLOT, "store_edge", a, "src");
    const dst = requireString(SLOT, "store_edge", a, "dst");
    const type = requireString(SLOT, "store_edge", a, "type");
    for (const end of [src, dst]) {
      if (!view.node(end)) throw new SubstrateRequestError(SLOT, "UNKNOWN_NODE", `store_edge: no node "${end}" in this workspace`);
    }
    const key = edgeKey(src, dst, type);
    const existing = view.edge(key);
    if (existing) return { edge_id: existing.edge_id };
    const edgeId = view.graph.edgeIdFor(key);
    view.putEdge({ edge_id: edgeId, src, dst, type, trace_id: ctx.trace_id });
    view.record({ event_id: view.graph.allocateEventId(), operation: "store_edge", trace_id: ctx.trace_id, ids: [edgeId] });
    return { edge_id: edgeId };
  }

  /**
   * Adjusts the confidence of the outcome's causal parents and nothing else (§7.2). Learning the
   * same outcome (action_id, status) again returns the first answer without applying it twice:
   * §9.1 marks the operation idempotent.
   */
  async learn_from_outcome(args: { outcome: OutcomeSignal }, ctx: CallContext): Promise<ConfidenceUpdate[]> {
    return this.written(ctx, (view) => this.learn(view, args, ctx));
  }

  private learn(view: GraphView, args: { outcome: OutcomeSignal }, ctx: CallContext): ConfidenceUpdate[] {
    const outcome = validOutcome(requireArgs(SLOT, "learn_from_outcome", args).outcome);
    const key = JSON.stringify([outcome.action_id, outcome.status]);
    const seen = view.learned(key);
    if (seen) return cloneJson(seen);
    const delta = CONFIDENCE_DELTAS[outcome.status];
    const updates: ConfidenceUpdate[] = [];
    for (const id of new Set(outcome.causal_parent_ids ?? [])) {
      const record = view.node(id);
      if (!record) continue;
      const previous = record.node.confidence;
      const confidence = clampConfidence(previous + delta);
      updates.push({ node_id: id, previous, confidence });
      if (confidence !== previous) view.putNode({ ...record, node: { ...record.node, confidence } });
    }
    view.setLearned(key, updates);
    const changed = updates.filter((u) => u.confidence !== u.previous).map((u) => u.node_id);
    if (changed.length > 0) view.record({ event_id: view.graph.allocateEventId(), operation: "learn_from_outcome", trace_id: ctx.trace_id, ids: changed });
    return cloneJson(updates);
  }

  /**
   * Merges nodes with identical (type, content) into the oldest of them. The survivor keeps its
   * fields, takes the highest confidence of the group and the union of causal_parent_ids; edges
   * of merged nodes move to the survivor, except those that ran between two merged duplicates.
   * `scope: { node_ids }` limits the merge to those nodes. affected_node_ids[i] was merged into
   * merged_into_ids[i]. Idempotent: a second run finds nothing to merge and reports "stable".
   */
  async consolidate(args: { scope?: unknown }, ctx: CallContext): Promise<ConsolidationEvent> {
    return this.written(ctx, (view) => this.consolidateIn(view, args, ctx));
  }

  private consolidateIn(view: GraphView, args: { scope?: unknown }, ctx: CallContext): ConsolidationEvent {
    const only = scopeNodeIds(requireArgs(SLOT, "consolidate", args).scope);
    const mergedInto = new Map<string, string>();
    for (const [survivor, ...duplicates] of only === undefined ? view.duplicateGroups() : scopedGroups(view, only)) {
      view.putNode({ ...survivor!, node: absorb(survivor!.node, duplicates.map((d) => d.node)) });
      for (const duplicate of duplicates) {
        mergedInto.set(duplicate.node.id, survivor!.node.id);
        view.deleteNode(duplicate.node.id);
        if (duplicate.node.signature !== undefined) view.setSignature(duplicate.node.signature, survivor!.node.id);
      }
    }
    if (mergedInto.size > 0) redirectEdges(view, mergedInto, ctx.trace_id);
    const affected = [...mergedInto.keys()];
    const into = [...mergedInto.values()];
    if (affected.length > 0) {
      view.record({ event_id: view.graph.allocateEventId(), operation: "consolidate", trace_id: ctx.trace_id, ids: [...affected, ...new Set(into)] });
    }
    return {
      token: "ConsolidationEvent",
      version: TOKEN_VERSION,
      trace_id: ctx.trace_id,
      timescale: "medium",
      affected_node_ids: affected,
      merged_into_ids: into,
      convergence_status: affected.length === 0 ? "stable" : "unstable",
      metric_deltas: { graph_size: 0 - affected.length },
    };
  }

  /** SCCs and κ of the subgraph induced by `node_ids` (unknown ids ignored), or of the whole graph. */
  async topology_analyze(args: { node_ids?: string[] }, ctx: CallContext): Promise<TopologyContext> {
    const view = this.view(ctx);
    const ids = requireArgs(SLOT, "topology_analyze", args).node_ids;
    if (ids === undefined) return topologyOf(ctx.trace_id, view, view.nodes(), true);
    const records: NodeRecord[] = [];
    for (const id of new Set(stringArray(ids, "topology_analyze: node_ids"))) {
      const record = view.node(id);
      if (record) records.push(record);
    }
    return topologyOf(ctx.trace_id, view, records);
  }

  async begin_transaction(args: Record<string, never>, ctx: CallContext): Promise<{ tx_id: string }> {
    checkContext(SLOT, ctx);
    requireArgs(SLOT, "begin_transaction", args);
    if (ctx.tx_id !== undefined) throw new SubstrateRequestError(SLOT, "NESTED_TX", `begin_transaction: called inside transaction "${ctx.tx_id}"; transactions do not nest`);
    const state = this.workspace(ctx.workspace_id);
    const txId = `tx_${state.nextTx++}`;
    state.transactions.set(txId, new Transaction(state.graph));
    return { tx_id: txId };
  }

  /** Applies the transaction atomically, or refuses with TX_CONFLICT and discards it. */
  async commit_transaction(args: { tx_id: string }, ctx: CallContext): Promise<void> {
    const tx = this.finish("commit_transaction", args, ctx);
    const conflict = tx.conflict();
    if (conflict) throw new SubstrateRequestError(SLOT, "TX_CONFLICT", `commit_transaction: ${conflict}; the transaction was rolled back`);
    if (!this.recorder) return tx.apply();
    const view = new RecordingView(tx.graph);
    tx.apply(view);
    this.recorder(ctx.workspace_id, args.tx_id, view.finish(), ctx.journaled === true);
  }

  async rollback_transaction(args: { tx_id: string }, ctx: CallContext): Promise<void> {
    this.finish("rollback_transaction", args, ctx);
  }

  // -------------------------------------------------------------------------------------------
  // Inspection for hosts and tests: committed state only, copies.

  /** The memory's own trail of committed mutations, each with the trace_id of the call. */
  mutations(workspaceId: string): Mutation[] {
    return cloneJson(this.workspaces.get(workspaceId)?.graph.mutations ?? []);
  }

  /** Committed nodes and edges with the trace_id of the call that wrote them. */
  inspect(workspaceId: string): { nodes: Array<{ node: StoredNode; trace_id: string; audit_event_id: string }>; edges: EdgeRecord[] } {
    const graph = this.workspaces.get(workspaceId)?.graph;
    if (!graph) return { nodes: [], edges: [] };
    return cloneJson({
      nodes: [...graph.nodes.values()].map(({ node, trace_id, audit_event_id }) => ({ node, trace_id, audit_event_id })),
      edges: [...graph.edges.values()],
    });
  }

  /** The workspace's id allocator, for a store that reserves blocks of ids per writer (adapters/postgres). */
  idAllocator(workspaceId: string): Pick<WorkspaceGraph, "limitIds" | "useIds" | "idsLeft" | "counters"> {
    return this.workspace(workspaceId).graph;
  }

  openTransactions(workspaceId: string): number {
    return this.workspaces.get(workspaceId)?.transactions.size ?? 0;
  }

  // -------------------------------------------------------------------------------------------

  private workspace(workspaceId: string): WorkspaceState {
    let state = this.workspaces.get(workspaceId);
    if (!state) {
      const graph = new WorkspaceGraph();
      state = { graph, committed: new CommittedView(graph), transactions: new Map(), nextTx: 1 };
      this.workspaces.set(workspaceId, state);
    }
    return state;
  }

  /**
   * Runs a write in the call's view; one made outside a transaction is told to `direct` as it
   * lands (a store writes it on its own).
   */
  private written<T>(ctx: CallContext, write: (view: GraphView) => T): Promise<T> {
    try {
      const view = this.view(ctx);
      if (!this.direct || ctx.tx_id !== undefined) return Promise.resolve(write(view));
      const recording = new RecordingView(view.graph);
      const result = write(recording);
      const changes = recording.finish();
      if (changes.length > 0) this.direct(ctx.workspace_id, changes);
      return Promise.resolve(result);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The graph as this call sees it: its transaction's overlay, or the committed graph. */
  private view(ctx: CallContext): GraphView {
    checkContext(SLOT, ctx);
    const state = this.workspace(ctx.workspace_id);
    if (ctx.tx_id === undefined) return state.committed;
    const tx = state.transactions.get(ctx.tx_id);
    if (!tx) throw unknownTx(ctx.tx_id);
    return tx;
  }

  private finish(operation: string, args: { tx_id: string }, ctx: CallContext): Transaction {
    checkContext(SLOT, ctx);
    const txId = requireString(SLOT, operation, requireArgs(SLOT, operation, args), "tx_id");
    const state = this.workspace(ctx.workspace_id);
    const tx = state.transactions.get(txId);
    if (!tx) throw unknownTx(txId);
    state.transactions.delete(txId);
    return tx;
  }
}

function unknownTx(txId: string): SubstrateRequestError {
  return new SubstrateRequestError(SLOT, "UNKNOWN_TX", `no open transaction "${txId}" in this workspace (never begun, already finished, or begun in another workspace)`);
}

/** The TopologyContext of exactly these nodes: only the edges among them are read. */
function topologyOf(traceId: string, view: GraphView, records: readonly NodeRecord[], all = false): TopologyContext {
  const nodes: TopologyNode[] = records.map(({ node }) => (node.type === undefined ? { id: node.id, confidence: node.confidence } : { id: node.id, type: node.type, confidence: node.confidence }));
  const among = all ? view.edges() : view.edgesOf(new Set(nodes.map((n) => n.id)), true);
  return topologyContext(traceId, nodes, among.map(({ src, dst, type }) => ({ src, dst, type })));
}

/** Duplicate groups among the nodes of a consolidate scope (which may name unknown ids). */
function scopedGroups(view: GraphView, only: ReadonlySet<string>): NodeRecord[][] {
  const byKey = new Map<string, NodeRecord[]>();
  for (const id of only) {
    const record = view.node(id);
    if (!record) continue;
    const group = byKey.get(record.key);
    if (group) group.push(record);
    else byKey.set(record.key, [record]);
  }
  return grouped(byKey.values());
}

/**
 * What retrieve_context selects (docs/substrates-http.md): a string's words, all of them; an
 * object `{type?, text?}` (strings) the nodes of that type whose words include text's; any other
 * value the words of its keys and values. No words and no type: every node.
 */
function nodeQuery(query: unknown): NodeQuery {
  if (query !== null && typeof query === "object" && !Array.isArray(query)) {
    const q = query as Record<string, unknown>;
    const keys = Object.keys(q);
    if (keys.length > 0 && keys.every((k) => (k === "type" || k === "text") && typeof q[k] === "string")) {
      return { words: [...wordsOf(q.text ?? "")], ...(typeof q.type === "string" ? { type: q.type } : {}) };
    }
  }
  return { words: [...wordsOf(query)] };
}

/** Everything but confidence, which learning changes after the store. */
function sameContent(stored: StoredNode, incoming: MemoryNode): boolean {
  return canonicalJson({ ...stored, confidence: undefined }) === canonicalJson({ ...incoming, confidence: undefined });
}

function absorb(survivor: StoredNode, duplicates: readonly StoredNode[]): StoredNode {
  const confidence = Math.max(survivor.confidence, ...duplicates.map((d) => d.confidence));
  const parents = [...new Set([survivor, ...duplicates].flatMap((n) => n.causal_parent_ids ?? []))];
  const merged: StoredNode = { ...survivor, confidence };
  if (parents.length > 0) merged.causal_parent_ids = parents;
  return merged;
}

function redirectEdges(view: GraphView, mergedInto: ReadonlyMap<string, string>, traceId: string): void {
  for (const edge of view.edgesOf(new Set(mergedInto.keys()), false)) {
    const src = mergedInto.get(edge.src) ?? edge.src;
    const dst = mergedInto.get(edge.dst) ?? edge.dst;
    if (src === edge.src && dst === edge.dst) continue;
    view.deleteEdge(edgeKey(edge.src, edge.dst, edge.type));
    // An edge between two duplicates of one belief says nothing once they are one node.
    if (src === dst && edge.src !== edge.dst) continue;
    const key = edgeKey(src, dst, edge.type);
    if (!view.edge(key)) view.putEdge({ edge_id: view.graph.edgeIdFor(key), src, dst, type: edge.type, trace_id: traceId });
  }
}

/** Rounded to 12 decimals so repeated ±0.05 steps do not accumulate binary noise. */
function clampConfidence(value: number): number {
  return Math.min(1, Math.max(0, Math.round(value * 1e12) / 1e12));
}
