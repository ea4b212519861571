/**
 * A loaded loop: runs iterations per workspace through its machine, one at a time per workspace
 * (different workspaces run side by side). Each phase transition, substrate mutation and
 * failure is audited once; loop status (idle, running, paused, degraded, stopped) follows the
 * machine; telemetry and the event stream observe it all.
 */
import type { AnyMachineSnapshot } from "xstate";
import type { Span } from "@opentelemetry/api";
import type { SubstrateSet } from "../substrates/contracts.js";
import { SubstrateUnavailableError } from "../substrates/contracts.js";
import { AuditTrail } from "./audit-trail.js";
import { CircuitBreaker, type CircuitOptions } from "./circuit-breaker.js";
import type { Clock } from "./clock.js";
import type { CompiledLoop, CompiledPhase } from "./compiled-loop.js";
import { CircuitOpenError, InvariantViolation, LoopStoppedError, PulseError, type InvariantName } from "./errors.js";
import { EventStream, type CircuitState, type IterationStatus, type Listener } from "./events.js";
import type { IdempotencyCache } from "./idempotency.js";
import { LoopStepper, type LoopEvent, type LoopStatus } from "./machine.js";
import type { Breakers } from "./phase-scope.js";
import { PhaseRunner, type ActRecord, type IterationContext, type PhaseHandler, type PhaseOutcome } from "./phase-runner.js";
import { blake3Hex } from "./signature.js";
import { TelemetryRecorder, type LoopTelemetry } from "./telemetry.js";
import { TokenLedger } from "./tokens.js";
import { endSpan, startIterationSpan } from "./tracing.js";
import { isTraceId, newSpanId, newTraceId } from "./trace.js";
import type { Token } from "../tokens/types.js";
import type { MutantName } from "./mutants.js";

export interface IterationRequest {
  /** Workspace (tenant) the iteration runs in; "default" when omitted. */
  workspace?: string;
  /** Input of the entry phase. */
  input?: unknown;
  /** W3C trace id to use (32 lowercase hex); a new one when omitted. */
  traceId?: string;
  /** Start at this phase instead of phases[0] (first iteration) or closure.to_phase (later ones). */
  entry?: string;
  /** Tokens that reached this iteration from outside (a signal, an inner loop's result). */
  tokens?: Token[];
  /** The agent on whose behalf the iteration acts (policy actor, auth agent): else input.agent_id, else the runtime's. */
  agentId?: string;
  /** What started the iteration (a signal, an event), recorded in its iteration.started audit event. */
  cause?: Record<string, unknown>;
}

/** A failure as data: the invariant and spec section too when an invariant refused the phase. */
export interface ErrorReport {
  code: string;
  message: string;
  invariant?: InvariantName;
  section?: string;
}

function errorReport(error: PulseError): ErrorReport {
  if (error instanceof InvariantViolation) return { code: error.code, message: error.message, invariant: error.invariant, section: error.section };
  return { code: error.code, message: error.message };
}

export interface PhaseReport {
  phase_id: string;
  status: "completed" | "replayed" | "failed" | "skipped";
  signature: string;
  routed_to?: string;
  error?: ErrorReport;
}

export interface IterationResult {
  loop_id: string;
  workspace_id: string;
  trace_id: string;
  iteration: number;
  status: IterationStatus;
  /** Whether the iteration reached closure.from_phase and returned to closure.to_phase. */
  closed: boolean;
  phases: PhaseReport[];
  /** The last completed phase's output. */
  output: unknown;
  error?: ErrorReport;
  audit_events: number;
  /** The latest token of each kind the iteration saw (a nested loop's results reach its parent this way). */
  tokens: Token[];
}

/** Called around phases by the host (connections, nested loops). */
export interface LoopHooks {
  /** Inside the phase, after its handler, before it commits: nested loops (§11). */
  duringPhase?(event: { loop: Loop; phase: CompiledPhase; input: unknown; output: unknown; signature: string; iteration: IterationContext }): Promise<void>;
  /** After the phase committed and was audited: connections (§3.5). */
  afterPhase?(event: { loop: Loop; phase: CompiledPhase; input: unknown; output: unknown; signature: string; iteration: IterationContext; audit: AuditTrail }): Promise<void>;
  escalate?(event: { loop: Loop; phase: CompiledPhase; error: PulseError; signature: string; iteration: IterationContext; audit: AuditTrail }): Promise<void>;
}

