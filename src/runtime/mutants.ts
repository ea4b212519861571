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
