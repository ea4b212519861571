/**
 * The handlers `pulse run` uses when a loop brings none of its own: each records what it was
 * given and returns an output of the shape its phase kind calls for, computed from the embedded
 * substrates (retrieve reads memory and its topology, act stores a node, learn updates the
 * confidence of the act's causal parents, consolidate consolidates). Outputs satisfy the
 * invariants (acts are grounded, routes follow κ, custom phases that guard a quorum reach one)
 * and carry the fields of the tokens the phase's connections emit, so every shipped manifest
 * runs end to end with nothing but its manifest.
 */
import type { PhaseContext, PhaseHandler } from "../runtime/handler-context.js";
import type { TokenName } from "../tokens/types.js";

export interface RecordedCall {
  loop_id: string;
  phase_id: string;
  kind: string;
  trace_id: string;
  workspace_id: string;
  /** The input, as given (JSON). */
  input: unknown;
}

function fields(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** Fields a token needs beyond token/version/trace_id, with plausible values (§6). */
function tokenFields(token: TokenName, ctx: PhaseContext, base: Record<string, unknown>): Record<string, unknown> {
  switch (token) {
    case "OutcomeSignal":
      return { action_id: base.action_id ?? `act_${ctx.signature.slice(7, 19)}`, status: base.status ?? "success", causal_parent_ids: strings(base.causal_parent_ids) };
    case "ReputationUpdate":
      return { subject_id: `agent_${ctx.loop_id.split(".")[0]}`, subject_type: "agent", domain: "code", delta: 0.01, source_loop: ctx.loop_id, evidence_ref: `trace_id:${ctx.trace_id}` };
    case "DeliberationResult":
      return { verdict: "approve", confidence: 0.9, consensus_type: "fast_path" };
    case "ConsolidationEvent":
      return { timescale: "medium", convergence_status: "stable", affected_node_ids: [], merged_into_ids: [] };
    case "TopologyContext":
      return { max_kappa: 0, routing: "fast" };
    case "SurpriseSignal":
      return { surprise_magnitude: 0, surprise_kind: "other" };
  }
}

async function byKind(ctx: PhaseContext): Promise<Record<string, unknown>> {
  const input = fields(ctx.input);
  const memory = ctx.substrates.memory;
  switch (ctx.phase.kind) {
    case "retrieve": {
      const query = typeof input.query === "string" ? input.query : "";
      const found = await memory.retrieve_context({ query, k: 5 });
      return { query, node_ids: found.nodes.map((n) => n.id).filter((id): id is string => typeof id === "string"), topology: found.topology };
    }
    case "route": {
      const topology = ctx.tokens.find((t) => t.token === "TopologyContext") as { max_kappa?: number } | undefined;
      const kappa = topology?.max_kappa ?? 0;
      return { decision: kappa > 0 ? "deliberate" : "fast", kappa, node_ids: strings(input.node_ids) };
    }
    case "act": {
      const stored = await memory.store_node({ node: { type: "action", content: { loop: ctx.loop_id, phase: ctx.phase.id, iteration: ctx.iteration } } });
      return { action_id: stored.node_id, status: "success", causal_parent_ids: strings(input.node_ids ?? input.causal_parent_ids) };
    }
    case "learn": {
      const actionId = typeof input.action_id === "string" ? input.action_id : undefined;
      const parents = strings(input.causal_parent_ids);
      let updated = 0;
      if (actionId) {
        const updates = await memory.learn_from_outcome({ outcome: { token: "OutcomeSignal", version: "0.1", trace_id: ctx.trace_id, action_id: actionId, status: "success", causal_parent_ids: parents } });
        updated = updates.length;
      }
      return { action_id: actionId ?? `act_${ctx.signature.slice(7, 19)}`, status: "success", causal_parent_ids: parents, updated };
    }
    case "consolidate":
      return { ...(await memory.consolidate({})) };
    default: {
      // A custom phase guarding a quorum reaches one (§7.5): the AgenTroMatic "elect" phase.
      if (ctx.phase.invariant === "quorum_before_commit") {
        return { token: "DeliberationResult", version: "0.1", trace_id: ctx.trace_id, verdict: "approve", confidence: 0.9, consensus_type: "fast_path" };
      }
      return { custom_kind: ctx.phase.custom_kind ?? "custom", received: Object.keys(input) };
    }
  }
}

export function recordingHandler(options: { onCall?: (call: RecordedCall) => void; emits: (loopId: string, phaseId: string) => TokenName[] }): PhaseHandler {
  return async (ctx) => {
    options.onCall?.({ loop_id: ctx.loop_id, phase_id: ctx.phase.id, kind: ctx.phase.kind, trace_id: ctx.trace_id, workspace_id: ctx.workspace_id, input: ctx.input });
    const output = await byKind(ctx);
    if (output.token) return output;
    for (const token of options.emits(ctx.loop_id, ctx.phase.id)) {
      for (const [k, v] of Object.entries(tokenFields(token, ctx, output))) if (output[k] === undefined) output[k] = v;
    }
    return output;
  };
}