export interface LoopOptions {
  compiled: CompiledLoop;
  substrates: SubstrateSet;
  clock: Clock;
  idempotency: IdempotencyCache;
  quorumThreshold: number;
  agentId: string;
  retry: { baseMs: number; maxMs: number };
  circuit: CircuitOptions;
  /** What a phase does when a substrate's circuit is open: end the iteration (pause) or skip the phase. */
  onSubstrateUnavailable: "pause" | "skip";
  resolveHandler: (loop: Loop, phase: CompiledPhase) => PhaseHandler | undefined;
  hooks: LoopHooks;
  /** The runtime's stream, which also receives this loop's events. */
  events?: EventStream;
  mutant?: MutantName | undefined;
}

interface WorkspaceState {
  snapshot: AnyMachineSnapshot;
  iterations: number;
  started: boolean;
  /** The iteration in flight, chained so iterations of one workspace run one at a time. */
  tail: Promise<unknown>;
  /** Acts committed recently (bounded), for learn phases grounded on an OutcomeSignal. */
  actions: Map<string, true>;
  current?: { traceId: string; phaseId: string; input: unknown };
}

const ACTION_MEMORY = 1024;
const DIRECT_CONTEXTS = 256;

export interface LoopSnapshot {
  version: 1;
  loop_id: string;
  workspace_id: string;
  state: ReturnType<LoopStepper["persist"]>;
  iterations: number;
  started: boolean;
  /** The phase an interrupted iteration was in, and its input: resume re-runs that phase. */
  current?: { trace_id: string; phase_id: string; input: unknown };
}

export class Loop {
  readonly id: string;
  readonly compiled: CompiledLoop;
  readonly events: EventStream;
  readonly stepper: LoopStepper;
  private readonly handlers = new Map<string, PhaseHandler>();
  private readonly workspaces = new Map<string, WorkspaceState>();
  private readonly runner: PhaseRunner;
  private readonly telemetryRecorder: TelemetryRecorder;
  private readonly breakers: Breakers;
  private readonly reportedViolations = new WeakSet<InvariantViolation>();
  private readonly direct = new Map<string, { it: IterationContext; audit: AuditTrail }>();
  /** Loop-wide status, applied to every workspace (pause, degrade, stop are per loop). */
  private template: AnyMachineSnapshot;

  constructor(
    private readonly o: LoopOptions,
    stepper: LoopStepper,
  ) {
    this.compiled = o.compiled;
    this.id = o.compiled.loopId;
    this.events = new EventStream(o.events);
    this.stepper = stepper;
    this.template = stepper.initial;
    const breaker = (slot: string) => new CircuitBreaker(slot, o.clock, o.circuit, (state, previous) => this.circuitChanged(slot, state, previous), o.mutant === "no-circuit");
    this.breakers = { memory: breaker("memory"), policy: breaker("policy"), audit: breaker("audit"), auth: breaker("auth") };
    if (o.substrates.time) this.breakers.time = breaker("time");
    const telemetry = o.compiled.manifest.telemetry;
    const metrics = telemetry?.phase_metrics ?? [];
    this.telemetryRecorder = new TelemetryRecorder(telemetry?.namespace ?? this.id, metrics.includes("input_size") || metrics.includes("output_size"));
    this.runner = new PhaseRunner({
      loop: o.compiled,
      substrates: o.substrates,
      breakers: this.breakers,
      clock: o.clock,
      events: this.events,
      idempotency: o.idempotency,
      quorumThreshold: o.quorumThreshold,
      retry: o.retry,
      resolveHandler: (phase) => this.handlers.get(phase.id) ?? o.resolveHandler(this, phase),
      measureSizes: this.telemetryRecorder.measureSizes,
      onViolation: (v, it) => this.violated(v, it),
      mutant: o.mutant,
      ...(o.hooks.duringPhase ? { duringPhase: (e) => (o.hooks.duringPhase as NonNullable<LoopHooks["duringPhase"]>)({ loop: this, ...e }) } : {}),
    });
  }

