/**
 * The state of one workspace's knowledge graph, and the two ways to see it: directly (calls
 * without a transaction) or through a transaction's overlay (its own writes on top of the
 * committed graph). Operations are written once against GraphView and work in both.
 *
 * Transactions are optimistic: a transaction remembers the revision of every node and signature
 * it wrote; commit refuses (TX_CONFLICT) when another writer changed one of them in between,
 * otherwise it applies the whole overlay in one synchronous step, so no reader ever sees half.
 */
import type { ConfidenceUpdate, MemoryNode } from "../../src/substrates/contracts.js";

export interface StoredNode extends MemoryNode {
  id: string;
  confidence: number;
}

export interface NodeRecord {
  node: StoredNode;
  /** trace_id of the call that stored the node (§5.5: substrates echo the trace id). */
  trace_id: string;
  /** The memory's own audit event for the store. */
  audit_event_id: string;
  /** The content as retrieve_context searches it (lowercased); content never changes after the store. */
  text: string;
  /** Creation order in the workspace: "oldest" in consolidation. */
  created: number;
  /** Bumped on every committed change; transactions compare it to detect conflicts. */
  rev: number;
}

export interface EdgeRecord {
  edge_id: string;
  src: string;
  dst: string;
  type: string;
  trace_id: string;
}

/** One entry of the memory's own mutation trail. */
export interface Mutation {
  event_id: string;
  operation: string;
  trace_id: string;
  ids: string[];
}

export function edgeKey(src: string, dst: string, type: string): string {
  return JSON.stringify([src, dst, type]);
}

export class WorkspaceGraph {
  readonly nodes = new Map<string, NodeRecord>();
  readonly signatures = new Map<string, string>();
  readonly edges = new Map<string, EdgeRecord>();
  /** Ids are handed out once per (src, dst, type) and kept, so store_edge always answers the same id. */
  readonly edgeIds = new Map<string, string>();
  /** Outcomes already learned (action_id, status) and the updates they produced: learning is idempotent. */
  readonly learned = new Map<string, ConfidenceUpdate[]>();
  readonly mutations: Mutation[] = [];
  private nextNode = 1;
  private nextEdge = 1;
  private nextEvent = 1;
  private nextCreated = 1;

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
}

export interface GraphView {
  readonly graph: WorkspaceGraph;
  node(id: string): NodeRecord | undefined;
  nodeIdForSignature(signature: string): string | undefined;
  /** Every visible node; committed ones in insertion order, then the transaction's new ones. */
  nodes(): NodeRecord[];
  edge(key: string): EdgeRecord | undefined;
  edges(): EdgeRecord[];
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
  learned(key: string) {
    return this.graph.learned.get(key);
  }
  putNode(record: NodeRecord) {
    const previous = this.graph.nodes.get(record.node.id);
    this.graph.nodes.set(record.node.id, { ...record, rev: (previous?.rev ?? 0) + 1 });
  }
  deleteNode(id: string) {
    this.graph.nodes.delete(id);
  }
  setSignature(signature: string, id: string) {
    this.graph.signatures.set(signature, id);
  }
  putEdge(record: EdgeRecord) {
    this.graph.edges.set(edgeKey(record.src, record.dst, record.type), record);
  }
  deleteEdge(key: string) {
    this.graph.edges.delete(key);
  }
  setLearned(key: string, updates: ConfidenceUpdate[]) {
    this.graph.learned.set(key, updates);
  }
  record(mutation: Mutation) {
    this.graph.mutations.push(mutation);
  }
}

/** Staged writes over the committed graph; `null` marks a deletion. */
export class Transaction implements GraphView {
  private readonly nodeOverlay = new Map<string, NodeRecord | null>();
  private readonly signatureOverlay = new Map<string, string>();
  private readonly edgeOverlay = new Map<string, EdgeRecord | null>();
  private readonly learnedOverlay = new Map<string, ConfidenceUpdate[]>();
  private readonly staged: Mutation[] = [];
  /** Committed revision of each node when the transaction first wrote it (undefined: absent). */
  private readonly baseRevs = new Map<string, number | undefined>();
  private readonly baseSignatures = new Map<string, string | undefined>();

  constructor(readonly graph: WorkspaceGraph) {}

