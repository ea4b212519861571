/**
 * A loaded loop: runs iterations per workspace through its machine, one at a time per workspace
 * (different workspaces run side by side). The loop owns what is loop-wide: its status (idle,
 * running, paused, degraded, stopped, following the machine), its circuit breakers, handlers,
 * telemetry and event stream; the iteration executor (iteration.ts) runs and records each
 * iteration.
 */
import type { AnyMachineSnapshot } from "xstate";
import type { SubstrateSet } from "../substrates/contracts.js";
import type { AuditTrail } from "./audit-trail.js";
import { CircuitBreaker, type CircuitOptions } from "./circuit-breaker.js";
import type { Clock } from "./clock.js";
import type { CompiledLoop, CompiledPhase } from "./compiled-loop.js";
import { PulseError } from "./errors.js";
import { EventStream, type CircuitState, type Listener } from "./events.js";
import type { PhaseHandler } from "./handler-context.js";
import type { IdempotencyCache } from "./idempotency.js";
import type { IterationContext } from "./iteration-context.js";
import type { IterationRequest, IterationResult } from "./iteration-result.js";
import { IterationExecutor, type Committed } from "./iteration.js";
import type { Journal } from "./journal.js";
import { LoopStepper, type LoopEvent, type LoopStatus } from "./machine.js";
import { checksOf, type MutantName } from "./mutants.js";
import type { PhaseOutcome } from "./phase-runner.js";
import type { Breakers } from "./phase-scope.js";
import { checkSnapshot, restoreInto, snapshotOf, type LoopSnapshot } from "./snapshot.js";
import { TelemetryRecorder, type LoopTelemetry } from "./telemetry.js";
import { resolveInDoubt } from "./in-doubt.js";
import { newWorkspaceState, type WorkspaceState } from "./workspace.js";

export type { IterationRequest, IterationResult, PhaseReport, ErrorReport } from "./iteration-result.js";
export type { LoopSnapshot } from "./snapshot.js";

/** An interrupted iteration about to continue (Loop.takeOver). */
export interface Resumable {
  workspace: string;
  iteration: number;
  phase: string;
  /** What started it, as the journal recorded (a periodic tick's `scheduled_at`, a signal). */
  cause?: unknown;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
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
  /** The loop's journal on the runtime's Store, if it has one. */
  journal?: Journal | undefined;
}