  /** Registers the handler of one phase of this loop (overrides runtime-wide handlers). */
  handle(phaseId: string, handler: PhaseHandler): this {
    if (!this.compiled.byId.has(phaseId)) throw new PulseError("UNKNOWN_PHASE", `loop ${this.id} has no phase "${phaseId}" (phases: ${this.compiled.phases.map((p) => p.id).join(", ")})`);
    this.handlers.set(phaseId, handler);
    return this;
  }

  subscribe(listener: Listener): () => void {
    return this.events.subscribe(listener);
  }

  telemetry(): LoopTelemetry {
    return this.telemetryRecorder.snapshot();
  }

  circuit(slot: keyof Breakers): CircuitState | undefined {
    return this.breakers[slot]?.current;
  }

  /** Whether an unavailable substrate skips phases ("skip") rather than pausing the loop. */
  get skipsUnavailable(): boolean {
    return this.o.onSubstrateUnavailable === "skip";
  }

  private circuitOpen(): boolean {
    for (const b of Object.values(this.breakers)) if (b && b.current !== "closed") return true;
    return false;
  }

  /** Earliest time a degraded loop may try again (when its open circuits allow a probe). */
  retryAt(): number {
    let at = 0;
    for (const b of Object.values(this.breakers)) if (b && b.current === "open") at = Math.max(at, b.retryAt);
    return at;
  }

  status(workspace?: string): LoopStatus {
    const ws = workspace === undefined ? undefined : this.workspaces.get(workspace);
    if (ws) return this.stepper.status(ws.snapshot);
    const loopStatus = this.stepper.status(this.template);
    if (loopStatus !== "idle") return loopStatus;
    for (const w of this.workspaces.values()) if (this.stepper.status(w.snapshot) === "running") return "running";
    return "idle";
  }

  /** The phase an iteration of this workspace is in, if one is running. */
  currentPhase(workspace: string): string | undefined {
    const ws = this.workspaces.get(workspace);
    return ws ? this.stepper.phase(ws.snapshot) : undefined;
  }

  pause(): void {
    this.broadcast({ type: "PAUSE" });
  }

  resume(): void {
    this.broadcast({ type: "RESUME" });
  }

  stop(): void {
    this.broadcast({ type: "STOP" });
  }

  private broadcast(event: LoopEvent): void {
    const before = this.status();
    this.template = this.stepper.step(this.template, event);
    for (const ws of this.workspaces.values()) ws.snapshot = this.stepper.step(ws.snapshot, event);
    const after = this.status();
    if (after !== before) this.events.emit({ type: "loop.status_changed", loop_id: this.id, workspace_id: "*", status: after, previous: before, at: this.o.clock.now() });
  }

  private workspace(id: string): WorkspaceState {
    let ws = this.workspaces.get(id);
    if (!ws) {
      ws = { snapshot: this.template, iterations: 0, started: false, tail: Promise.resolve(), actions: new Map() };
      this.workspaces.set(id, ws);
    }
    return ws;
  }

  /** Runs one iteration in a workspace; iterations of one workspace run one after another. */
  runIteration(request: IterationRequest = {}): Promise<IterationResult> {
    return this.enqueue(request, undefined);
  }

