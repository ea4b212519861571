/**
 * The substrate contracts of PULSE §9: exactly the operations of the spec's tables, each taking
 * its arguments as one object and a CallContext that carries `trace_id` and `workspace_id` on
 * every call (§5.5, §7.7). The runtime depends only on these interfaces; implementations live in
 * adapters/ (in-memory, HTTP) or in the host.
 *
 * Beyond the tables (the spec allows additional operations): memory transactions, so a phase
 * commits all of its writes or none (§5.1).
 */
import type { ConsolidationEvent, OutcomeSignal, TopologyContext } from "../tokens/types.js";

export interface CallContext {
  /** W3C trace id (32 lowercase hex) of the iteration making the call. */
  trace_id: string;
  workspace_id: string;
  /** Set when the call belongs to a memory transaction (see MemorySubstrate.begin_transaction). */
  tx_id?: string;
  /**
   * Set by the runtime on commit_transaction of a phase's memory transaction: a store keeping the
   * memory writes it with the phase's unit of work; any other commit it writes on its own.
   */
  journaled?: boolean;
  /** Cancels the call (phase timeout, shutdown). */
  signal?: AbortSignal;
}

// ---------------------------------------------------------------------------------------------
// §9.1 memory

export interface MemoryNode {
  id?: string;
  type?: string;
  content?: unknown;
  confidence?: number;
  causal_parent_ids?: string[];
  /** Deduplication key: storing a node with a known signature returns the existing node. */
  signature?: string;
  [key: string]: unknown;
}

export interface MemoryEdge {
  src: string;
  dst: string;
  type: string;
}

export interface ConfidenceUpdate {
  node_id: string;
  previous: number;
  confidence: number;
}

export interface RetrieveContextResult {
  nodes: MemoryNode[];
  topology: TopologyContext;
}

export interface MemorySubstrate {
  retrieve_context(args: { query: unknown; k?: number }, ctx: CallContext): Promise<RetrieveContextResult>;
  /** Not idempotent, but returns the existing node when `node.signature` was stored before. */
  store_node(args: { node: MemoryNode }, ctx: CallContext): Promise<{ node_id: string; audit_event_id: string; existing: boolean }>;
  store_edge(args: MemoryEdge, ctx: CallContext): Promise<{ edge_id: string }>;
  learn_from_outcome(args: { outcome: OutcomeSignal }, ctx: CallContext): Promise<ConfidenceUpdate[]>;
  consolidate(args: { scope?: unknown }, ctx: CallContext): Promise<ConsolidationEvent>;
  topology_analyze(args: { node_ids?: string[] }, ctx: CallContext): Promise<TopologyContext>;
  /** Stages later calls carrying the returned tx_id; nothing is visible to others until commit. */
  begin_transaction(args: Record<string, never>, ctx: CallContext): Promise<{ tx_id: string }>;
  commit_transaction(args: { tx_id: string }, ctx: CallContext): Promise<void>;
  rollback_transaction(args: { tx_id: string }, ctx: CallContext): Promise<void>;
}

/** Operations that change memory: refused outside an act/learn/consolidate phase's transaction. */
export const MEMORY_MUTATIONS = ["store_node", "store_edge", "learn_from_outcome", "consolidate"] as const;

// ---------------------------------------------------------------------------------------------
// §9.2 policy

export interface PolicyDecision {
  decision: "allow" | "deny";
  reason?: string;
}

export interface PolicySubstrate {
  check_policy(args: { actor: string; action: string; resource: string }, ctx: CallContext): Promise<PolicyDecision>;
  compute_effective(args: { org_id: string }, ctx: CallContext): Promise<Record<string, unknown>>;
}

// ---------------------------------------------------------------------------------------------
// §9.3 audit: append and query only. There is deliberately no update or delete (§7.3).

export interface AuditEvent {
  event_id: string;
  event_type: string;
  trace_id: string;
  loop_id: string;
  /** Null for events that belong to the iteration rather than one phase. */
  phase_id: string | null;
  workspace_id: string;
  /** RFC 3339 timestamp. */
  timestamp: string;
  /** The phase signature (§5.6), or the signature of the event itself when no phase applies. */
  signature: string;
  /** Position of the event in its iteration: 0, 1, 2, … without gaps. */
  seq: number;
  data?: Record<string, unknown>;
}

export interface AuditSubstrate {
  append_event(args: { event: AuditEvent }, ctx: CallContext): Promise<{ event_id: string }>;
  query_by_trace(args: { trace_id: string; since?: string; until?: string }, ctx: CallContext): Promise<AuditEvent[]>;
}

// ---------------------------------------------------------------------------------------------
// §9.4 auth

export interface AuthSubstrate {
  permission_check(args: { agent_id: string; operation: string }, ctx: CallContext): Promise<"allow" | "deny">;
  agent_lifecycle(args: { agent_id: string }, ctx: CallContext): Promise<{ state: string }>;
}

// ---------------------------------------------------------------------------------------------
// §9.5 time (optional)

export interface TimeSubstrate {
  at_timescale(args: { timescale: string }, ctx: CallContext): Promise<Record<string, unknown>>;
  forecast(args: { stream: string; horizon: string }, ctx: CallContext): Promise<Record<string, unknown>>;
}

export interface SubstrateSet {
  memory: MemorySubstrate;
  policy: PolicySubstrate;
  audit: AuditSubstrate;
  auth: AuthSubstrate;
  time?: TimeSubstrate;
}

export type SubstrateSlotName = keyof SubstrateSet;

/** A substrate as a phase handler sees it: the runtime supplies the CallContext of every call. */
export type Bound<T> = {
  [K in keyof T]: T[K] extends (args: infer A, ctx: CallContext) => infer R ? (args: A) => R : T[K];
};

export interface BoundSubstrateSet {
  memory: Bound<MemorySubstrate>;
  policy: Bound<PolicySubstrate>;
  audit: Bound<AuditSubstrate>;
  auth: Bound<AuthSubstrate>;
  time?: Bound<TimeSubstrate>;
}

/** Every operation of every contract, by slot: the HTTP protocol and the recorders use it. */
export const SUBSTRATE_OPERATIONS = {
  memory: ["retrieve_context", "store_node", "store_edge", "learn_from_outcome", "consolidate", "topology_analyze", "begin_transaction", "commit_transaction", "rollback_transaction"],
  policy: ["check_policy", "compute_effective"],
  audit: ["append_event", "query_by_trace"],
  auth: ["permission_check", "agent_lifecycle"],
  time: ["at_timescale", "forecast"],
} as const satisfies { [S in SubstrateSlotName]: readonly (keyof NonNullable<SubstrateSet[S]>)[] };

/**
 * A substrate that cannot be reached (connection refused, timeout, 5xx): counts toward the
 * circuit breaker. Business answers (a policy deny, a validation error) are not unavailability.
 */
export class SubstrateUnavailableError extends Error {
  readonly code = "SUBSTRATE_UNAVAILABLE";
  constructor(
    readonly slot: string,
    message: string,
  ) {
    super(message);
    this.name = "SubstrateUnavailableError";
  }
}

/** A substrate refused a call as malformed or not allowed (HTTP 4xx, adapter validation). */
export class SubstrateRequestError extends Error {
  constructor(
    readonly slot: string,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "SubstrateRequestError";
  }
}
