/**
 * The invariants checked on a phase's input or output (§7). The others are enforced where the
 * runtime touches substrates (phase-scope.ts: atomicity, feedback immutability, trace ids) and
 * audits (audit-trail.ts: append-only, one event per transition). Each check is a pure function
 * that throws an InvariantViolation naming the invariant, the phase and the spec section.
 */
import type { CompiledLoop, CompiledPhase } from "./compiled-loop.js";
import { InvariantViolation } from "./errors.js";
import type { ActRecord, IterationContext } from "./iteration-context.js";
import { claimedToken } from "./tokens.js";

/**
 * §3.2 and §12 test 2: a learn phase needs an act before it in the iteration, or an
 * OutcomeSignal input about an act this workspace committed. Enforced when the loop has an act
 * phase at all; without one the rule could never be met (the validator warns pulse/missing-act).
 */
export function checkFeedbackPath(loop: CompiledLoop, phase: CompiledPhase, input: unknown, it: IterationContext): void {
  if (phase.kind !== "learn" || it.acts.length > 0) return;
  if (!loop.phases.some((p) => p.kind === "act")) return;
  if (claimedToken(input) === "OutcomeSignal") {
    const actionId = (input as { action_id: string }).action_id;
    if (it.knownAction(actionId)) return;
    throw new InvariantViolation("feedback_path", loop.loopId, phase.id, `the OutcomeSignal names action ${actionId}, which no act phase of this workspace committed: a learn phase must follow an act`);
  }
  throw new InvariantViolation("feedback_path", loop.loopId, phase.id, "no act phase has completed in this iteration: the feedback path cannot be skipped");
}

/** §7.4: a route phase that sees max_kappa > 0 must decide "deliberate". */
export function checkKappaRouting(loop: CompiledLoop, phase: CompiledPhase, decision: string | undefined, it: IterationContext, above = 0): void {
  if (!loop.invariants.kappa_routing) return;
  const topology = it.tokens.get("TopologyContext");
  if (!topology || !(topology.max_kappa > above)) return;
  if (decision !== "deliberate") {
    throw new InvariantViolation(
      "kappa_routing",
      loop.loopId,
      phase.id,
      `the TopologyContext has max_kappa ${topology.max_kappa} > 0, so the route decision must be "deliberate", not ${decision === undefined ? "missing" : `"${decision}"`}`,
    );
  }
}

/** §7.6: an act phase records causal_parent_ids, so learning can attribute its outcome. */
export function checkOutcomeGrounding(loop: CompiledLoop, phase: CompiledPhase, output: unknown, signature: string): ActRecord {
  const o = (output ?? {}) as { causal_parent_ids?: unknown; action_id?: unknown };
  const parents = o.causal_parent_ids;
  const valid = Array.isArray(parents) && parents.every((p) => typeof p === "string");
  if (loop.invariants.outcome_grounding && !valid) {
    throw new InvariantViolation(
      "outcome_grounding",
      loop.loopId,
      phase.id,
      parents === undefined ? "the act output has no causal_parent_ids (an array of the belief ids the action rests on; [] when there are none)" : "causal_parent_ids must be an array of strings",
    );
  }
  const actionId = typeof o.action_id === "string" ? o.action_id : `act_${signature.slice(7, 23)}`;
  return { phase_id: phase.id, action_id: actionId, causal_parent_ids: valid ? (parents as string[]) : [] };
}

/** §7.5: an act phase does not commit until a DeliberationResult reaches the quorum threshold. */
export function checkQuorum(loop: CompiledLoop, phase: CompiledPhase, threshold: number, it: IterationContext): void {
  if (!loop.invariants.quorum_before_commit) return;
  const result = it.tokens.get("DeliberationResult");
  if (!result) {
    throw new InvariantViolation("quorum_before_commit", loop.loopId, phase.id, `no DeliberationResult has been reached in this iteration; the act cannot commit before one with confidence >= ${threshold}`);
  }
  if (!(result.confidence >= threshold)) {
    throw new InvariantViolation("quorum_before_commit", loop.loopId, phase.id, `the DeliberationResult has confidence ${result.confidence} < quorum_threshold ${threshold}; the act cannot commit`);
  }
}
