/** The §6 token examples, with every "..." replaced by a realistic value. Typed, so they also check the TS interfaces. */
import type {
  ConsolidationEvent,
  DeliberationResult,
  OutcomeSignal,
  ReputationUpdate,
  SurpriseSignal,
  TokenOf,
  TopologyContext,
} from "../../src/tokens/types.js";
import type { TokenName } from "../../src/manifest/types.js";

export const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";

export const topologyContext: TopologyContext = {
  token: "TopologyContext",
  version: "0.1",
  trace_id: TRACE_ID,
  nodes: [{ id: "node_5", type: "belief", confidence: 0.83 }],
  edges: [{ src: "node_1", dst: "node_5", type: "causal" }],
  sccs: [{ id: "scc_001", members: ["node_1", "node_5"], kappa: 1, routing: "deliberate", budget: { max_iterations: 2 } }],
  max_kappa: 1,
  routing: "deliberate",
};

export const deliberationResult: DeliberationResult = {
  token: "DeliberationResult",
  version: "0.1",
  trace_id: TRACE_ID,
  verdict: "approve",
  confidence: 0.87,
  consensus_type: "fast_path",
  reasoning_path: ["node_1", "node_5", "node_12"],
  dissents: [{ agent_id: "agent_b3", position: "reject", weight: 0.12 }],
  evidence_chain_merkle_root: "blake3:9f64a747e1b97f131fabb6b447296c9b6f0201e79fb3c5356e6c77e89b6a806a",
};

export const outcomeSignal: OutcomeSignal = {
  token: "OutcomeSignal",
  version: "0.1",
  trace_id: TRACE_ID,
  action_id: "act_42",
  status: "success",
  causal_parent_ids: ["node_5", "node_12"],
  evidence: { metric: "tests_passed", value: 0.94 },
  timestamp: "2026-04-10T12:00:00Z",
};

export const reputationUpdate: ReputationUpdate = {
  token: "ReputationUpdate",
  version: "0.1",
  trace_id: TRACE_ID,
  subject_id: "agent_a7",
  subject_type: "agent",
  domain: "code",
  delta: 0.04,
  calibration_adjustment: -0.01,
  source_loop: "deliberatic.argumentation",
  evidence_ref: `trace_id:${TRACE_ID}`,
};

export const consolidationEvent: ConsolidationEvent = {
  token: "ConsolidationEvent",
  version: "0.1",
  trace_id: TRACE_ID,
  timescale: "medium",
  affected_node_ids: ["node_3", "node_9"],
  merged_into_ids: ["node_3"],
  convergence_status: "stable",
  metric_deltas: { graph_size: -12, avg_confidence: 0.02 },
};

export const surpriseSignal: SurpriseSignal = {
  token: "SurpriseSignal",
  version: "0.1.1",
  trace_id: TRACE_ID,
  edge_id: 17,
  body_subtype: "browser",
  action_type: "click",
  predicted_state_hash: "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
  actual_state_hash: "sha256:fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9",
  surprise_magnitude: 0.72,
  surprise_kind: "unexpected_navigation",
  evidence: { expected_url: "https://example.com/cart", actual_url: "https://example.com/login" },
  timestamp: "2026-04-10T12:00:00.250+02:00",
};

export const EXAMPLES: { [N in TokenName]: TokenOf<N> } = {
  TopologyContext: topologyContext,
  DeliberationResult: deliberationResult,
  OutcomeSignal: outcomeSignal,
  ReputationUpdate: reputationUpdate,
  ConsolidationEvent: consolidationEvent,
  SurpriseSignal: surpriseSignal,
};
