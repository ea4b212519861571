/**
 * Runs iterations of one loop: phase after phase as the machine allows, each through the phase
 * runner, and records every transition once: the audit trail (§7.3), the event stream, telemetry
 * and the iteration's span. Also runs single phases on their own (the conformance driver's
 * `phase.invoke`), inside the iteration their trace id names.
 */
import type { SubstrateSet } from "../substrates/contracts.js";
import { SubstrateUnavailableError } from "../substrates/contracts.js";
import { AuditTrail } from "./audit-trail.js";
import type { Clock } from "./clock.js";
import type { CompiledLoop, CompiledPhase } from "./compiled-loop.js";
import { CircuitOpenError, InvariantViolation, LeaseLostError, LoopStoppedError, PulseError } from "./errors.js";
import type { EventStream, IterationStatus } from "./events.js";
import type { IterationContext } from "./iteration-context.js";
import type { Journal } from "./journal.js";
import { StoreError } from "../store/contracts.js";
import { checkOutcomeGrounding } from "./invariants.js";

/** A phase an interrupted iteration committed before it stopped. */
export interface Committed {
  phase_id: string;
  signature: string;
  status: string;
  output: unknown;
}
import { errorReport, phaseReport, type IterationRequest, type IterationResult } from "./iteration-result.js";
import type { LoopStepper } from "./machine.js";
import type { PhaseChecks } from "./phase-checks.js";
import { PhaseRunner, type PhaseOutcome, type RunnerOptions } from "./phase-runner.js";
import type { Breakers } from "./phase-scope.js";
import { blake3Hex } from "./signature.js";
import type { TelemetryRecorder } from "./telemetry.js";
import { TokenLedger } from "./tokens.js";
import { endSpan, startIterationSpan } from "./tracing.js";
import { isTraceId, newSpanId, newTraceId } from "./trace.js";
import { agentOf, rememberAct, type WorkspaceState } from "./workspace.js";
import type { Span } from "@opentelemetry/api";

/** The host's hooks with the loop already bound (see LoopHooks). */
export interface BoundHooks {
  afterPhase?(event: { phase: CompiledPhase; input: unknown; output: unknown; signature: string; iteration: IterationContext; audit: AuditTrail }): Promise<void>;
  escalate?(event: { phase: CompiledPhase; error: PulseError; signature: string; iteration: IterationContext; audit: AuditTrail }): Promise<void>;
}

export interface ExecutorOptions {
  compiled: CompiledLoop;
  substrates: SubstrateSet;
  clock: Clock;
  breakers: Breakers;
  stepper: LoopStepper;
  events: EventStream;
  telemetry: TelemetryRecorder;
  agentId: string;
  onSubstrateUnavailable: "pause" | "skip";
  runner: Omit<RunnerOptions, "onViolation" | "loop" | "substrates" | "breakers" | "clock" | "events" | "checks">;
  hooks: BoundHooks;
  /** Moves the loop-wide status as the iteration's end calls for (degrade, stop, recover). */
  settle: (result: IterationResult) => void;
  /** The invariant checks (phase-checks.ts; the conformance self-test swaps in a mutant's). */
  checks: PhaseChecks;
  /** The loop's journal when the runtime has a Store: each step commits there as one unit. */
  journal?: Journal | undefined;
  /** Why the workspace's iterations may start no further phase here (a fleet lease lost), if so. */
  fenced?: (workspaceId: string) => string | undefined;
  /** The iteration's end was on the wire when the store's connection broke: the loop finds out which it was (in-doubt.ts). */
  inDoubt?: (result: IterationResult) => void;
}

/** Trails of directly invoked phases kept at once (one per trace id the driver uses). */
const DIRECT_CONTEXTS = 256;

export class IterationExecutor {
  private readonly id: string;
  private readonly runner: PhaseRunner;
  private readonly reportedViolations = new WeakSet<InvariantViolation>();
  private readonly direct = new Map<string, { it: IterationContext; audit: AuditTrail }>();

  constructor(private readonly o: ExecutorOptions) {
    this.id = o.compiled.loopId;
    this.runner = new PhaseRunner({
      ...o.runner,
      loop: o.compiled,
      substrates: o.substrates,
      breakers: o.breakers,
      clock: o.clock,
      events: o.events,
      checks: o.checks,
      onViolation: (v, it) => this.violated(v, it),
    });
  }

