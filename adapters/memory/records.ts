/** What the in-memory memory substrate stores per workspace: nodes, edges, and its own mutation trail. */
import type { MemoryNode } from "../../src/substrates/contracts.js";

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
  /** The words retrieve_context matches (node-index.ts); type and content never change after the store. */
  words: readonly string[];
  /** Type and content as canonical JSON: nodes with equal keys are what consolidate merges. */
  key: string;
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
