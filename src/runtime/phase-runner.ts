/**
 * Runs one phase of one iteration (§5): signature, idempotent replay, policy and permission
 * before an act, the handler under its timeout, the invariants on its output, then commit, or
 * rollback and the phase's failure directive (retry with exponential backoff on the clock).
 * The runner decides; the executor records the transition.
 */
import type { SubstrateSet } from "../substrates/contracts.js";
import type { Clock } from "./clock.js";
import type { CompiledLoop, CompiledPhase, FailureDirective } from "./compiled-loop.js";
import { canonicalJson } from "../json/canonical-json.js";
import { HandlerError, InvariantViolation, isRetryable, NoHandlerError, PermissionDeniedError, PhaseTimeoutError, PolicyDeniedError, PulseError } from "./errors.js";
import type { EventStream } from "./events.js";
import { HandlerContext, LazyAbort, type PhaseContext, type PhaseHandler } from "./handler-context.js";
import type { IdempotencyCache, IdempotencyEntry } from "./idempotency.js";
import type { ActRecord, IterationContext } from "./iteration-context.js";
import { PhaseScope, guarded, type Breakers } from "./phase-scope.js";
import { phaseSignature } from "./signature.js";
import { checkOutcomeGrounding } from "./invariants.js";
import { endSpan, startPhaseSpan } from "./tracing.js";
import type { PhaseChecks } from "./phase-checks.js";

export type PhaseOutcome =
  | { kind: "completed"; output: unknown; signature: string; replayed: boolean; attempts?: number; routedTo?: string; decision?: string; act?: ActRecord; mutations: { operation: string; result: unknown }[]; heldAudit: PhaseScope["pendingAudit"]; inputSize?: number; outputSize?: number; memoryTx?: string; durable?: { key: string; canonical: string }; canonical?: string }
  | { kind: "failed"; error: PulseError; signature: string; directive: FailureDirective | "fail" };

export interface RunnerOptions {
  loop: CompiledLoop;
  substrates: SubstrateSet;
  breakers: Breakers;
  clock: Clock;
  events: EventStream;
  idempotency: IdempotencyCache;
  quorumThreshold: number;
  retry: { baseMs: number; maxMs: number };
  resolveHandler: (phase: CompiledPhase) => PhaseHandler | undefined;
  measureSizes: boolean;
  onViolation: (violation: InvariantViolation, iteration: IterationContext) => void;
  /** The invariant checks (phase-checks.ts; the conformance self-test swaps in a mutant's). */
  checks: PhaseChecks;
  /**
   * Runs after the handler and before the phase commits (nested loops): it blocks the phase,
   * may add tokens to the iteration, and its failure is the phase's failure.
   */
  duringPhase?: (event: { phase: CompiledPhase; input: unknown; output: unknown; signature: string; iteration: IterationContext }) => Promise<void>;
}

/** The reason a failed attempt's signal carries (a reason-less abort builds a DOMException each time). */
const ABORTED = new PulseError("PHASE_ABORTED", "the phase attempt ended");

function asPulseError(phaseId: string, error: unknown): PulseError {
  return error instanceof PulseError ? error : new HandlerError(phaseId, error);
}

export class PhaseRunner {
  constructor(private readonly o: RunnerOptions) {}

  backoff(attempt: number): number {
    return Math.min(this.o.retry.maxMs, this.o.retry.baseMs * 2 ** attempt);
  }

  async run(phase: CompiledPhase, input: unknown, it: IterationContext): Promise<PhaseOutcome> {
    const { loop } = this.o;
    let signature = "";
    try {
      signature = phaseSignature({ loop_id: loop.loopId, phase_id: phase.id, workspace_id: it.workspaceId, inputs: input }, phase.recipe);
      // The input is the previous phase's output (observed then) or the iteration's input
      // (observed when the iteration started): no need to look at it again.
      this.o.checks.feedbackPath(loop, phase, input, it);
    } catch (error) {
      return this.fail(phase, signature, asPulseError(phase.id, error), it);
    }

    const key = phase.idempotent ? this.o.checks.replayKey(loop, phase, input, signature) : undefined;
    if (key !== undefined) {
      const cached = this.o.idempotency.get(it.workspaceId, key);
      if (cached) return this.replay(phase, signature, cached, it);
      // No await before track() unless a duplicate is already running: a yield here would let
      // concurrent duplicates all start their own execution.
      const running = this.o.idempotency.running(it.workspaceId, key);
      if (running) {
        const entry = await running;
        if (entry) return this.replay(phase, signature, entry, it);
        return this.run(phase, input, it); // the first one failed: try for ourselves
      }
      const done = this.attempts(phase, input, signature, it, key);
      this.o.idempotency.track(
        it.workspaceId,
        key,
        done.then((o) => (o.kind === "completed" ? this.o.idempotency.get(it.workspaceId, key) : undefined)),
      );
      return done;
    }
    return this.attempts(phase, input, signature, it);
  }

