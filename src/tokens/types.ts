/**
 * The canonical PULSE tokens (§6, plus SurpriseSignal from v0.1.1) and the CloudEvents envelope
 * that carries them (§10.1), mirroring `schema/tokens/*.v0.1.json`.
 *
 * Tokens may carry fields a later minor version adds (§16 is additive), so every payload type
 * admits unknown keys; the known ones keep their types.
 */
import type { TokenName } from "../manifest/types.js";

export type { TokenName };
export { TOKEN_NAMES } from "../manifest/types.js";

/** The shape version this implementation emits; receivers accept any 0.1.x. */
export const TOKEN_VERSION = "0.1";
/** CloudEvents `type` of a token is this prefix followed by the token name. */
export const PULSE_EVENT_TYPE_PREFIX = "org.opensentience.pulse.";

export const OUTCOME_STATUSES = ["success", "partial", "failure", "timeout"] as const;
export const SUBJECT_TYPES = ["agent", "node", "model", "scenario"] as const;
export const TIMESCALES = ["fast", "medium", "slow", "glacial"] as const;
export const CONVERGENCE_STATUSES = ["stable", "unstable", "diverged"] as const;
export const CONSENSUS_TYPES = ["fast_path", "conflict_path"] as const;
export const ROUTING_DECISIONS = ["fast", "deliberate"] as const;
export const BODY_SUBTYPES = ["browser", "os", "vision", "voice", "motor"] as const;
export const SURPRISE_KINDS = [
  "unexpected_navigation",
  "unexpected_unchanged",
  "unexpected_structure",
  "unexpected_error",
  "unexpected_permission",
  "unexpected_latency",
  "other",
] as const;

export type OutcomeStatus = (typeof OUTCOME_STATUSES)[number];
export type SubjectType = (typeof SUBJECT_TYPES)[number];
export type Timescale = (typeof TIMESCALES)[number];
export type ConvergenceStatus = (typeof CONVERGENCE_STATUSES)[number];
export type ConsensusType = (typeof CONSENSUS_TYPES)[number];
export type RoutingDecision = (typeof ROUTING_DECISIONS)[number];
export type BodySubtype = (typeof BODY_SUBTYPES)[number];
export type SurpriseKind = (typeof SURPRISE_KINDS)[number];

/** Fields every token carries; `token` names the payload type. */
export interface TokenHeader<N extends TokenName> {
  token: N;
  /** "0.1" or a 0.1 patch. */
  version: string;
  trace_id: string;
  [extra: string]: unknown;
}

export interface TopologyNode {
  id: string;
  type?: string;
  /** In [0, 1]. */
  confidence?: number;
  [extra: string]: unknown;
}

export interface TopologyEdge {
  src: string;
  dst: string;
  type?: string;
  [extra: string]: unknown;
}

export interface StronglyConnectedComponent {
  id?: string;
  members: string[];
  /** ≥ 0; above 0 forces deliberate routing under kappa_routing. */
  kappa: number;
  routing?: RoutingDecision;
  budget?: { max_iterations?: number; [extra: string]: unknown };
  [extra: string]: unknown;
}

export interface TopologyContext extends TokenHeader<"TopologyContext"> {
  nodes?: TopologyNode[];
  edges?: TopologyEdge[];
  sccs?: StronglyConnectedComponent[];
  max_kappa: number;
  routing?: RoutingDecision;
}

export interface Dissent {
  agent_id: string;
  position?: string;
  /** In [0, 1]. */
  weight?: number;
  [extra: string]: unknown;
}

export interface DeliberationResult extends TokenHeader<"DeliberationResult"> {
  verdict: string;
  /** In [0, 1]; compared with the quorum threshold (default 0.66). */
  confidence: number;
  consensus_type?: ConsensusType;
  reasoning_path?: string[];
  dissents?: Dissent[];
  /** `<algorithm>:<hex>`, e.g. `blake3:…`. */
  evidence_chain_merkle_root?: string;
}

export interface OutcomeSignal extends TokenHeader<"OutcomeSignal"> {
  action_id: string;
  status: OutcomeStatus;
  causal_parent_ids?: string[];
  evidence?: Record<string, unknown>;
  /** RFC 3339 date-time. */
  timestamp?: string;
}

export interface ReputationUpdate extends TokenHeader<"ReputationUpdate"> {
  subject_id: string;
  subject_type: SubjectType;
  domain?: string;
  delta: number;
  calibration_adjustment?: number;
  /** A loop_id. */
  source_loop?: string;
  evidence_ref?: string;
}

export interface ConsolidationEvent extends TokenHeader<"ConsolidationEvent"> {
  timescale: Timescale;
  affected_node_ids?: string[];
  merged_into_ids?: string[];
  /** `"stable"` is the stability signal nested loops wait for (§11.3). */
  convergence_status: ConvergenceStatus;
  metric_deltas?: Record<string, number>;
}

export interface SurpriseSignal extends TokenHeader<"SurpriseSignal"> {
  edge_id?: number;
  body_subtype?: BodySubtype;
  action_type?: string;
  predicted_state_hash?: string;
  actual_state_hash?: string;
  /** In [0, 1]. */
  surprise_magnitude: number;
  surprise_kind: SurpriseKind;
  evidence?: Record<string, unknown>;
  /** RFC 3339 date-time. */
  timestamp?: string;
}

export type Token =
  | TopologyContext
  | DeliberationResult
  | OutcomeSignal
  | ReputationUpdate
  | ConsolidationEvent
  | SurpriseSignal;

/** The payload type of the token called `N`. */
export type TokenOf<N extends TokenName> = Extract<Token, { token: N }>;

/** A token in its CloudEvents 1.0 structured-mode envelope (§10.1). */
export interface PulseCloudEvent<T extends Token = Token> {
  specversion: "1.0";
  /** `org.opensentience.pulse.<Token>`, naming the same token as `data.token`. */
  type: `org.opensentience.pulse.${T["token"]}`;
  /** `loop:<loop_id>/phase:<phase_id>`. */
  source: string;
  /** `trace_id:<trace_id>`. */
  subject: string;
  /** Derived from the emitting phase's signature, so a redelivery keeps its id. */
  id: string;
  /** RFC 3339 date-time. */
  time: string;
  datacontenttype: "application/json";
  dataschema?: string;
  /** W3C Trace Context traceparent (CloudEvents distributed-tracing extension). */
  traceparent?: string;
  tracestate?: string;
  data: T;
  /** Other CloudEvents extension attributes (names of lowercase letters and digits). */
  [extension: string]: unknown;
}
