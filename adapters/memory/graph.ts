/**
 * The state of one workspace's knowledge graph, and the two ways to see it: directly (calls
 * without a transaction) or through a transaction's overlay (its own writes on top of the
 * committed graph). Operations are written once against GraphView and work in both.
 *
 * The committed graph keeps indexes (node-index.ts, and edges by their ends) so that reads cost
 * what they return, not the size of the history. Transactions (transaction.ts) read through them.
 */
import type { ConfidenceUpdate } from "../../src/substrates/contracts.js";
import { grouped, mostConfident, NodeIndex, type NodeQuery } from "./node-index.js";
import { edgeKey, type EdgeRecord, type Mutation, type NodeRecord } from "./records.js";

export { edgeKey, type EdgeRecord, type Mutation, type NodeRecord, type StoredNode } from "./records.js";

/** Where an edge stands in the order edges were first stored (readers see edges in that order). */
interface Placed {
  edge: EdgeRecord;
  seq: number;
}

export interface GraphCounters {
  node: number;
  edge: number;
  event: number;
  created: number;
}

export class WorkspaceGraph {
  readonly nodes = new Map<string, NodeRecord>();
  readonly index = new NodeIndex();
  readonly signatures = new Map<string, string>();
  readonly edges = new Map<string, EdgeRecord>();
  /** Edge keys by the node they leave and the node they reach. */
  readonly outEdges = new Map<string, Set<string>>();
  readonly inEdges = new Map<string, Set<string>>();
  /** Each stored edge key's place in the order of graph.edges. */
  readonly edgeSeq = new Map<string, number>();
  private nextSeq = 1;
  /** Ids are handed out once per (src, dst, type) and kept, so store_edge always answers the same id. */
  readonly edgeIds = new Map<string, string>();
  /** Outcomes already learned (action_id, status) and the updates they produced: learning is idempotent. */
  readonly learned = new Map<string, ConfidenceUpdate[]>();
  readonly mutations: Mutation[] = [];
  private nextNode = 1;
  private nextEdge = 1;
  private nextEvent = 1;
  private nextCreated = 1;
  /**
   * Where the ids this graph may hand out end, when another writer shares the graph (a fleet's
   * PostgreSQL store): each writer allocates from a block the database reserved for it alone
   * (useIds), so two hosts never hand out the same node_N or mem_evt_N. Undefined: no limit.
   */
  private limits: GraphCounters | undefined;

  /** The id counters, which a persisted graph keeps with its rows. */
  counters(): GraphCounters {
    return { node: this.nextNode, edge: this.nextEdge, event: this.nextEvent, created: this.nextCreated };
  }

  restoreCounters(c: GraphCounters): void {
    this.nextNode = Math.max(this.nextNode, c.node);
    this.nextEdge = Math.max(this.nextEdge, c.edge);
    this.nextEvent = Math.max(this.nextEvent, c.event);
    this.nextCreated = Math.max(this.nextCreated, c.created);
  }

  /** From now on, ids come from blocks: none are left until useIds gives one. */
  limitIds(): void {
    this.limits ??= this.counters();
  }

  /** Ids from `from` up to (not including) `to`, a block reserved for this writer alone. */
  useIds(from: GraphCounters, to: GraphCounters): void {
    this.nextNode = from.node;
    this.nextEdge = from.edge;
    this.nextEvent = from.event;
    this.nextCreated = from.created;
    this.limits = { ...to };
  }

  /** How many ids of the scarcest kind are left in the block (Infinity without blocks). */
  idsLeft(): number {
    const l = this.limits;
    if (!l) return Number.POSITIVE_INFINITY;
    return Math.min(l.node - this.nextNode, l.edge - this.nextEdge, l.event - this.nextEvent, l.created - this.nextCreated);
  }

  /** A fresh `node_<n>`, skipping ids callers chose themselves. */
  allocateNodeId(taken: (id: string) => boolean): string {
    let id: string;
    do id = `node_${this.nextNode++}`;
    while (taken(id));
    return id;
  }

  edgeIdFor(key: string): string {
    let id = this.edgeIds.get(key);
    if (id === undefined) {
      id = `edge_${this.nextEdge++}`;
      this.edgeIds.set(key, id);
    }
    return id;
  }

  allocateEventId(): string {
    return `mem_evt_${this.nextEvent++}`;
  }

  allocateCreated(): number {
    return this.nextCreated++;
  }