  /**
   * The identical output, without running the handler or its side effects (§5.2). The replay
   * still commits in this iteration, whose tokens, policy and grants may differ from the first
   * run's: a replayed act is authorised again and needs its quorum, a replayed route obeys
   * κ-routing, exactly as an execution would.
   */
  private async replay(phase: CompiledPhase, signature: string, entry: IdempotencyEntry, it: IterationContext): Promise<PhaseOutcome> {
    const { loop } = this.o;
    try {
      if (phase.kind === "act") await this.authorize(phase, it);
      const output = JSON.parse(entry.canonical) as unknown;
      it.tokens.observe(output, `phase ${phase.id} output`);
      const outcome: PhaseOutcome = { kind: "completed", output, signature, replayed: true, mutations: [], heldAudit: [], canonical: entry.canonical };
      if (phase.kind === "route") {
        Object.assign(outcome, this.route(phase, output));
        this.o.checks.kappaRouting(loop, phase, outcome.decision, it);
      }
      if (phase.kind === "act") {
        // A replayed act stands for the act it replays: it grounds later learning the same way.
        const act = checkOutcomeGrounding(loop, phase, output, signature);
        this.o.checks.quorum(loop, phase, this.o.quorumThreshold, it);
        it.acts.push(act);
        outcome.act = act;
      }
      return outcome;
    } catch (error) {
      const e = asPulseError(phase.id, error);
      if (e instanceof InvariantViolation) this.o.onViolation(e, it);
      return { kind: "failed", error: e, signature, directive: phase.onFailure ?? "fail" };
    }
  }

  private async attempts(phase: CompiledPhase, input: unknown, signature: string, it: IterationContext, cacheKey = signature): Promise<PhaseOutcome> {
    const handler = this.o.resolveHandler(phase);
    if (!handler) return this.fail(phase, signature, new NoHandlerError(this.o.loop.loopId, phase.id, phase.kind), it);
    for (let attempt = 0; ; attempt++) {
      const result = await this.attempt(phase, handler, input, signature, attempt, it, cacheKey);
      if (result.kind === "completed") {
        if (attempt > 0) result.attempts = attempt + 1;
        return result;
      }
      const { error } = result;
      if (phase.onFailure === "retry" && attempt < phase.maxRetries && isRetryable(error)) {
        const delay = this.backoff(attempt);
        if (this.o.events.active) {
          this.o.events.emit({ type: "phase.retrying", loop_id: this.o.loop.loopId, workspace_id: it.workspaceId, trace_id: it.traceId, phase_id: phase.id, attempt: attempt + 1, delay_ms: delay, error: { code: error.code, message: error.message }, at: this.o.clock.now() });
        }
        await this.o.clock.sleep(delay);
        continue;
      }
      return result;
    }
  }

  private async attempt(phase: CompiledPhase, handler: PhaseHandler, input: unknown, signature: string, attempt: number, it: IterationContext, cacheKey = signature): Promise<PhaseOutcome> {
    const { loop, clock, events } = this.o;
    const controller = new LazyAbort();
    const scope = new PhaseScope(this.o.substrates, this.o.breakers, {
      loopId: loop.loopId,
      phaseId: phase.id,
      kind: phase.kind,
      traceId: it.traceId,
      workspaceId: it.workspaceId,
      // Only a timeout aborts substrate calls in flight; other late calls meet a closed scope.
      abort: phase.timeoutMs === undefined ? undefined : controller,
      feedbackImmutability: loop.invariants.feedback_immutability,
      transactionalWrites: this.o.checks.transactionalWrites,
      propagatesTrace: this.o.checks.propagatesTrace,
      traceIdPropagation: loop.invariants.trace_id_propagation,
      observe: (value, where) => it.tokens.observe(value, where),
      onViolation: (v) => this.o.onViolation(v, it),
    });
    const span = startPhaseSpan(it.span, loop.loopId, phase.id, phase.kind, attempt);
    if (events.active) events.emit({ type: "phase.started", loop_id: loop.loopId, workspace_id: it.workspaceId, trace_id: it.traceId, phase_id: phase.id, attempt, at: clock.now() });
    try {
      if (phase.kind === "act") await this.authorize(phase, it);
      const ctx: PhaseContext = new HandlerContext(input, phase, loop.loopId, it, attempt, signature, controller, scope, clock);
      const raw = await this.withTimeout(phase, handler, ctx, controller);
      const output = raw === undefined ? null : raw;
      // Cached outputs are kept canonical (replays are byte-identical); any other output is
      // checked to be JSON when it becomes the next phase's input and is signed.
      const canonical = phase.idempotent || this.o.measureSizes ? canonicalJson(output) : "";
      it.tokens.observe(output, `phase ${phase.id} output`);
      if (this.o.duringPhase) await this.o.duringPhase({ phase, input, output, signature, iteration: it });
      const routing = phase.kind === "route" ? this.route(phase, output) : undefined;
      if (routing) this.o.checks.kappaRouting(loop, phase, routing.decision, it);
      let act: ActRecord | undefined;
      if (phase.kind === "act") {
        act = checkOutcomeGrounding(loop, phase, output, signature);
        this.o.checks.quorum(loop, phase, this.o.quorumThreshold, it);
      }
      const committing = scope.commit();
      if (committing) await committing;
      const wrote = scope.mutations.length > 0;
      if (wrote) this.o.idempotency.worldChanged(it.workspaceId);
      // A read that wrote nothing replays only while the world it read is unchanged (idempotency.ts):
      // such an entry is not worth keeping across a restart, where that world is read anew.
      const stale = scope.readMemory && !wrote;
      if (phase.idempotent) {
        const entry: IdempotencyEntry = stale ? { output, canonical, readAt: this.o.idempotency.world(it.workspaceId) } : { output, canonical };
        this.o.idempotency.set(it.workspaceId, cacheKey, entry);
      }
      if (act) it.acts.push(act);
      endSpan(span);
      const outcome: PhaseOutcome = { kind: "completed", output, signature, replayed: false, mutations: scope.mutations, heldAudit: scope.pendingAudit };
      if (routing?.routedTo !== undefined) outcome.routedTo = routing.routedTo;
      if (routing?.decision !== undefined) outcome.decision = routing.decision;
      // Already written once: the journal stores this text rather than serialising the output again.
      if (canonical !== "") outcome.canonical = canonical;
      const tx = scope.transactionId;
      if (tx !== undefined) outcome.memoryTx = tx;
      if (phase.idempotent && !stale) outcome.durable = { key: cacheKey, canonical };
      if (act) outcome.act = act;
      if (this.o.measureSizes) {
        outcome.inputSize = input === undefined ? 0 : canonicalJson(input).length;
        outcome.outputSize = canonical.length;
      }
      return outcome;
    } catch (error) {
      controller.abort(ABORTED);
      await scope.rollback();
      const e = asPulseError(phase.id, error);
      endSpan(span, { code: e.code, message: e.message });
      if (e instanceof InvariantViolation) this.o.onViolation(e, it);
      return { kind: "failed", error: e, signature, directive: phase.onFailure ?? "fail" };
    } finally {
      scope.close();
    }
  }

