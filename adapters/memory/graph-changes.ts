/**
 * A memory graph's committed changes as rows (MemoryChange), and back: what a persistent store
 * writes with the phase that committed them, and replays into a fresh graph when it opens.
 */
import type { ConfidenceUpdate } from "../../src/substrates/contracts.js";
import type { MemoryChange } from "../../src/store/contracts.js";
import { CommittedView, edgeKey, type EdgeRecord, type GraphCounters, type GraphView, type Mutation, type NodeRecord, type WorkspaceGraph } from "./graph.js";

/** Writes into the committed graph and records each write as a change row. */
export class RecordingView extends CommittedView implements GraphView {
  readonly changes: MemoryChange[] = [];

  // Each change carries the row it replaces (`prev`, null: none), so a store shared by several
  // writers can refuse a change whose row another writer changed meanwhile instead of replacing it.
  override putNode(record: NodeRecord) {
    const prev = this.graph.nodes.get(record.node.id) ?? null;
    super.putNode(record);
    this.changes.push({ kind: "node", key: record.node.id, value: this.graph.nodes.get(record.node.id), prev });
  }
  override deleteNode(id: string) {
    const prev = this.graph.nodes.get(id) ?? null;
    super.deleteNode(id);
    this.changes.push({ kind: "node", key: id, value: null, prev });
  }
  override setSignature(signature: string, id: string) {
    const prev = this.graph.signatures.get(signature) ?? null;
    super.setSignature(signature, id);
    this.changes.push({ kind: "signature", key: signature, value: id, prev });
  }
  override putEdge(record: EdgeRecord) {
    const key = edgeKey(record.src, record.dst, record.type);
    const prev = this.graph.edges.get(key) ?? null;
    super.putEdge(record);
    this.changes.push({ kind: "edge", key, value: record, prev });
  }
  override deleteEdge(key: string) {
    const prev = this.graph.edges.get(key) ?? null;
    super.deleteEdge(key);
    this.changes.push({ kind: "edge", key, value: null, prev });
  }
  override setLearned(key: string, updates: ConfidenceUpdate[]) {
    const prev = this.graph.learned.get(key) ?? null;
    super.setLearned(key, updates);
    this.changes.push({ kind: "learned", key, value: updates, prev });
  }
  override record(mutation: Mutation) {
    super.record(mutation);
    this.changes.push({ kind: "mutation", key: mutation.event_id, value: mutation, prev: null });
  }

  /** The changes, closed by the graph's id counters as they stand now. */
  finish(): MemoryChange[] {
    this.changes.push({ kind: "counters", key: "", value: this.graph.counters() });
    return this.changes;
  }
}

/** Rebuilds a graph from its rows (the last row per kind and key wins; null deleted it). */
export function replayChanges(graph: WorkspaceGraph, changes: Iterable<MemoryChange>): void {
  const view = new CommittedView(graph);
  for (const c of changes) {
    switch (c.kind) {
      case "node":
        if (c.value === null) view.deleteNode(c.key);
        else view.putNode(c.value as NodeRecord);
        break;
      case "edge":
        if (c.value === null) view.deleteEdge(c.key);
        else {
          const edge = c.value as EdgeRecord;
          view.putEdge(edge);
          graph.edgeIds.set(c.key, edge.edge_id);
        }
        break;
      case "signature":
        view.setSignature(c.key, c.value as string);
        break;
      case "learned":
        view.setLearned(c.key, c.value as ConfidenceUpdate[]);
        break;
      case "mutation":
        view.record(c.value as Mutation);
        break;
      case "counters":
        graph.restoreCounters(c.value as GraphCounters);
        break;
    }
  }
}
