/**
 * The checks of a phase that the conformance self-test breaks one at a time (mutants.ts). A loop
 * holds one PhaseChecks, the real one unless the self-test swapped in a mutant's at load, so the
 * per-phase path calls what it holds and never asks which mutant is switched on.
 */
import type { CompiledLoop, CompiledPhase } from "./compiled-loop.js";
import { checkFeedbackPath, checkKappaRouting, checkQuorum } from "./invariants.js";
import type { IterationContext } from "./iteration-context.js";

export interface PhaseChecks {
  /** §7.4: a learn phase runs only after an act. */
  feedbackPath(loop: CompiledLoop, phase: CompiledPhase, input: unknown, it: IterationContext): void;
  /** κ-routing: a route's decision with κ above 0 must be deliberate. */
  kappaRouting(loop: CompiledLoop, phase: CompiledPhase, decision: string | undefined, it: IterationContext): void;
  /** An act commits only with its DeliberationResult at the quorum threshold. */
  quorum(loop: CompiledLoop, phase: CompiledPhase, threshold: number, it: IterationContext): void;
  /** The key an idempotent phase replays by (its signature), or undefined: it never replays. */
  replayKey(loop: CompiledLoop, phase: CompiledPhase, input: unknown, signature: string): string | undefined;
  /** How many times a completed phase that took `attempts` audits its transition (once). */
  transitions(attempts: number): number;
  /** Memory writes go through the phase's transaction. */
  readonly transactionalWrites: boolean;
  /** Every substrate call of a phase carries the iteration's trace id. */
  readonly propagatesTrace: boolean;
}

/** What the runtime checks: every invariant, as the spec says. */
export const CHECKS: PhaseChecks = Object.freeze({
  feedbackPath: checkFeedbackPath,
  kappaRouting: (loop: CompiledLoop, phase: CompiledPhase, decision: string | undefined, it: IterationContext) => checkKappaRouting(loop, phase, decision, it, 0),
  quorum: checkQuorum,
  replayKey: (_loop: CompiledLoop, _phase: CompiledPhase, _input: unknown, signature: string) => signature,
  transitions: () => 1,
  transactionalWrites: true,
  propagatesTrace: true,
});
