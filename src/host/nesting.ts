/**
 * Nested loops (§3.6, §11). When a phase named by an inner loop's trigger completes and the
 * trigger's condition holds, the inner loop runs in the same workspace, with the phase's output
 * as input, and the outer phase waits as `wait` says:
 *   until_stable  inner iterations until one reports a ConsolidationEvent with convergence_status
 *                 "stable" (§11.3), at most `maxInnerIterations`; the default when wait is absent,
 *                 since §3.6 requires it before the outer loop observes the inner loop's state
 *   until_done    one inner iteration
 *   fire_forget   the inner iteration starts and the outer phase goes on
 *   bounded       one inner iteration, waited for at most timeout_ms
 * The tokens the inner loop produced (its DeliberationResult, its ConsolidationEvent) join the
 * outer iteration, where quorum-before-commit reads them. An inner iteration that fails or
 * escalates fails the outer phase, whose own failure directive then applies: escalation travels
 * up one level at a time. Depth is unbounded (tested with 8 levels).
 */
import { holds } from "../grammar/expression/index.js";
import type { CompiledInnerLoop, CompiledPhase } from "../runtime/compiled-loop.js";
import type { Clock } from "../runtime/clock.js";
import { PulseError } from "../runtime/errors.js";
import type { IterationContext } from "../runtime/iteration-context.js";
import type { IterationResult } from "../runtime/iteration-result.js";
import type { Loop } from "../runtime/loop.js";
import type { MutantName } from "../runtime/mutants.js";
import { phaseScope } from "./scope.js";

export interface NestingOptions {
  clock: Clock;
  maxInnerIterations: number;
  loopById: (loopId: string) => Loop | undefined;
  /** Iterations started and not awaited (fire_forget, an expired bounded wait): the host awaits them on stop. */
  background: (running: Promise<unknown>) => void;
  note: (message: string, loopId: string) => void;
  mutant?: MutantName | undefined;
}

/** How long the "outer-proceeds-on-timeout" mutant waits for stability before giving up. */
const MUTANT_PATIENCE_MS = 1_000;

export class NestedLoopError extends PulseError {}

function stable(result: IterationResult): boolean {
  return result.tokens.some((t) => t.token === "ConsolidationEvent" && t.convergence_status === "stable");
}

function check(inner: CompiledInnerLoop, result: IterationResult): void {
  if (result.status === "completed") return;
  const code = result.status === "escalated" ? "ESCALATED" : "NESTED_LOOP_FAILED";
  throw new NestedLoopError(code, `inner loop ${inner.loopId} ${result.status === "escalated" ? "escalated" : `ended ${result.status}`}${result.error ? `: ${result.error.message}` : ""} (§11)`);
}

export async function runInnerLoops(o: NestingOptions, outer: Loop, phase: CompiledPhase, input: unknown, output: unknown, it: IterationContext): Promise<void> {
  for (const inner of outer.compiled.innerLoops) {
    if (inner.phase !== phase.id) continue;
    if (inner.condition && !holds(inner.condition, phaseScope(input, output, it.tokens.all()))) continue;
    const loop = o.loopById(inner.loopId);
    if (!loop) {
      o.note(`inner loop ${inner.loopId} of ${outer.id} is not loaded in this host: phase ${phase.id} goes on without it`, outer.id);
      continue;
    }
    // The cause links the inner iteration to the outer one in its audit trail and the trace.
    const request = { workspace: it.workspaceId, input: output, tokens: it.tokens.all(), cause: { inner_of: outer.id, phase: phase.id, trace_id: it.traceId, wait: inner.wait ?? "until_stable" } };
    const absorb = (result: IterationResult) => {
      for (const token of result.tokens) it.tokens.observe(token, `inner loop ${inner.loopId}`);
    };
    const wait = inner.wait ?? "until_stable";
    if (wait === "fire_forget") {
      o.background(loop.runIteration(request));
      continue;
    }
    if (wait === "until_done") {
      const result = await loop.runIteration(request);
      check(inner, result);
      absorb(result);
      continue;
    }
    if (wait === "bounded") {
      const running = loop.runIteration(request);
      const result = await within(o.clock, inner.timeoutMs ?? 0, running);
      if (result === undefined) {
        o.background(running);
        continue;
      }
      check(inner, result);
      absorb(result);
      continue;
    }
    // until_stable
    const started = o.clock.now();
    let reached = false;
    for (let n = 0; n < o.maxInnerIterations && !reached; n++) {
      if (o.mutant === "outer-proceeds-on-timeout" && o.clock.now() - started >= MUTANT_PATIENCE_MS) break;
      const result = await loop.runIteration({ ...request, tokens: it.tokens.all() });
      check(inner, result);
      absorb(result);
      reached = stable(result);
    }
    if (!reached && o.mutant !== "outer-proceeds-on-timeout") {
      throw new NestedLoopError("NESTING_UNSTABLE", `inner loop ${inner.loopId} did not report stability (a ConsolidationEvent with convergence_status "stable") within ${o.maxInnerIterations} iterations; phase ${phase.id} of ${outer.id} cannot go on (§11.3)`);
    }
  }
}

/** The promise's value, or undefined when `ms` of the clock pass first. */
function within<T>(clock: Clock, ms: number, promise: Promise<T>): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const cancel = clock.timer(ms, () => resolve(undefined));
    promise.then(
      (v) => (cancel(), resolve(v)),
      (e) => (cancel(), reject(e)),
    );
  });
}