  private context(ws: WorkspaceState, workspaceId: string, traceId: string, number: number, span: Span, agentId: string): IterationContext {
    return {
      traceId,
      workspaceId,
      number,
      agentId,
      tokens: new TokenLedger(),
      acts: [],
      violations: [],
      span,
      knownAction: (actionId) => ws.actions.has(actionId),
    };
  }

  /**
   * Runs one iteration of the workspace. `resumedAt` is the audit seq a resumed iteration
   * continues from; `committed`, the phases a journal says it already committed (not run again).
   */
  async run(ws: WorkspaceState, workspaceId: string, request: IterationRequest, resumedAt?: number, committed: readonly Committed[] = []): Promise<IterationResult> {
    const { compiled, clock, stepper, events } = this.o;
    const status = stepper.value(ws.snapshot).status;
    if (status === "stopped" || status === "paused") throw new LoopStoppedError(this.id, status);
    const traceId = request.traceId ?? newTraceId();
    if (!isTraceId(traceId)) throw new PulseError("BAD_TRACE_ID", `trace id "${traceId}" is not a W3C trace id (32 lowercase hex digits, not all zero)`);
    const entry = request.entry ?? (ws.started ? compiled.reentry : compiled.entry);
    if (!compiled.byId.has(entry)) throw new PulseError("UNKNOWN_PHASE", `loop ${this.id} has no phase "${entry}"`);

    const number = ++ws.iterations;
    const startedAt = clock.now();
    const span = startIterationSpan(traceId, newSpanId(), { "pulse.loop_id": this.id, "pulse.workspace_id": workspaceId, "pulse.iteration": number });
    const it = this.context(ws, workspaceId, traceId, number, span, agentOf(request.agentId, request.input, this.o.agentId));
    if (this.o.journal) it.outbox = { entries: [], deliver: [] };
    const journal = this.o.journal;
    const audit = new AuditTrail(this.o.substrates.audit, this.o.breakers.audit, clock, this.id, workspaceId, traceId, false, resumedAt, journal?.holdsAudit === true);
    // Events that belong to no phase are signed by their iteration: loop, workspace and trace.
    const iterationSignature = `blake3:${blake3Hex(`${this.id}\n${workspaceId}\n${traceId}`)}`;
    const result: IterationResult = { loop_id: this.id, workspace_id: workspaceId, trace_id: traceId, iteration: number, status: "completed", closed: false, phases: [], output: null, audit_events: 0, tokens: [] };

    ws.snapshot = stepper.step(ws.snapshot, { type: "ITERATION_START", entry });
    if (events.active) events.emit(request.cause ? { type: "iteration.started", loop_id: this.id, workspace_id: workspaceId, trace_id: traceId, iteration: number, entry, cause: request.cause, at: startedAt } : { type: "iteration.started", loop_id: this.id, workspace_id: workspaceId, trace_id: traceId, iteration: number, entry, at: startedAt });
    try {
      for (const token of request.tokens ?? []) it.tokens.observe(token, "iteration input");
      // What the committed phases left in the iteration: their tokens, and their acts (for learning).
      for (const c of committed) {
        it.tokens.observe(c.output, `phase ${c.phase_id} output`);
        const phase = compiled.byId.get(c.phase_id);
        if (phase?.kind === "act" && c.status !== "skipped") it.acts.push(checkOutcomeGrounding(compiled, phase, c.output, c.signature));
      }
      it.tokens.observe(request.input, "iteration input");
      const opening = request.cause ? { iteration: number, entry, cause: request.cause } : { iteration: number, entry };
      await audit.append(resumedAt === undefined ? "iteration.started" : "iteration.resumed", null, iterationSignature, opening);
      if (journal) {
        const started = { number, entry, input: request.input ?? null, started_at: new Date(startedAt).toISOString(), ...(request.cause ? { cause: request.cause } : {}) };
        // The signal that started it goes to the inbox with it: a redelivery is recognised after a restart.
        const signal = request.cause?.signal;
        journal.defer({ workspace_id: workspaceId, trace_id: traceId, ...(resumedAt === undefined ? { started } : { resumed: { at: entry } }), counters: { iterations: ws.iterations, started: ws.started }, ...(typeof signal === "string" ? { inbox: { event_id: signal } } : {}) });
      }
      await this.phases(ws, entry, request.input ?? null, it, audit, result);
    } catch (e) {
      if (e instanceof LeaseLostError) return this.abandoned(ws, workspaceId, traceId, number, startedAt, result, e, span);
      // The audit substrate itself failed (or a hook did): the iteration cannot be recorded further.
      const err = e instanceof PulseError ? e : new PulseError(e instanceof SubstrateUnavailableError ? "SUBSTRATE_UNAVAILABLE" : "ITERATION_FAILED", (e as Error)?.message ?? String(e), { cause: e });
      result.status = err instanceof CircuitOpenError || e instanceof SubstrateUnavailableError ? "degraded" : "failed";
      // A store that failed under the phase keeps its own code: the host stops (or pauses) on it.
      result.error = e instanceof StoreError ? { code: e.code, message: e.message } : { code: err.code, message: err.message };
    }

    const lost = this.fence(workspaceId);
    if (lost) return this.abandoned(ws, workspaceId, traceId, number, startedAt, result, lost, span);
    ws.snapshot = stepper.step(ws.snapshot, { type: "ITERATION_END" });
    ws.started = true;
    ws.current = undefined;
    this.o.settle(result);
    let inDoubt = false;
    try {
      await audit.append(result.status === "completed" ? "iteration.completed" : "iteration.failed", null, iterationSignature, { status: result.status, closed: result.closed, ...(result.error ? { error: result.error } : {}) });
      if (journal) {
        await journal.commit(audit, { workspace_id: workspaceId, trace_id: traceId, finished: { status: result.status, closed: result.closed, ...(result.error ? { error: result.error } : {}) }, counters: { iterations: ws.iterations, started: true } });
        // Every unit is committed: what the delivery appends (signal.emitted) goes straight to
        // the store, instead of being numbered and held for a unit that never comes (a seq gap).
        audit.release();
        await deliver(it);
      }
    } catch (e) {
      it.outbox = undefined;
      // An unreachable audit substrate ends here, reported through the iteration's status; a
      // store that cannot record the end leaves the iteration to be resumed, and says why. Its
      // end refused by the lease's fence: the new holder resumes it, as after LEASE_LOST.
      if (refusedByFence(e)) {
        result.status = "failed";
        result.error = { code: "LEASE_LOST", message: new LeaseLostError(this.id, workspaceId, "the database refused the iteration's end: the lease names another holder").message };
      } else if (journal && result.status === "completed") {
        result.status = "failed";
        result.error = { code: (e as { code?: string }).code ?? "STORE_FAILED", message: (e as Error).message };
        if ((e as { inDoubt?: unknown }).inDoubt === true) inDoubt = true;
      }
    }
    // Events that arrive after the end (a signal's delivery, acknowledged later) go straight to the store.
    audit.release();
    result.audit_events = audit.count;
    result.tokens = it.tokens.all();
    this.o.telemetry.iteration(result.status, result.closed);
    endSpan(span, result.error);
    if (events.active) {
      events.emit({ type: "iteration.finished", loop_id: this.id, workspace_id: workspaceId, trace_id: traceId, iteration: number, status: result.status, closed: result.closed, duration_ms: clock.now() - startedAt, ...(result.error ? { error: result.error } : {}), at: clock.now() });
    }
    if (inDoubt) this.o.inDoubt?.(result);
    return result;
  }

