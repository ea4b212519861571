/**
 * The PULSE v0.1 manifest as TypeScript types, mirroring `schema/pulse-loop-manifest.v0.1.json`.
 *
 * The constant arrays below are the one source of the protocol's vocabularies for the validator
 * and the runtime; `test/schema/constants.test.ts` keeps them equal to the schema's enums, so a
 * vocabulary change has to touch both or the build fails.
 */

export const MANIFEST_SCHEMA_ID = "https://opensentience.org/schemas/pulse-loop-manifest.v0.1.json";

/** The protocol version this implementation speaks; manifests may declare it or any 0.1.x patch. */
export const SUPPORTED_PROTOCOL_VERSION = "0.1";

export const CANONICAL_PHASE_KINDS = ["retrieve", "route", "act", "learn", "consolidate"] as const;
export const PHASE_KINDS = [...CANONICAL_PHASE_KINDS, "custom"] as const;
export const CADENCE_TYPES = ["event", "periodic", "streaming", "idle", "cross_loop_signal", "manual"] as const;
export const REQUIRED_SUBSTRATE_SLOTS = ["memory", "policy", "audit", "auth"] as const;
export const SUBSTRATE_SLOTS = [...REQUIRED_SUBSTRATE_SLOTS, "transport", "time"] as const;
/** In §7 order (7.1 … 7.7). */
export const INVARIANT_NAMES = [
  "phase_atomicity",
  "feedback_immutability",
  "append_only_audit",
  "kappa_routing",
  "quorum_before_commit",
  "outcome_grounding",
  "trace_id_propagation",
] as const;
export const WAIT_MODES = ["until_stable", "until_done", "fire_forget", "bounded"] as const;
export const DELIVERY_MODES = ["at_least_once", "at_most_once", "exactly_once"] as const;
export const OVERFLOW_POLICIES = ["block", "drop_oldest", "drop_newest", "escalate"] as const;
export const ON_FAILURE_ACTIONS = ["retry", "rollback", "escalate", "skip", "abort_loop"] as const;
export const GUARANTEES = ["immediate", "next_tick", "eventual"] as const;
export const WORKSPACE_SCOPES = ["required", "optional", "global"] as const;
export const CONNECTION_CADENCES = ["sync", "async"] as const;
export const ENVELOPES = ["cloudevents.v1"] as const;
/** The five canonical tokens of §6, then SurpriseSignal (added in v0.1.1). */
export const TOKEN_NAMES = [
  "TopologyContext",
  "DeliberationResult",
  "OutcomeSignal",
  "ReputationUpdate",
  "ConsolidationEvent",
  "SurpriseSignal",
] as const;

export type PhaseKind = (typeof PHASE_KINDS)[number];
export type CanonicalPhaseKind = (typeof CANONICAL_PHASE_KINDS)[number];
export type CadenceType = (typeof CADENCE_TYPES)[number];
export type SubstrateSlot = (typeof SUBSTRATE_SLOTS)[number];
export type RequiredSubstrateSlot = (typeof REQUIRED_SUBSTRATE_SLOTS)[number];
export type InvariantName = (typeof INVARIANT_NAMES)[number];
export type WaitMode = (typeof WAIT_MODES)[number];
export type DeliveryMode = (typeof DELIVERY_MODES)[number];
export type OverflowPolicy = (typeof OVERFLOW_POLICIES)[number];
export type OnFailure = (typeof ON_FAILURE_ACTIONS)[number];
export type Guarantee = (typeof GUARANTEES)[number];
export type WorkspaceScope = (typeof WORKSPACE_SCOPES)[number];
export type ConnectionCadence = (typeof CONNECTION_CADENCES)[number];
export type Envelope = (typeof ENVELOPES)[number];
export type TokenName = (typeof TOKEN_NAMES)[number];

/** One loop, as declared by one manifest (§4). */
export interface Manifest {
  $schema?: string;
  pulse_protocol_version: string;
  loop_id: string;
  loop_name?: string;
  version: string;
  owner?: string;
  workspace_scope?: WorkspaceScope;
  description?: string;
  /** At least two, in execution order. */
  phases: Phase[];
  closure: Closure;
  cadence: Cadence;
  nesting?: Nesting;
  substrates: Substrates;
  invariants: Invariants;
  connections?: Connection[];
  telemetry?: Telemetry;
}

/**
 * Endpoint strings (`external`, `phase:<id>`, `substrate:<slot>`, `signal:<Token>`, joined by `|`)
 * stay strings here; the grammar module parses them. The schema lets these objects carry extra
 * keys, which these types leave out.
 */
export interface PhaseInputs {
  from?: string;
  schema?: string;
}

export interface PhaseOutputs {
  to?: string;
  schema?: string;
}

export interface Phase {
  id: string;
  kind: PhaseKind;
  /** Present whenever `kind` is `"custom"`. */
  custom_kind?: string;
  description?: string;
  inputs?: PhaseInputs;
  outputs?: PhaseOutputs;
  idempotent?: boolean;
  signature?: string;
  timeout_ms?: number;
  on_failure?: OnFailure;
  max_retries?: number;
  /** The schema accepts any string; the validator flags names outside INVARIANT_NAMES. */
  invariant?: InvariantName | (string & {});
  policy_check?: string;
  audit_event?: string;
  parallel?: boolean;
}

export interface Closure {
  from_phase: string;
  to_phase: string;
  via?: string;
  guarantee?: Guarantee;
}

export interface Cadence {
  type: CadenceType;
  /** Free-form in the schema; the validator checks the parameters of each type (§8). */
  params?: Record<string, unknown>;
  fallback?: Cadence;
}

export interface Nesting {
  parent_loop?: string | null;
  inner_loops?: InnerLoop[];
}

export interface InnerLoop {
  loop_id: string;
  /** `phase:<id>`, optionally followed by `when <expression>`. */
  trigger: string;
  wait?: WaitMode;
  timeout_ms?: number;
}

/** A substrate reference (URI or name), or null when the loop does not use the slot. */
export type SubstrateRef = string | null;

export type Substrates = { [slot in RequiredSubstrateSlot]: SubstrateRef } & {
  transport?: SubstrateRef;
  time?: SubstrateRef;
};

/** An invariant that is absent is not enforced, exactly as if it were `false`. */
export type Invariants = { [name in InvariantName]?: boolean };

export interface Connection {
  id: string;
  emit_phase: string;
  emit_condition?: string;
  envelope?: Envelope;
  token: TokenName;
  to_loop: string;
  to_phase?: string;
  cadence?: ConnectionCadence;
  delivery?: DeliveryMode;
  max_inflight?: number;
  overflow_policy?: OverflowPolicy;
}

export interface Telemetry {
  namespace?: string;
  phase_metrics?: string[];
  loop_metrics?: string[];
}