  /** `resumedAt`: the audit seq a resumed iteration continues from. */
  private enqueue(request: IterationRequest, resumedAt: number | undefined): Promise<IterationResult> {
    const workspaceId = request.workspace ?? "default";
    const ws = this.workspace(workspaceId);
    const run = ws.tail.then(() => this.iterate(ws, workspaceId, request, resumedAt));
    ws.tail = run.catch(() => undefined);
    return run;
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

  private async iterate(ws: WorkspaceState, workspaceId: string, request: IterationRequest, resumedAt?: number): Promise<IterationResult> {
    const { compiled, clock } = this.o;
    const status = this.stepper.value(ws.snapshot).status;
    if (status === "stopped" || status === "paused") throw new LoopStoppedError(this.id, status);
    const traceId = request.traceId ?? newTraceId();
    if (!isTraceId(traceId)) throw new PulseError("BAD_TRACE_ID", `trace id "${traceId}" is not a W3C trace id (32 lowercase hex digits, not all zero)`);
    const entry = request.entry ?? (ws.started ? compiled.reentry : compiled.entry);
    if (!compiled.byId.has(entry)) throw new PulseError("UNKNOWN_PHASE", `loop ${this.id} has no phase "${entry}"`);

    const number = ++ws.iterations;
    const startedAt = clock.now();
    const span = startIterationSpan(traceId, newSpanId(), { "pulse.loop_id": this.id, "pulse.workspace_id": workspaceId, "pulse.iteration": number });
    const it = this.context(ws, workspaceId, traceId, number, span, agentOf(request.agentId, request.input, this.o.agentId));
    const audit = new AuditTrail(this.o.substrates.audit, this.breakers.audit, clock, this.id, workspaceId, traceId, false, resumedAt);
    // Events that belong to no phase are signed by their iteration: loop, workspace and trace.
    const iterationSignature = `blake3:${blake3Hex(`${this.id}\n${workspaceId}\n${traceId}`)}`;
    const result: IterationResult = { loop_id: this.id, workspace_id: workspaceId, trace_id: traceId, iteration: number, status: "completed", closed: false, phases: [], output: null, audit_events: 0, tokens: [] };

    ws.snapshot = this.stepper.step(ws.snapshot, { type: "ITERATION_START", entry });
    if (this.events.active) this.events.emit(request.cause ? { type: "iteration.started", loop_id: this.id, workspace_id: workspaceId, trace_id: traceId, iteration: number, entry, cause: request.cause, at: startedAt } : { type: "iteration.started", loop_id: this.id, workspace_id: workspaceId, trace_id: traceId, iteration: number, entry, at: startedAt });
    try {
      for (const token of request.tokens ?? []) it.tokens.observe(token, "iteration input");
      it.tokens.observe(request.input, "iteration input");
      const opening = request.cause ? { iteration: number, entry, cause: request.cause } : { iteration: number, entry };
      await audit.append(resumedAt === undefined ? "iteration.started" : "iteration.resumed", null, iterationSignature, opening);
      let input: unknown = request.input ?? null;
      for (let phaseId: string | undefined = entry; phaseId !== undefined; ) {
        const phase = compiled.byId.get(phaseId) as CompiledPhase;
        if (ws.current) {
          ws.current.traceId = traceId;
          ws.current.phaseId = phaseId;
          ws.current.input = input;
        } else ws.current = { traceId, phaseId, input };
        const began = clock.now();
        const outcome = await this.runner.run(phase, input, it);
        if (it.violations.length > 0) await this.flushViolations(it, audit, outcome.signature);
        if (outcome.kind === "completed") {
          await this.completed(phase, outcome, it, audit, ws, began);
          result.phases.push({ phase_id: phase.id, status: outcome.replayed ? "replayed" : "completed", signature: outcome.signature, ...(outcome.routedTo ? { routed_to: outcome.routedTo } : {}) });
          result.output = outcome.output;
          if (this.o.hooks.afterPhase) await this.o.hooks.afterPhase({ loop: this, phase, input, output: outcome.output, signature: outcome.signature, iteration: it, audit });
          input = outcome.output;
          ws.snapshot = this.stepper.step(ws.snapshot, outcome.routedTo ? { type: "PHASE_DONE", next: outcome.routedTo } : { type: "PHASE_DONE" });
          phaseId = this.stepper.phase(ws.snapshot);
          if (phaseId === undefined) result.closed = phase.id === compiled.closureFrom;
          continue;
        }
        const error = errorReport(outcome.error);
        result.phases.push({ phase_id: phase.id, status: "failed", signature: outcome.signature, error });
        this.telemetryRecorder.phase(phase.id, "failed", clock.now() - began);
        const unavailable = outcome.error instanceof CircuitOpenError || outcome.error.cause instanceof SubstrateUnavailableError;
        if (unavailable && this.o.onSubstrateUnavailable === "skip") {
          await this.skipped(phase, outcome, it, audit, "substrate unavailable");
          result.phases[result.phases.length - 1] = { phase_id: phase.id, status: "skipped", signature: outcome.signature, error };
          ws.snapshot = this.stepper.step(ws.snapshot, { type: "PHASE_DONE" });
          phaseId = this.stepper.phase(ws.snapshot);
          continue;
        }
        if (outcome.directive === "skip" && !unavailable) {
          await this.skipped(phase, outcome, it, audit, outcome.error.message);
          result.phases[result.phases.length - 1] = { phase_id: phase.id, status: "skipped", signature: outcome.signature, error };
          ws.snapshot = this.stepper.step(ws.snapshot, { type: "PHASE_DONE" });
          phaseId = this.stepper.phase(ws.snapshot);
          continue;
        }
        result.status = unavailable ? "degraded" : outcome.directive === "rollback" ? "rolled_back" : outcome.directive === "escalate" ? "escalated" : outcome.directive === "abort_loop" ? "aborted" : "failed";
        result.error = error;
        await this.failed(phase, outcome, it, audit, result.status);
        break;
      }
    } catch (e) {
      // The audit substrate itself failed (or a hook did): the iteration cannot be recorded further.
      const err = e instanceof PulseError ? e : new PulseError(e instanceof SubstrateUnavailableError ? "SUBSTRATE_UNAVAILABLE" : "ITERATION_FAILED", (e as Error)?.message ?? String(e), { cause: e });
      result.status = err instanceof CircuitOpenError || e instanceof SubstrateUnavailableError ? "degraded" : "failed";
      result.error = { code: err.code, message: err.message };
    }

    ws.snapshot = this.stepper.step(ws.snapshot, { type: "ITERATION_END" });
    ws.started = true;
    ws.current = undefined;
    // Under "skip" the iteration completes without the unavailable substrate's phases, but the
    // loop is still degraded while a circuit is open: its status says so, and it goes on.
    if (result.status === "degraded" || (this.skipsUnavailable && this.circuitOpen())) this.broadcast({ type: "DEGRADE" });
    else if (result.status === "aborted") this.broadcast({ type: "STOP" });
    else if (this.stepper.value(this.template).status === "degraded") this.broadcast({ type: "RECOVER" });
    try {
      await audit.append(result.status === "completed" ? "iteration.completed" : "iteration.failed", null, iterationSignature, { status: result.status, closed: result.closed, ...(result.error ? { error: result.error } : {}) });
    } catch {
      // Already reported through the iteration's status; an unreachable audit substrate ends here.
    }
    result.audit_events = audit.count;
    result.tokens = it.tokens.all();
    this.telemetryRecorder.iteration(result.status, result.closed);
    endSpan(span, result.error);
    if (this.events.active) {
      this.events.emit({ type: "iteration.finished", loop_id: this.id, workspace_id: workspaceId, trace_id: traceId, iteration: number, status: result.status, closed: result.closed, duration_ms: clock.now() - startedAt, ...(result.error ? { error: result.error } : {}), at: clock.now() });
    }
    return result;
  }

  private async completed(phase: CompiledPhase, outcome: Extract<PhaseOutcome, { kind: "completed" }>, it: IterationContext, audit: AuditTrail, ws: WorkspaceState | undefined, began: number): Promise<void> {
    if (outcome.heldAudit.length > 0) await audit.appendHeld(outcome.heldAudit, phase.id, outcome.signature);
    for (const m of outcome.mutations) await audit.append("substrate.mutated", phase.id, outcome.signature, { operation: m.operation, result: summarize(m.result) });
    const data: Record<string, unknown> = { kind: phase.kind };
    if (outcome.replayed) data.replayed = true;
    if (outcome.decision !== undefined) data.decision = outcome.decision;
    if (outcome.routedTo !== undefined) data.next = outcome.routedTo;
    if (outcome.act) data.causal_parent_ids = outcome.act.causal_parent_ids;
    await audit.transition(phase.kind === "route" ? "phase.routed" : "phase.completed", phase.id, outcome.signature, data);
    if (this.o.mutant === "double-audit-on-retry") for (let i = 1; i < (outcome.attempts ?? 1); i++) await audit.append("phase.completed", phase.id, outcome.signature, data);
    if (outcome.act && ws) remember(ws.actions, outcome.act);
    const duration = this.o.clock.now() - began;
    this.telemetryRecorder.phase(phase.id, outcome.replayed ? "replayed" : "completed", duration, outcome.inputSize, outcome.outputSize);
    if (phase.kind === "route") {
      const topology = it.tokens.get("TopologyContext");
      if (topology) this.telemetryRecorder.kappaSeen(topology.max_kappa);
    }
    if (this.events.active) {
      this.events.emit({ type: "phase.completed", loop_id: this.id, workspace_id: it.workspaceId, trace_id: it.traceId, phase_id: phase.id, signature: outcome.signature, duration_ms: duration, replayed: outcome.replayed, ...(outcome.routedTo ? { routed_to: outcome.routedTo } : {}), at: this.o.clock.now() });
    }
  }

  private async skipped(phase: CompiledPhase, outcome: Extract<PhaseOutcome, { kind: "failed" }>, it: IterationContext, audit: AuditTrail, reason: string): Promise<void> {
    await audit.transition("phase.skipped", phase.id, outcome.signature, { error: { code: outcome.error.code, message: outcome.error.message } });
    if (this.events.active) this.events.emit({ type: "phase.skipped", loop_id: this.id, workspace_id: it.workspaceId, trace_id: it.traceId, phase_id: phase.id, reason, at: this.o.clock.now() });
  }

  private async failed(phase: CompiledPhase, outcome: Extract<PhaseOutcome, { kind: "failed" }>, it: IterationContext, audit: AuditTrail, status: IterationStatus): Promise<void> {
    const error = { code: outcome.error.code, message: outcome.error.message };
    const type = status === "rolled_back" ? "phase.rolled_back" : status === "escalated" ? "phase.escalated" : "phase.failed";
    await audit.transition(type, phase.id, outcome.signature, { directive: outcome.directive, error });
    if (this.events.active) this.events.emit({ type: "phase.failed", loop_id: this.id, workspace_id: it.workspaceId, trace_id: it.traceId, phase_id: phase.id, directive: outcome.directive, error, at: this.o.clock.now() });
    if (status === "escalated") {
      if (this.events.active) this.events.emit({ type: "escalation.requested", loop_id: this.id, workspace_id: it.workspaceId, trace_id: it.traceId, phase_id: phase.id, reason: outcome.error.message, at: this.o.clock.now() });
      await this.o.hooks.escalate?.({ loop: this, phase, error: outcome.error, signature: outcome.signature, iteration: it, audit });
    }
  }

  private violated(v: InvariantViolation, it: IterationContext): void {
    if (this.reportedViolations.has(v)) return;
    this.reportedViolations.add(v);
    if (this.events.active) {
      this.events.emit({ type: "invariant.violated", loop_id: this.id, workspace_id: it.workspaceId, trace_id: it.traceId, phase_id: v.phaseId, invariant: v.invariant, section: v.section, message: v.message, at: this.o.clock.now() });
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

  private circuitChanged(slot: string, state: CircuitState, previous: CircuitState): void {
    this.events.emit({ type: "circuit.state_changed", loop_id: this.id, workspace_id: "*", slot, state, previous, at: this.o.clock.now() });
  }

  /**
   * Runs one phase on its own, inside the iteration named by `traceId` (created on first use):
   * the conformance driver's `phase.invoke`. Duplicate calls with the same signature replay.
   */
  async invokePhase(phaseId: string, request: { workspace?: string; input?: unknown; traceId?: string; agentId?: string } = {}): Promise<{ outcome: PhaseOutcome; audit_events: number }> {
    const phase = this.compiled.byId.get(phaseId);
    if (!phase) throw new PulseError("UNKNOWN_PHASE", `loop ${this.id} has no phase "${phaseId}"`);
    const workspaceId = request.workspace ?? "default";
    const traceId = request.traceId ?? newTraceId();
    const ws = this.workspace(workspaceId);
    const key = `${workspaceId} ${traceId}`;
    let entry = this.direct.get(key);
    if (!entry) {
      const span = startIterationSpan(traceId, newSpanId(), { "pulse.loop_id": this.id, "pulse.workspace_id": workspaceId });
      entry = { it: this.context(ws, workspaceId, traceId, 0, span, agentOf(request.agentId, request.input, this.o.agentId)), audit: new AuditTrail(this.o.substrates.audit, this.breakers.audit, this.o.clock, this.id, workspaceId, traceId, true) };
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

  snapshot(workspace = "default"): LoopSnapshot {
    const ws = this.workspace(workspace);
    const snap: LoopSnapshot = { version: 1, loop_id: this.id, workspace_id: workspace, state: this.stepper.persist(ws.snapshot), iterations: ws.iterations, started: ws.started };
    if (ws.current) snap.current = { trace_id: ws.current.traceId, phase_id: ws.current.phaseId, input: ws.current.input };
    return JSON.parse(JSON.stringify(snap)) as LoopSnapshot;
  }

  /**
   * Restores a workspace from a snapshot. An iteration interrupted mid-way is resumed by
   * `resume()` from the phase it was in, with the same trace id (its signature lets idempotent
   * phases and substrates recognise work already done).
   */
  restore(snapshot: LoopSnapshot): void {
    if (snapshot?.version !== 1 || snapshot.loop_id !== this.id) throw new PulseError("BAD_SNAPSHOT", `snapshot is for ${String(snapshot?.loop_id)}, not loop ${this.id}`);
    const ws = this.workspace(snapshot.workspace_id);
    ws.snapshot = this.stepper.restore(snapshot.state);
    ws.iterations = snapshot.iterations;
    ws.started = snapshot.started;
    ws.current = snapshot.current ? { traceId: snapshot.current.trace_id, phaseId: snapshot.current.phase_id, input: snapshot.current.input } : undefined;
  }

  /**
   * Continues an iteration a restored snapshot interrupted; undefined if there is none. Its audit
   * trail continues after the events the audit substrate already holds for the trace (opened by
   * `iteration.resumed`), so a durable audit log stays one gap-free sequence per iteration.
   */
  async resumeInterrupted(workspace = "default"): Promise<IterationResult | undefined> {
    const ws = this.workspace(workspace);
    const current = ws.current;
    if (!current) return undefined;
    ws.snapshot = this.stepper.step(ws.snapshot, { type: "ITERATION_END" });
    ws.iterations--;
    let resumedAt = 0;
    try {
      const stored = await this.o.substrates.audit.query_by_trace({ trace_id: current.traceId }, { trace_id: current.traceId, workspace_id: workspace });
      for (const e of stored) resumedAt = Math.max(resumedAt, e.seq + 1);
    } catch {
      // An unreachable audit substrate fails the resumed iteration's first append, with its reason.
    }
    return this.enqueue({ workspace, entry: current.phaseId, input: current.input, traceId: current.traceId }, resumedAt);
  }
}

function agentOf(explicit: string | undefined, input: unknown, fallback: string): string {
  if (explicit) return explicit;
  const fromInput = (input as { agent_id?: unknown } | null)?.agent_id;
  return typeof fromInput === "string" && fromInput !== "" ? fromInput : fallback;
}

function remember(actions: Map<string, true>, act: ActRecord): void {
  actions.delete(act.action_id);
  actions.set(act.action_id, true);
  if (actions.size > ACTION_MEMORY) actions.delete(actions.keys().next().value as string);
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