  /** The committed edges between nodes of `ids` (both ends in it), or touching any of them, in store order. */
  committedEdges(ids: ReadonlySet<string>, both: boolean): Placed[] {
    const keys = new Set<string>();
    for (const id of ids) {
      for (const key of this.outEdges.get(id) ?? []) keys.add(key);
      if (!both) for (const key of this.inEdges.get(id) ?? []) keys.add(key);
    }
    const out: Placed[] = [];
    for (const key of keys) {
      const edge = this.edges.get(key) as EdgeRecord;
      if (!both || ids.has(edge.dst)) out.push({ edge, seq: this.edgeSeq.get(key) as number });
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  setEdge(key: string, record: EdgeRecord): void {
    if (!this.edges.has(key)) {
      this.edgeSeq.set(key, this.nextSeq++);
      link(this.outEdges, record.src, key);
      link(this.inEdges, record.dst, key);
    }
    this.edges.set(key, record);
  }

  removeEdge(key: string): void {
    const edge = this.edges.get(key);
    if (!edge) return;
    this.edges.delete(key);
    this.edgeSeq.delete(key);
    unlink(this.outEdges, edge.src, key);
    unlink(this.inEdges, edge.dst, key);
  }
}

function link(map: Map<string, Set<string>>, id: string, key: string): void {
  let set = map.get(id);
  if (!set) map.set(id, (set = new Set()));
  set.add(key);
}

function unlink(map: Map<string, Set<string>>, id: string, key: string): void {
  const set = map.get(id);
  if (!set) return;
  set.delete(key);
  if (set.size === 0) map.delete(id);
}

/**
 * The top k committed nodes the query selects, leaving out `skip` (nodes a transaction overlays).
 * Few candidates are ranked directly; many are found by walking the confidence order.
 */
export function committedTop(graph: WorkspaceGraph, query: NodeQuery, k: number, skip: ReadonlySet<string>): NodeRecord[] {
  const candidates = graph.index.candidates(query);
  const admit = (r: NodeRecord) => !skip.has(r.node.id);
  if (candidates === undefined) return graph.index.top(k, admit);
  // Walking the order finds the k-th match after about k × size / |candidates| nodes; ranking the
  // candidates costs |candidates|: take the cheaper.
  if (candidates.size * candidates.size >= k * graph.index.size) return graph.index.top(k, (r) => candidates.has(r.node.id) && admit(r));
  const records: NodeRecord[] = [];
  for (const id of candidates) if (!skip.has(id)) records.push(graph.nodes.get(id) as NodeRecord);
  return mostConfident(records, k);
}

export const NOTHING: ReadonlySet<string> = new Set();

export interface GraphView {
  readonly graph: WorkspaceGraph;
  node(id: string): NodeRecord | undefined;
  nodeIdForSignature(signature: string): string | undefined;
  /** Every visible node; committed ones in insertion order, then the transaction's new ones. */
  nodes(): NodeRecord[];
  edge(key: string): EdgeRecord | undefined;
  edges(): EdgeRecord[];
  /** The k most confident nodes the query selects (retrieve_context). */
  retrieve(query: NodeQuery, k: number): NodeRecord[];
  /** Nodes sharing a content key, two or more per group (consolidate). */
  duplicateGroups(): NodeRecord[][];
  /** Edges with both ends in `ids` (both), or with either end in it, in store order. */
  edgesOf(ids: ReadonlySet<string>, both: boolean): EdgeRecord[];
  learned(key: string): ConfidenceUpdate[] | undefined;
  putNode(record: NodeRecord): void;
  deleteNode(id: string): void;
  setSignature(signature: string, id: string): void;
  putEdge(record: EdgeRecord): void;
  deleteEdge(key: string): void;
  setLearned(key: string, updates: ConfidenceUpdate[]): void;
  record(mutation: Mutation): void;
}

/** Writes straight into the committed graph. */
export class CommittedView implements GraphView {
  constructor(readonly graph: WorkspaceGraph) {}

  node(id: string) {
    return this.graph.nodes.get(id);
  }
  nodeIdForSignature(signature: string) {
    return this.graph.signatures.get(signature);
  }
  nodes() {
    return [...this.graph.nodes.values()];
  }
  edge(key: string) {
    return this.graph.edges.get(key);
  }
  edges() {
    return [...this.graph.edges.values()];
  }
  retrieve(query: NodeQuery, k: number) {
    return committedTop(this.graph, query, k, NOTHING);
  }
  duplicateGroups() {
    const { graph } = this;
    return grouped([...graph.index.duplicated].map((key) => [...(graph.index.group(key) ?? [])].map((id) => graph.nodes.get(id) as NodeRecord)));
  }
  edgesOf(ids: ReadonlySet<string>, both: boolean) {
    return this.graph.committedEdges(ids, both).map((p) => p.edge);
  }
  learned(key: string) {
    return this.graph.learned.get(key);
  }
  putNode(record: NodeRecord) {
    const previous = this.graph.nodes.get(record.node.id);
    const stored = { ...record, rev: (previous?.rev ?? 0) + 1 };
    if (previous) this.graph.index.remove(previous);
    this.graph.nodes.set(record.node.id, stored);
    this.graph.index.add(stored);
  }
  deleteNode(id: string) {
    const previous = this.graph.nodes.get(id);
    if (!previous) return;
    this.graph.index.remove(previous);
    this.graph.nodes.delete(id);
  }
  setSignature(signature: string, id: string) {
    this.graph.signatures.set(signature, id);
  }
  putEdge(record: EdgeRecord) {
    this.graph.setEdge(edgeKey(record.src, record.dst, record.type), record);
  }
  deleteEdge(key: string) {
    this.graph.removeEdge(key);
  }
  setLearned(key: string, updates: ConfidenceUpdate[]) {
    this.graph.learned.set(key, updates);
  }
  record(mutation: Mutation) {
    this.graph.mutations.push(mutation);
  }
}
