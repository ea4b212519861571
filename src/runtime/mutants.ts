/**
 * Deliberately broken variants of the runtime, one per conformance test of §12, switched on only
 * by `pulse-conform selftest`. Each breaks exactly the behaviour its test checks, so the suite
 * proves it can fail: the unmodified runtime must pass 12/12 and every mutant must fail its
 * target test.
 *
 * This module is the internal entry the conformance harness uses: the switch is an option under
 * a symbol that no package entry exports (`withMutant(options, name)`), so RuntimeOptions and
 * HostOptions, the public API, have no way to name a mutant.
 */
import { checkKappaRouting } from "./invariants.js";
import { CHECKS, type PhaseChecks } from "./phase-checks.js";
import { phaseSignature } from "./signature.js";

export const MUTANTS = {
  "interleaved-writes": "phase writes bypass the phase transaction (test 1, phase_atomicity_under_concurrency)",
  "no-order-guard": "a learn phase runs without a preceding act (test 2, feedback_path_cannot_be_skipped)",
  "outer-proceeds-on-timeout": "an until_stable wait gives up after a while instead of waiting for stability (test 3, nesting_wait_until_stable)",
  "kappa-threshold-half": "κ-routing only applies above 0.5 instead of above 0 (test 4, kappa_routes_to_deliberate)",
  "commits-early": "an act commits without a DeliberationResult at the quorum threshold (test 5, quorum_before_commit)",
  "double-audit-on-retry": "a retried phase audits every attempt as a transition (test 6, audit_event_per_phase)",
  "re-executes": "idempotent phases run again instead of replaying (test 7, idempotent_retry_identical)",
  "drops-signal": "cross-loop signals are emitted but never delivered (test 8, cross_loop_signal_delivery)",
  "no-circuit": "substrate failures never open a circuit: the loop keeps calling (test 9, substrate_unavailable_degrades)",
  "tenantless-cache": "idempotent replays are keyed without the workspace, so one workspace can replay another's output (test 10, multi_tenant_isolation)",
  "fresh-trace-per-call": "every substrate call gets a new trace id (test 11, trace_id_propagates_to_substrates)",
  "no-validation": "manifests are loaded without validation (test 12, manifest_validates_against_schema)",
} as const;

export type MutantName = keyof typeof MUTANTS;

export function isMutantName(name: string): name is MutantName {
  return Object.hasOwn(MUTANTS, name);
}

/** The option key a mutant travels under (spreading options keeps it). */
export const MUTANT: unique symbol = Symbol("pulse.conformance.mutant");

interface Mutated {
  [MUTANT]?: MutantName;
}

/** The options with a mutant switched on (conformance self-test only). */
export function withMutant<T extends object>(options: T, mutant: MutantName | undefined): T {
  return mutant === undefined ? options : ({ ...options, [MUTANT]: mutant } as T);
}

/** The mutant switched on in runtime or host options, if any. */
export function mutantOf(options: object): MutantName | undefined {
  return (options as Mutated)[MUTANT];
}

/**
 * The phase checks a mutant breaks, built here so the production path holds only the real ones
 * (phase-checks.ts) and never compares a mutant's name per phase.
 */
export function checksOf(mutant: MutantName | undefined): PhaseChecks {
  switch (mutant) {
    case "no-order-guard":
      return { ...CHECKS, feedbackPath: () => {} };
    case "kappa-threshold-half":
      return { ...CHECKS, kappaRouting: (loop, phase, decision, it) => checkKappaRouting(loop, phase, decision, it, 0.5) };
    case "commits-early":
      return { ...CHECKS, quorum: () => {} };
    case "re-executes":
      return { ...CHECKS, replayKey: () => undefined };
    case "tenantless-cache":
      // Replays keyed by a signature that leaves the workspace out.
      return { ...CHECKS, replayKey: (loop, phase, input) => phaseSignature({ loop_id: loop.loopId, phase_id: phase.id, workspace_id: "*", inputs: input }, phase.recipe) };
    case "double-audit-on-retry":
      return { ...CHECKS, transitions: (attempts) => Math.max(1, attempts) };
    case "interleaved-writes":
      return { ...CHECKS, transactionalWrites: false };
    case "fresh-trace-per-call":
      return { ...CHECKS, propagatesTrace: false };
    default:
      return CHECKS;
  }
}