  /** The error that stops an iteration of the workspace here, when its lease is lost. */
  private fence(workspaceId: string): LeaseLostError | undefined {
    const why = this.o.fenced?.(workspaceId);
    return why === undefined ? undefined : new LeaseLostError(this.id, workspaceId, why);
  }

  /**
   * An iteration stopped by a lost lease: nothing more of it is recorded (no end, no audit event),
   * so the journal shows it interrupted after its last committed phase and the new holder resumes
   * it there. Here it ends as failed with LEASE_LOST.
   */
  private abandoned(ws: WorkspaceState, workspaceId: string, traceId: string, number: number, startedAt: number, result: IterationResult, error: LeaseLostError, span: Span): IterationResult {
    const { stepper, events, clock } = this.o;
    ws.snapshot = stepper.step(ws.snapshot, { type: "ITERATION_END" });
    ws.current = undefined;
    this.o.journal?.discard(traceId);
    result.status = "failed";
    result.error = { code: error.code, message: error.message };
    endSpan(span, result.error);
    if (events.active) events.emit({ type: "iteration.finished", loop_id: this.id, workspace_id: workspaceId, trace_id: traceId, iteration: number, status: result.status, closed: false, error: result.error, duration_ms: clock.now() - startedAt, at: clock.now() });
    return result;
  }

