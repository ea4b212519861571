/**
 * A transaction over one workspace's graph: staged writes on top of the committed graph, read
 * through its indexes. Optimistic: it remembers the revision of every node and signature it wrote;
 * commit refuses (TX_CONFLICT) when another writer changed one of them in between, otherwise it
 * applies the whole overlay in one synchronous step, so no reader ever sees half.
 */
import type { ConfidenceUpdate } from "../../src/substrates/contracts.js";
import { CommittedView, committedTop, edgeKey, type EdgeRecord, type GraphView, type Mutation, type NodeRecord, type WorkspaceGraph } from "./graph.js";
import { grouped, matches, mostConfident, type NodeQuery } from "./node-index.js";

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
  retrieve(query: NodeQuery, k: number) {
    // The committed top k, less the nodes this transaction overlays, merged with its own matches.
    const skip = new Set(this.nodeOverlay.keys());
    const mine: NodeRecord[] = [];
    for (const staged of this.nodeOverlay.values()) if (staged && matches(query, staged)) mine.push(staged);
    return mostConfident([...committedTop(this.graph, query, k, skip), ...mine], k);
  }
  duplicateGroups() {
    const keys = new Set(this.graph.index.duplicated);
    for (const [id, staged] of this.nodeOverlay) keys.add(staged ? staged.key : (this.graph.nodes.get(id)?.key ?? ""));
    const groups: NodeRecord[][] = [];
    for (const key of keys) {
      const members: NodeRecord[] = [];
      for (const id of this.graph.index.group(key) ?? []) {
        const record = this.node(id);
        if (record && record.key === key) members.push(record);
      }
      for (const [id, staged] of this.nodeOverlay) if (staged && staged.key === key && !this.graph.nodes.has(id)) members.push(staged);
      groups.push(members);
    }
    return grouped(groups);
  }
  edgesOf(ids: ReadonlySet<string>, both: boolean) {
    const inside = (e: EdgeRecord) => (both ? ids.has(e.src) && ids.has(e.dst) : ids.has(e.src) || ids.has(e.dst));
    const out: EdgeRecord[] = [];
    for (const { edge } of this.graph.committedEdges(ids, both)) {
      const key = edgeKey(edge.src, edge.dst, edge.type);
      const staged = this.edgeOverlay.get(key);
      if (staged === undefined) out.push(edge);
      else if (staged) out.push(staged);
    }
    for (const [key, staged] of this.edgeOverlay) if (staged && !this.graph.edges.has(key) && inside(staged)) out.push(staged);
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

  /**
   * Applies every staged write (onto the committed graph, or a view that also records them).
   * Synchronous on purpose: nothing can run between two writes.
   */
  apply(committed: GraphView = new CommittedView(this.graph)): void {
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