export class Loop {
  readonly id: string;
  readonly compiled: CompiledLoop;
  readonly events: EventStream;
  readonly stepper: LoopStepper;
  private readonly handlers = new Map<string, PhaseHandler>();
  private readonly workspaces = new Map<string, WorkspaceState>();
  private readonly executor: IterationExecutor;
  private readonly telemetryRecorder: TelemetryRecorder;
  private readonly breakers: Breakers;
  /** Loop-wide status, applied to every workspace (pause, degrade, stop are per loop). */
  private template: AnyMachineSnapshot;
  /** Workspaces whose fleet lease this host lost: why their iterations start no further phase here. */
  private readonly fences = new Map<string, string>();
  /** Aborted by forgetDoubts(): in-doubt iterations are no longer read back (the host stopped). */
  private doubts = new AbortController();

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
    const { duringPhase, afterPhase, escalate } = o.hooks;
    this.executor = new IterationExecutor({
      compiled: o.compiled,
      substrates: o.substrates,
      clock: o.clock,
      breakers: this.breakers,
      stepper,
      events: this.events,
      telemetry: this.telemetryRecorder,
      agentId: o.agentId,
      onSubstrateUnavailable: o.onSubstrateUnavailable,
      checks: checksOf(o.mutant),
      journal: o.journal,
      runner: {
        idempotency: o.idempotency,
        quorumThreshold: o.quorumThreshold,
        retry: o.retry,
        resolveHandler: (phase) => this.handlers.get(phase.id) ?? o.resolveHandler(this, phase),
        measureSizes: this.telemetryRecorder.measureSizes,
        ...(duringPhase ? { duringPhase: (e) => duringPhase.call(o.hooks, { loop: this, ...e }) } : {}),
      },
      hooks: {
        ...(afterPhase ? { afterPhase: (e) => afterPhase.call(o.hooks, { loop: this, ...e }) } : {}),
        ...(escalate ? { escalate: (e) => escalate.call(o.hooks, { loop: this, ...e }) } : {}),
      },
      settle: (result) => this.settle(result),
      fenced: (workspaceId) => this.fences.get(workspaceId),
      inDoubt: (result) => {
        if (!o.journal) return;
        const at = { loop_id: this.id, workspace_id: result.workspace_id, trace_id: result.trace_id, iteration: result.iteration };
        const d = { store: o.journal.store, clock: o.clock, stop: this.doubts.signal, loopId: this.id, fenced: (w: string) => this.fences.get(w), recount: this.telemetryRecorder.recount.bind(this.telemetryRecorder) };
        resolveInDoubt({ ...d, emit: (outcome, message, status) => this.events.emit({ type: "iteration.resolved", ...at, outcome, message, ...(status ? { status } : {}), at: o.clock.now() }) }, result);
      },
    });
  }

  /** Registers the handler of one phase of this loop (overrides runtime-wide handlers). */
  handle<I = unknown, O = unknown>(phaseId: string, handler: PhaseHandler<I, O>): this {
    if (!this.compiled.byId.has(phaseId)) throw new PulseError("UNKNOWN_PHASE", `loop ${this.id} has no phase "${phaseId}" (phases: ${this.compiled.phases.map((p) => p.id).join(", ")})`);
    this.handlers.set(phaseId, handler as PhaseHandler);
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

  /**
   * The loop-wide status an iteration's end calls for. Under "skip" the iteration completes
   * without the unavailable substrate's phases, but the loop is still degraded while a circuit is
   * open: its status says so, and it goes on.
   */
  private settle(result: IterationResult): void {
    if (result.status === "degraded" || (this.skipsUnavailable && this.circuitOpen())) this.broadcast({ type: "DEGRADE" });
    else if (result.status === "aborted") this.broadcast({ type: "STOP" });
    else if (this.stepper.value(this.template).status === "degraded") this.broadcast({ type: "RECOVER" });
  }

  private workspace(id: string): WorkspaceState {
    let ws = this.workspaces.get(id);
    if (!ws) {
      ws = newWorkspaceState(this.template);
      this.workspaces.set(id, ws);
    }
    return ws;
  }

  /** Runs one iteration in a workspace; iterations of one workspace run one after another. */
  runIteration(request: IterationRequest = {}): Promise<IterationResult> {
    return this.enqueue(request, undefined);
  }

  /** `resumedAt`: the audit seq a resumed iteration continues from. */
  private enqueue(request: IterationRequest, resumedAt: number | undefined, committed?: readonly Committed[]): Promise<IterationResult> {
    const workspaceId = request.workspace ?? "default";
    const ws = this.workspace(workspaceId);
    const run = ws.tail.then(() => this.executor.run(ws, workspaceId, request, resumedAt, committed));
    ws.tail = run.catch(() => undefined);
    return run;
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
    return this.executor.invoke(this.workspace(request.workspace ?? "default"), phase, request);
  }

  snapshot(workspace = "default"): LoopSnapshot {
    return snapshotOf(this.id, workspace, this.workspace(workspace), this.stepper);
  }

  /**
   * Restores a workspace from a snapshot. An iteration interrupted mid-way is resumed by
   * `resumeInterrupted()` from the phase it was in, with the same trace id (its signature lets
   * idempotent phases and substrates recognise work already done).
   */
  restore(snapshot: LoopSnapshot): void {
    checkSnapshot(this.id, snapshot);
    restoreInto(this.workspace(snapshot.workspace_id), snapshot, this.stepper);
  }

  /**
   * Continues an iteration a restored snapshot interrupted; undefined if there is none. Its audit
   * trail continues after the events the audit substrate already holds for the trace (opened by
   * `iteration.resumed`), so a durable audit log stays one gap-free sequence per iteration.
   */
  async resumeInterrupted(workspace = "default"): Promise<IterationResult | undefined> {
    const ws = this.workspace(workspace);
    if (!ws.current) return undefined;
    const run = ws.tail.then(() => this.continueInterrupted(ws, workspace));
    ws.tail = run.catch(() => undefined);
    return run;
  }

  /** Runs the workspace's interrupted iteration from where it stands (in the workspace's queue). */
  private async continueInterrupted(ws: WorkspaceState, workspace: string): Promise<IterationResult | undefined> {
    const current = ws.current;
    if (!current) return undefined;
    const complete = current.recovered?.complete;
    if (complete) {
      const resumedAt = current.recovered?.auditSeq ?? 0;
      delete current.recovered;
      return this.executor.closeRecovered(ws, workspace, current.traceId, resumedAt, complete);
    }
    ws.snapshot = this.stepper.step(ws.snapshot, { type: "ITERATION_END" });
    ws.iterations--;
    let resumedAt = current.recovered?.auditSeq ?? 0;
    if (!current.recovered) {
      try {
        const stored = await this.o.substrates.audit.query_by_trace({ trace_id: current.traceId }, { trace_id: current.traceId, workspace_id: workspace });
        for (const e of stored) resumedAt = Math.max(resumedAt, e.seq + 1);
      } catch {
        // An unreachable audit substrate fails the resumed iteration's first append, with its reason.
      }
    }
    const request: IterationRequest = { workspace, entry: current.phaseId, input: current.input, traceId: current.traceId };
    const recovered = current.recovered;
    if (recovered) {
      delete current.recovered;
      request.cause = { trigger: "resumed", at: current.phaseId, ...(isRecord(recovered.cause) ? { was: recovered.cause } : {}) };
    }
    return this.executor.run(ws, workspace, request, resumedAt, recovered?.committed);
  }

  /**
   * This host (of a fleet) now holds the loop's lease for `workspace`: phases may start here
   * again, what the journal holds of the workspace is read afresh (counters, idempotency records,
   * the iteration another host left interrupted, the store's cached memory graphs), and that
   * iteration continues at the phase after its last committed one, with its trace id, before
   * any iteration queued after this call. `onResume` hears of it before it runs. Queued behind
   * an iteration of the workspace still running here, so never reads this host's own as interrupted.
   */
  takeOver(workspace: string, onResume: (r: Resumable) => void): Promise<IterationResult | undefined> {
    this.fences.delete(workspace);
    return this.resumeFromJournal(workspace, onResume);
  }

  /** Stops reading back iterations whose end was in doubt (the host stops). */
  forgetDoubts(): void {
    this.doubts.abort();
    this.doubts = new AbortController();
  }

  /** takeOver() without the lease: what the journal shows interrupted in `workspace` continues here. */
  resumeFromJournal(workspace: string, onResume: (r: Resumable) => void): Promise<IterationResult | undefined> {
    const ws = this.workspace(workspace);
    const run = ws.tail.then(async () => {
      await this.recover(workspace);
      const current = ws.current;
      if (!current?.recovered) return undefined;
      onResume({ workspace, iteration: ws.iterations, phase: current.phaseId, cause: current.recovered.cause });
      return this.continueInterrupted(ws, workspace);
    });
    ws.tail = run.catch(() => undefined);
    return run;
  }

  /**
   * This host lost the loop's lease for `workspace`: iterations of the workspace running here
   * start no further phase and commit nothing more (a phase in flight runs to its end, and is
   * not committed), ending with LEASE_LOST; the new holder resumes them from the journal.
   */
  fence(workspace: string, why: string): void {
    this.fences.set(workspace, why);
  }

  /** Workspaces holding an iteration to resume (restored from a snapshot, or recovered from the journal). */
  interrupted(): { workspace: string; iteration: number; phase: string }[] {
    const out: { workspace: string; iteration: number; phase: string }[] = [];
    for (const [id, ws] of this.workspaces) if (ws.current?.recovered) out.push({ workspace: id, iteration: ws.iterations, phase: ws.current.phaseId });
    return out;
  }

  /**
   * With a journal: the counters, idempotency records and interrupted iterations the store holds
   * for this loop, as a previous run left them: called once, when the loop is loaded; and for
   * one workspace by takeOver().
   */
  async recover(workspace?: string): Promise<void> {
    const journal = this.o.journal;
    if (!journal) return;
    const r = await journal.recover(this.o.idempotency.maxEntriesPerWorkspace, workspace);
    // Read again for a takeover: what this host recovered earlier of the workspace may be stale.
    if (workspace !== undefined && this.workspace(workspace).current?.recovered) this.workspace(workspace).current = undefined;
    for (const [id, c] of r.counters) {
      const ws = this.workspace(id);
      ws.iterations = Math.max(ws.iterations, c.iterations);
      ws.started = ws.started || c.started;
    }
    for (const rec of [...r.idempotency].reverse()) this.o.idempotency.set(rec.workspace_id, rec.signature, { output: JSON.parse(rec.canonical) as unknown, canonical: rec.canonical });
    for (const it of r.interrupted) {
      const last = it.phases[it.phases.length - 1];
      const next = last ? last.next : it.entry;
      const ws = this.workspace(it.workspace_id);
      const recovered = { auditSeq: it.audit_seq, committed: it.phases, ...(it.cause !== undefined ? { cause: it.cause } : {}) };
      // Every phase committed and only the end is missing: the iteration is closed, nothing re-run.
      if (last && (next === null || !this.compiled.byId.has(next))) ws.current = { traceId: it.trace_id, phaseId: last.phase_id, input: last.output, recovered: { ...recovered, complete: last } };
      else ws.current = { traceId: it.trace_id, phaseId: next ?? it.entry, input: last ? last.output : it.input, recovered };
      ws.iterations = Math.max(ws.iterations, it.number);
    }
  }
}