  /**
   * Ends an interrupted iteration whose every phase had committed: only its end was not recorded.
   * Nothing runs again; the trail continues at `resumedAt` with the end the iteration would have had.
   */
  async closeRecovered(ws: WorkspaceState, workspaceId: string, traceId: string, resumedAt: number, last: Committed): Promise<IterationResult> {
    const { compiled, clock } = this.o;
    const closed = last.phase_id === compiled.closureFrom;
    const result: IterationResult = { loop_id: this.id, workspace_id: workspaceId, trace_id: traceId, iteration: ws.iterations, status: "completed", closed, phases: [], output: last.output, audit_events: 0, tokens: [] };
    const audit = new AuditTrail(this.o.substrates.audit, this.o.breakers.audit, clock, this.id, workspaceId, traceId, false, resumedAt, this.o.journal?.holdsAudit === true);
    await audit.append("iteration.completed", null, `blake3:${blake3Hex(`${this.id}\n${workspaceId}\n${traceId}`)}`, { status: "completed", closed, resumed: true });
    await this.o.journal?.commit(audit, { workspace_id: workspaceId, trace_id: traceId, finished: { status: "completed", closed }, counters: { iterations: ws.iterations, started: true } });
    ws.started = true;
    ws.current = undefined;
    result.audit_events = audit.count;
    return result;
  }

  /** The phases from `entry` until the machine leaves the iteration (closure.from_phase, the last phase) or one fails. */
  private async phases(ws: WorkspaceState, entry: string, first: unknown, it: IterationContext, audit: AuditTrail, result: IterationResult): Promise<void> {
    const { compiled, clock, stepper } = this.o;
    let input = first;
    for (let phaseId: string | undefined = entry; phaseId !== undefined; ) {
      const phase = compiled.byId.get(phaseId) as CompiledPhase;
      if (ws.current) {
        ws.current.traceId = it.traceId;
        ws.current.phaseId = phaseId;
        ws.current.input = input;
      } else ws.current = { traceId: it.traceId, phaseId, input };
      const fenced = this.fence(it.workspaceId);
      if (fenced) throw fenced;
      const began = clock.now();
      const outcome = await this.runner.run(phase, input, it);
      if (it.violations.length > 0) await this.flushViolations(it, audit, outcome.signature);
      if (outcome.kind === "completed") {
        await this.completed(phase, outcome, it, audit, ws, began);
        result.phases.push(phaseReport(phase.id, outcome.replayed ? "replayed" : "completed", outcome.signature, outcome.routedTo));
        result.output = outcome.output;
        if (this.o.hooks.afterPhase) await this.o.hooks.afterPhase({ phase, input, output: outcome.output, signature: outcome.signature, iteration: it, audit });
        input = outcome.output;
        ws.snapshot = stepper.step(ws.snapshot, outcome.routedTo ? { type: "PHASE_DONE", next: outcome.routedTo } : { type: "PHASE_DONE" });
        phaseId = stepper.phase(ws.snapshot);
        if (phaseId === undefined) result.closed = phase.id === compiled.closureFrom;
        if (this.o.journal) await this.journalPhase(this.o.journal, it, audit, phase, outcome, outcome.replayed ? "replayed" : "completed", outcome.output, phaseId);
        continue;
      }
      const error = errorReport(outcome.error);
      result.phases.push({ phase_id: phase.id, status: "failed", signature: outcome.signature, error });
      this.o.telemetry.phase(phase.id, "failed", clock.now() - began);
      const unavailable = outcome.error instanceof CircuitOpenError || outcome.error.cause instanceof SubstrateUnavailableError;
      const skip = (unavailable && this.o.onSubstrateUnavailable === "skip") || (outcome.directive === "skip" && !unavailable);
      if (skip) {
        await this.skipped(phase, outcome, it, audit, unavailable ? "substrate unavailable" : outcome.error.message);
        result.phases[result.phases.length - 1] = { phase_id: phase.id, status: "skipped", signature: outcome.signature, error };
        ws.snapshot = stepper.step(ws.snapshot, { type: "PHASE_DONE" });
        phaseId = stepper.phase(ws.snapshot);
        // A skipped phase passes its input on: that is what the next phase starts from on resume.
        if (this.o.journal) await this.journalPhase(this.o.journal, it, audit, phase, outcome, "skipped", input, phaseId);
        continue;
      }
      result.status = unavailable ? "degraded" : outcome.directive === "rollback" ? "rolled_back" : outcome.directive === "escalate" ? "escalated" : outcome.directive === "abort_loop" ? "aborted" : "failed";
      result.error = error;
      await this.failed(phase, outcome, it, audit, result.status);
      return;
    }
  }