  node(id: string) {
    const staged = this.nodeOverlay.get(id);
    if (staged !== undefined) return staged ?? undefined;
    return this.graph.nodes.get(id);
  }
  nodeIdForSignature(signature: string) {
    const id = this.signatureOverlay.get(signature) ?? this.graph.signatures.get(signature);
    return id !== undefined && this.node(id) ? id : undefined;
  }
  nodes() {
    const out: NodeRecord[] = [];
    for (const [id, record] of this.graph.nodes) {
      const staged = this.nodeOverlay.get(id);
      if (staged === undefined) out.push(record);
      else if (staged) out.push(staged);
    }
    for (const [id, staged] of this.nodeOverlay) if (staged && !this.graph.nodes.has(id)) out.push(staged);
    return out;
  }
  edge(key: string) {
    const staged = this.edgeOverlay.get(key);
    if (staged !== undefined) return staged ?? undefined;
    return this.graph.edges.get(key);
  }
  edges() {
    const out: EdgeRecord[] = [];
    for (const [key, record] of this.graph.edges) {
      const staged = this.edgeOverlay.get(key);
      if (staged === undefined) out.push(record);
      else if (staged) out.push(staged);
    }
    for (const [key, staged] of this.edgeOverlay) if (staged && !this.graph.edges.has(key)) out.push(staged);
    return out;
  }
  learned(key: string) {
    return this.learnedOverlay.get(key) ?? this.graph.learned.get(key);
  }
  putNode(record: NodeRecord) {
    this.touchNode(record.node.id);
    this.nodeOverlay.set(record.node.id, record);
  }
  deleteNode(id: string) {
    this.touchNode(id);
    this.nodeOverlay.set(id, null);
  }
  setSignature(signature: string, id: string) {
    if (!this.baseSignatures.has(signature)) this.baseSignatures.set(signature, this.graph.signatures.get(signature));
    this.signatureOverlay.set(signature, id);
  }
  putEdge(record: EdgeRecord) {
    this.edgeOverlay.set(edgeKey(record.src, record.dst, record.type), record);
  }
  deleteEdge(key: string) {
    this.edgeOverlay.set(key, null);
  }
  setLearned(key: string, updates: ConfidenceUpdate[]) {
    this.learnedOverlay.set(key, updates);
  }
  record(mutation: Mutation) {
    this.staged.push(mutation);
  }

  private touchNode(id: string) {
    if (!this.baseRevs.has(id)) this.baseRevs.set(id, this.graph.nodes.get(id)?.rev);
  }

  /** Why committing now would overwrite or break another writer's committed work, if it would. */
  conflict(): string | undefined {
    const { graph } = this;
    for (const [id, rev] of this.baseRevs) {
      if (graph.nodes.get(id)?.rev !== rev) return `node "${id}" was changed by another writer after this transaction wrote it`;
    }
    for (const [signature, owner] of this.baseSignatures) {
      if (graph.signatures.get(signature) !== owner) return `signature "${signature}" was stored by another writer after this transaction stored it`;
    }
    for (const key of this.learnedOverlay.keys()) {
      if (graph.learned.has(key)) return `outcome ${key} was learned by another writer during this transaction`;
    }
    const survives = (id: string) => {
      const staged = this.nodeOverlay.get(id);
      return staged !== undefined ? staged !== null : graph.nodes.has(id);
    };
    for (const edge of this.edgeOverlay.values()) {
      if (edge && !(survives(edge.src) && survives(edge.dst))) return `edge ${edge.edge_id} lost an endpoint to another writer`;
    }
    const deleted = [...this.nodeOverlay].filter(([, staged]) => staged === null).map(([id]) => id);
    if (deleted.length > 0) {
      const gone = new Set(deleted);
      for (const [key, edge] of graph.edges) {
        if (!this.edgeOverlay.has(key) && (gone.has(edge.src) || gone.has(edge.dst))) {
          return `another writer added edge ${edge.edge_id} to a node this transaction removes`;
        }
      }
    }
    return undefined;
  }

  /** Applies every staged write. Synchronous on purpose: nothing can run between two writes. */
  apply(): void {
    const committed = new CommittedView(this.graph);
    for (const [id, staged] of this.nodeOverlay) {
      if (staged) committed.putNode(staged);
      else committed.deleteNode(id);
    }
    for (const [signature, id] of this.signatureOverlay) committed.setSignature(signature, id);
    for (const [key, staged] of this.edgeOverlay) {
      if (staged) committed.putEdge(staged);
      else committed.deleteEdge(key);
    }
    for (const [key, updates] of this.learnedOverlay) committed.setLearned(key, updates);
    for (const mutation of this.staged) committed.record(mutation);
  }
}