  private withTimeout(phase: CompiledPhase, handler: PhaseHandler, ctx: PhaseContext, controller: LazyAbort): Promise<unknown> {
    if (phase.timeoutMs === undefined) return Promise.resolve(handler(ctx));
    const ms = phase.timeoutMs;
    return new Promise<unknown>((resolve, reject) => {
      const cancel = this.o.clock.timer(ms, () => {
        const error = new PhaseTimeoutError(phase.id, ms);
        controller.abort(error);
        reject(error);
      });
      Promise.resolve()
        .then(() => handler(ctx))
        .then(
          (value) => (cancel(), resolve(value)),
          (error) => (cancel(), reject(error)),
        );
    });
  }

  /** §2, §9.2, §9.4: every act passes the policy substrate and the auth substrate first. */
  private async authorize(phase: CompiledPhase, it: IterationContext): Promise<void> {
    const agentId = it.agentId;
    const action = phase.phase.policy_check ?? `${this.o.loop.loopId}.${phase.id}`;
    const ctx = { trace_id: it.traceId, workspace_id: it.workspaceId };
    const policy = await guarded(this.o.breakers.policy, () => this.o.substrates.policy.check_policy({ actor: agentId, action, resource: `loop:${this.o.loop.loopId}/phase:${phase.id}` }, ctx));
    if (policy?.decision !== "allow") throw new PolicyDeniedError(phase.id, action, policy?.reason);
    const operation = `act:${phase.id}`;
    const permission = await guarded(this.o.breakers.auth, () => this.o.substrates.auth.permission_check({ agent_id: agentId, operation }, ctx));
    if (permission !== "allow") throw new PermissionDeniedError(phase.id, agentId, operation);
  }

  /** §5.3: a route phase's output names where the iteration goes (`next`) and what it decided. */
  private route(phase: CompiledPhase, output: unknown): { routedTo?: string; decision?: string } {
    const o = (output ?? {}) as { next?: unknown; decision?: unknown; routing?: unknown };
    const decision = typeof o.decision === "string" ? o.decision : typeof o.routing === "string" ? o.routing : undefined;
    let routedTo: string | undefined;
    if (typeof o.next === "string") {
      if (!phase.routeTargets.includes(o.next)) {
        throw new PulseError("ROUTE_INVALID", `route phase ${phase.id} chose next "${o.next}", which its outputs.to does not name (${phase.routeTargets.map((t) => `phase:${t}`).join("|") || "no phase"}) (§5.3)`);
      }
      routedTo = o.next;
    } else if (phase.routeTargets.length === 1) {
      routedTo = phase.routeTargets[0];
    }
    const result: { routedTo?: string; decision?: string } = {};
    if (routedTo !== undefined) result.routedTo = routedTo;
    if (decision !== undefined) result.decision = decision;
    return result;
  }

  private fail(phase: CompiledPhase, signature: string, error: PulseError, it: IterationContext): PhaseOutcome {
    if (error instanceof InvariantViolation) this.o.onViolation(error, it);
    return { kind: "failed", error, signature, directive: phase.onFailure ?? "fail" };
  }
}