  /**
   * One committed phase, as one unit: journal entry, idempotency record, memory, audit events.
   * The iteration's last phase travels with its end (Journal.defer).
   */
  private async journalPhase(journal: Journal, it: IterationContext, audit: AuditTrail, phase: CompiledPhase, outcome: PhaseOutcome, status: "completed" | "replayed" | "skipped", output: unknown, next: string | undefined): Promise<void> {
    const done = outcome.kind === "completed" ? outcome : undefined;
    const step = {
      workspace_id: it.workspaceId,
      trace_id: it.traceId,
      phase: { phase_id: phase.id, signature: outcome.signature, status, output, next: next ?? null, ...(done?.canonical !== undefined ? { canonical: done.canonical } : {}) },
      ...(done?.durable ? { idempotency: { workspace_id: it.workspaceId, signature: done.durable.key, canonical: done.durable.canonical } } : {}),
      ...(done?.memoryTx !== undefined ? { memory: { substrate: this.o.substrates.memory, tx_id: done.memoryTx } } : {}),
    };
    if (it.outbox && it.outbox.entries.length > 0) Object.assign(step, { outbox: it.outbox.entries.splice(0) });
    if (next === undefined) journal.defer(step);
    else {
      // A phase that finished after the lease was lost is not committed: the new holder runs it.
      const fenced = this.fence(it.workspaceId);
      if (fenced) throw fenced;
      await journal.commit(audit, step).catch((e: unknown) => {
        throw refusedByFence(e) ? new LeaseLostError(this.id, it.workspaceId, "the database refused the phase's commit: the lease names another holder") : e;
      });
      await deliver(it);
    }
  }

  private async completed(phase: CompiledPhase, outcome: Extract<PhaseOutcome, { kind: "completed" }>, it: IterationContext, audit: AuditTrail, ws: WorkspaceState, began: number): Promise<void> {
    if (outcome.heldAudit.length > 0) await audit.appendHeld(outcome.heldAudit, phase.id, outcome.signature);
    for (const m of outcome.mutations) await audit.append("substrate.mutated", phase.id, outcome.signature, { operation: m.operation, result: summarize(m.result) });
    const data: Record<string, unknown> = { kind: phase.kind };
    if (outcome.replayed) data.replayed = true;
    if (outcome.decision !== undefined) data.decision = outcome.decision;
    if (outcome.routedTo !== undefined) data.next = outcome.routedTo;
    if (outcome.act) data.causal_parent_ids = outcome.act.causal_parent_ids;
    await audit.transition(phase.kind === "route" ? "phase.routed" : "phase.completed", phase.id, outcome.signature, data);
    for (let i = this.o.checks.transitions(outcome.attempts ?? 1); i > 1; i--) await audit.append("phase.completed", phase.id, outcome.signature, data);
    if (outcome.act) rememberAct(ws, outcome.act);
    const duration = this.o.clock.now() - began;
    this.o.telemetry.phase(phase.id, outcome.replayed ? "replayed" : "completed", duration, outcome.inputSize, outcome.outputSize);
    if (phase.kind === "route") {
      const topology = it.tokens.get("TopologyContext");
      if (topology) this.o.telemetry.kappaSeen(topology.max_kappa);
    }
    if (this.o.events.active) {
      this.o.events.emit({ type: "phase.completed", loop_id: this.id, workspace_id: it.workspaceId, trace_id: it.traceId, phase_id: phase.id, signature: outcome.signature, duration_ms: duration, replayed: outcome.replayed, ...(outcome.routedTo ? { routed_to: outcome.routedTo } : {}), at: this.o.clock.now() });
    }
  }

  private async skipped(phase: CompiledPhase, outcome: Extract<PhaseOutcome, { kind: "failed" }>, it: IterationContext, audit: AuditTrail, reason: string): Promise<void> {
    await audit.transition("phase.skipped", phase.id, outcome.signature, { error: { code: outcome.error.code, message: outcome.error.message } });
    if (this.o.events.active) this.o.events.emit({ type: "phase.skipped", loop_id: this.id, workspace_id: it.workspaceId, trace_id: it.traceId, phase_id: phase.id, reason, at: this.o.clock.now() });
  }

  private async failed(phase: CompiledPhase, outcome: Extract<PhaseOutcome, { kind: "failed" }>, it: IterationContext, audit: AuditTrail, status: IterationStatus): Promise<void> {
    const error = { code: outcome.error.code, message: outcome.error.message };
    const type = status === "rolled_back" ? "phase.rolled_back" : status === "escalated" ? "phase.escalated" : "phase.failed";
    await audit.transition(type, phase.id, outcome.signature, { directive: outcome.directive, error });
    const { events, clock } = this.o;
    if (events.active) events.emit({ type: "phase.failed", loop_id: this.id, workspace_id: it.workspaceId, trace_id: it.traceId, phase_id: phase.id, directive: outcome.directive, error, at: clock.now() });
    if (status === "escalated") {
      if (events.active) events.emit({ type: "escalation.requested", loop_id: this.id, workspace_id: it.workspaceId, trace_id: it.traceId, phase_id: phase.id, reason: outcome.error.message, at: clock.now() });
      await this.o.hooks.escalate?.({ phase, error: outcome.error, signature: outcome.signature, iteration: it, audit });
    }
  }

  private violated(v: InvariantViolation, it: IterationContext): void {
    if (this.reportedViolations.has(v)) return;
    this.reportedViolations.add(v);
    if (this.o.events.active) {
      this.o.events.emit({ type: "invariant.violated", loop_id: this.id, workspace_id: it.workspaceId, trace_id: it.traceId, phase_id: v.phaseId, invariant: v.invariant, section: v.section, message: v.message, at: this.o.clock.now() });
    }
    // Audited by the executor as its own event, before the transition that follows.
    it.violations.push(v);
  }

  private async flushViolations(it: IterationContext, audit: AuditTrail, signature: string): Promise<void> {
    while (it.violations.length > 0) {
      const v = it.violations.shift() as InvariantViolation;
      await audit.append("invariant.violated", v.phaseId, signature, { invariant: v.invariant, section: v.section, code: v.code, message: v.message });
    }
  }

  /**
   * Runs one phase on its own, inside the iteration named by `traceId` (created on first use):
   * the conformance driver's `phase.invoke`. Duplicate calls with the same signature replay.
   */
  async invoke(ws: WorkspaceState, phase: CompiledPhase, request: { workspace?: string; input?: unknown; traceId?: string; agentId?: string }): Promise<{ outcome: PhaseOutcome; audit_events: number }> {
    const workspaceId = request.workspace ?? "default";
    const traceId = request.traceId ?? newTraceId();
    const key = `${workspaceId} ${traceId}`;
    let entry = this.direct.get(key);
    if (!entry) {
      const span = startIterationSpan(traceId, newSpanId(), { "pulse.loop_id": this.id, "pulse.workspace_id": workspaceId });
      entry = { it: this.context(ws, workspaceId, traceId, 0, span, agentOf(request.agentId, request.input, this.o.agentId)), audit: new AuditTrail(this.o.substrates.audit, this.o.breakers.audit, this.o.clock, this.id, workspaceId, traceId, true) };
      this.direct.set(key, entry);
      if (this.direct.size > DIRECT_CONTEXTS) this.direct.delete(this.direct.keys().next().value as string);
    }
    const began = this.o.clock.now();
    entry.it.tokens.observe(request.input, `phase ${phase.id} input`);
    const outcome = await this.runner.run(phase, request.input ?? null, entry.it);
    await this.flushViolations(entry.it, entry.audit, outcome.signature);
    if (outcome.kind === "completed") await this.completed(phase, outcome, entry.it, entry.audit, ws, began);
    else await entry.audit.transition("phase.failed", phase.id, outcome.signature, { directive: outcome.directive, error: { code: outcome.error.code, message: outcome.error.message } });
    return { outcome, audit_events: entry.audit.count };
  }
}

/** Sends what the iteration's committed units put in the outbox. */
async function deliver(it: IterationContext): Promise<void> {
  if (!it.outbox) return;
  for (const send of it.outbox.deliver.splice(0)) await send();
}

/** What a mutation's audit event records: ids and counts, not whole payloads. */
function summarize(result: unknown): unknown {
  if (result === null || typeof result !== "object") return result ?? null;
  if (Array.isArray(result)) return { count: result.length };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(result)) {
    if (k === "token" || k === "convergence_status" || k.endsWith("_id") || k === "existing") out[k] = v;
    else if (Array.isArray(v)) out[`${k}_count`] = v.length;
  }
  return out;
}

/** A commit the store refused because the fleet lease it was sent under moved to another host. */
function refusedByFence(error: unknown): boolean {
  return (error as { code?: unknown } | undefined)?.code === "STORE_LEASE_LOST";
}
