/**
 * A host runs many loops (many manifests, many workspaces) in one process: it arms each loop's
 * cadences, carries signals between loops (and to other hosts through a transport), runs nested
 * loops, routes escalations, and stops gracefully (in-flight iterations finish, nothing new
 * starts). All timing goes through the runtime's clock, so tests run on virtual time.
 */
import type { Manifest } from "../manifest/types.js";
import type { Clock } from "../runtime/clock.js";
import { PulseError, type PulseError as PulseErrorType } from "../runtime/errors.js";
import type { RuntimeEvent } from "../runtime/events.js";
import type { IterationRequest, IterationResult, Loop } from "../runtime/loop.js";
import { createRuntime, type LoadOptions, type Runtime, type RuntimeOptions } from "../runtime/runtime.js";
import type { AuditTrail } from "../runtime/audit-trail.js";
import { ReceiverUnavailableError, type Ack, type DeliveryEvent, type Emission, type SignalReceiver, type Transport } from "../connections/contracts.js";
import type { PulseCloudEvent } from "../tokens/types.js";
import { holds, parseExpression, type Expr } from "../grammar/expression/index.js";
import type { CadenceContext, CadenceDriver } from "./cadence/driver.js";
import { PeriodicCadence } from "./cadence/periodic.js";
import { ActivityTracker, IdleCadence } from "./cadence/idle.js";
import { StreamingCadence } from "./cadence/streaming.js";
import { RateLimiter } from "./cadence/rate-limit.js";
import { runInnerLoops } from "./nesting.js";
import { auditOf, emitConnections, entryFor, type ConnectionEmitter } from "./signals.js";
import { EXTENSIONS } from "../connections/envelope.js";
import { escalationEnvelope, type Escalation } from "./escalation.js";
import { SignalPlumbing } from "./plumbing.js";

export type HostEvent =
  | RuntimeEvent
  | { type: "host.note"; loop_id: string; message: string; at: number }
  | { type: "cadence.fired"; loop_id: string; cadence: string; at: number }
  | { type: "cadence.declined"; loop_id: string; cadence: string; reason: string; at: number }
  | { type: "signal.emitted" | "signal.delivered" | "signal.dropped" | "signal.overflow" | "signal.retrying"; loop_id: string; connection: string; to_loop: string; event_id: string; trace_id: string; detail?: string; /** Why, in words (a dropped signal). */ message?: string; at: number }
  | { type: "signal.received"; loop_id: string; event_id: string; from: string; outcome: Ack["outcome"]; at: number }
  | { type: "escalation"; loop_id: string; to: string; phase_id: string; reason: string; at: number };

export interface HostOptions extends Omit<RuntimeOptions, "hooks"> {
  /** Workspace of cadence-triggered iterations and of signals that name none. */
  workspace?: string;
  /** Carries signals to loops this host does not run (default: in-process only). */
  transport?: Transport;
  /** Stream URIs of streaming cadences, bound to sources. */
  streams?: Record<string, AsyncIterable<unknown>>;
  /** Upper bound on inner iterations an until_stable wait runs before it gives up. */
  maxInnerIterations?: number;
  /** Where escalations go that no parent loop takes: the host's human channel. */
  onEscalation?: (escalation: Escalation) => void | Promise<void>;
  /** Backoff of signal redelivery. */
  signalRetry?: { baseMs: number; maxMs: number };
}

/** How long stop() lets in-flight work finish by default, on the host's clock. */
export const DEFAULT_STOP_TIMEOUT_MS = 10_000;

export interface StopOptions {
  /**
   * How long in-flight iterations and undelivered signals get to finish (default 10 s, on the
   * host's clock). Past it, signals not yet acknowledged are dropped (reason "stopped", audited)
   * and stop() resolves; iterations still running finish on their own, and their signals are
   * dropped the same way.
   */
  timeoutMs?: number;
}

export interface StopResult {
  /** True when the deadline passed before everything finished. */
  timedOut: boolean;
  /** Signals dropped because they were still unacknowledged at the end. */
  signalsDropped: number;
  /** Iterations still running when stop() resolved (0 unless timedOut). */
  iterationsRunning: number;
}

interface Hosted {
  loop: Loop;
  drivers: CadenceDriver[];
  emitters: Map<string, ConnectionEmitter>;
  limiter: RateLimiter | undefined;
  events: { trigger: string; filter: Expr | undefined }[];
  receiver: SignalReceiver;
  /** Signals that arrived while the loop was paused, run on resume. */
  held: IterationRequest[];
}

export class Host {
  readonly runtime: Runtime;
  readonly clock: Clock;
  private readonly hosted = new Map<string, Hosted>();
  private readonly listeners = new Set<(event: HostEvent) => void>();
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly busyLoops = new Map<string, number>();
  private readonly activity: ActivityTracker;
  private readonly trails = new WeakMap<Emission, AuditTrail>();
  private readonly plumbing: SignalPlumbing;
  private started = false;
  private stopping = false;
  /** Set once stop() has finished, until start(): arriving signals are refused, to be retried. */
  private stopped = false;

  constructor(
    runtime: Runtime,
    private readonly options: HostOptions,
    plumbing: SignalPlumbing,
  ) {
    this.runtime = runtime;
    this.clock = runtime.clock;
    this.activity = new ActivityTracker(this.clock.now());
    this.plumbing = plumbing;
    runtime.subscribe((e) => this.emit(e));
  }

  get workspace(): string {
    return this.options.workspace ?? "default";
  }

  subscribe(listener: (event: HostEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: HostEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        // A failing subscriber must not break the host.
      }
    }
  }

  note(loopId: string, message: string): void {
    this.emit({ type: "host.note", loop_id: loopId, message, at: this.clock.now() });
  }

  loop(loopId: string): Loop | undefined {
    return this.hosted.get(loopId)?.loop;
  }

  get loops(): Loop[] {
    return [...this.hosted.values()].map((h) => h.loop);
  }

  /** Loads a manifest (validated; see Runtime.load) and prepares its cadences and connections. */
  async load(manifest: string | Manifest | Record<string, unknown>, options: LoadOptions = {}): Promise<Loop> {
    const loop = await this.runtime.load(manifest, options);
    const hosted: Hosted = { loop, drivers: [], emitters: new Map(), limiter: undefined, events: [], held: [], receiver: { receive: (e) => this.receive(loop.id, e) } };
    for (const { connection } of loop.compiled.connections) {
      hosted.emitters.set(connection.id, this.plumbing.channel(connection, this.clock, (e) => this.delivery(e), this.options.signalRetry));
    }
    this.arm(hosted);
    this.plumbing.register(loop.id, hosted.receiver);
    this.hosted.set(loop.id, hosted);
    if (this.started) for (const d of hosted.drivers) d.start();
    return loop;
  }

  /** Builds the cadence drivers of the loop's cadence and its fallbacks (all armed together). */
  private arm(hosted: Hosted): void {
    const { loop } = hosted;
    const ctx = (type: string): CadenceContext => ({
      loop,
      clock: this.clock,
      workspace: this.workspace,
      run: (request, reason) => this.cadenceRun(loop, request, reason || type),
      busy: () => (this.busyLoops.get(`${loop.id} ${this.workspace}`) ?? 0) > 0,
      note: (message) => this.note(loop.id, message),
    });
    for (let cadence: Manifest["cadence"] | undefined = loop.compiled.manifest.cadence; cadence; cadence = cadence.fallback) {
      const params = (cadence.params ?? {}) as Record<string, unknown>;
      switch (cadence.type) {
        case "periodic":
          hosted.drivers.push(new PeriodicCadence(params, ctx("periodic")));
          break;
        case "idle":
          hosted.drivers.push(new IdleCadence(params, ctx("idle"), this.activity));
          break;
        case "streaming":
          hosted.drivers.push(new StreamingCadence(params, ctx("streaming"), this.options.streams?.[String(params.stream)]));
          break;
        case "event": {
          const filter = typeof params.filter === "string" ? parseExpression(params.filter) : undefined;
          hosted.events.push({ trigger: String(params.trigger), filter: filter?.ok ? filter.value : undefined });
          break;
        }
        case "manual":
          if (typeof params.rate_limit === "string" && !hosted.limiter) hosted.limiter = new RateLimiter(loop.id, params.rate_limit);
          break;
        // cross_loop_signal: armed by receive(), which matches signals against it.
      }
    }
  }

  /** Starts every loaded loop's cadences (again after a stop: signals flow again too). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.stopped = false;
    this.plumbing.reopen();
    for (const h of this.hosted.values()) for (const d of h.drivers) d.start();
  }

  /**
   * Graceful stop: cadences disarm, nothing new starts, in-flight iterations and signals finish,
   * within `timeoutMs` (a receiver that never acknowledges cannot hold the host forever).
   */
  async stop(options: StopOptions = {}): Promise<StopResult> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
    this.stopping = true;
    for (const h of this.hosted.values()) for (const d of h.drivers) d.stop();
    const deadline = new AbortController();
    let timedOut = false;
    const expired = this.clock.sleep(timeoutMs, deadline.signal).then(
      () => void (timedOut = true),
      () => undefined,
    );
    await Promise.race([this.drain(), expired]);
    deadline.abort();
    const signalsDropped = await this.plumbing.close();
    this.started = false;
    this.stopped = true;
    const iterationsRunning = this.inflight.size;
    if (timedOut) {
      this.note("host", `stop: ${timeoutMs} ms passed with work left: ${signalsDropped} undelivered signal(s) dropped, ${iterationsRunning} iteration(s) still running`);
    }
    return { timedOut, signalsDropped, iterationsRunning };
  }

  /** Waits for in-flight iterations and the signals they send, until quiet. */
  private async drain(): Promise<void> {
    await this.settled();
    // Signals of finished iterations may start iterations of their receivers: settle until quiet.
    for (let round = 0; round < 100; round++) {
      await this.plumbing.flush();
      if (this.inflight.size === 0) break;
      await this.settled();
    }
  }

  /** Resolves when no iteration the host started is in flight. */
  async settled(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  pause(loopId: string): void {
    this.required(loopId).loop.pause();
  }

  resume(loopId: string): void {
    const h = this.required(loopId);
    h.loop.resume();
    for (const request of h.held.splice(0)) this.track(loopId, request.workspace ?? this.workspace, h.loop.runIteration(request), true);
  }

  private required(loopId: string): Hosted {
    const h = this.hosted.get(loopId);
    if (!h) throw new PulseError("NOT_FOUND", `no loop ${loopId} in this host (loaded: ${[...this.hosted.keys()].join(", ") || "none"})`);
    return h;
  }

  /** Starts an iteration and keeps track of it (graceful stop, idleness, one-at-a-time checks). */
  private track(loopId: string, workspace: string, running: Promise<IterationResult>, activity: boolean): Promise<IterationResult> {
    const key = `${loopId} ${workspace}`;
    this.busyLoops.set(key, (this.busyLoops.get(key) ?? 0) + 1);
    if (activity) this.activity.began(this.clock.now());
    const done = running.finally(() => {
      this.busyLoops.set(key, (this.busyLoops.get(key) ?? 1) - 1);
      if (activity) this.activity.ended(this.clock.now());
      this.inflight.delete(done);
    });
    this.inflight.add(done);
    return done;
  }

  private async cadenceRun(loop: Loop, request: IterationRequest, reason: string): Promise<IterationResult | undefined> {
    const decline = (why: string) => {
      this.emit({ type: "cadence.declined", loop_id: loop.id, cadence: reason, reason: why, at: this.clock.now() });
      return undefined;
    };
    if (this.stopping) return decline("the host is stopping");
    const status = loop.status();
    if (status === "stopped" || status === "paused") return decline(`the loop is ${status}`);
    // A degraded loop is not retried before its open circuits allow a probe: no spinning.
    if (status === "degraded" && !loop.skipsUnavailable && this.clock.now() < loop.retryAt()) return decline(`degraded until ${new Date(loop.retryAt()).toISOString()}`);
    this.emit({ type: "cadence.fired", loop_id: loop.id, cadence: reason, at: this.clock.now() });
    try {
      return await this.track(loop.id, request.workspace ?? this.workspace, loop.runIteration(request), reason !== "idle");
    } catch (error) {
      return decline((error as Error).message);
    }
  }

  /** A manual trigger (§8.6): runs one iteration now, within the loop's rate_limit. */
  async trigger(loopId: string, request: IterationRequest = {}): Promise<IterationResult> {
    const h = this.required(loopId);
    h.limiter?.admit(this.clock.now());
    if (this.stopping) throw new PulseError("HOST_STOPPING", "the host is stopping: no new iteration starts");
    return this.track(loopId, request.workspace ?? this.workspace, h.loop.runIteration(request), true);
  }

  /** An external event (§8.1): every loop whose event cadence names it (and whose filter holds) iterates. */
  async emitEvent(name: string, payload: unknown = {}, options: { workspace?: string } = {}): Promise<IterationResult[]> {
    const runs: Promise<IterationResult | undefined>[] = [];
    for (const h of this.hosted.values()) {
      const match = h.events.find((e) => e.trigger === name && (!e.filter || holds(e.filter, payload)));
      if (!match) continue;
      runs.push(this.cadenceRun(h.loop, { workspace: options.workspace ?? this.workspace, input: payload, cause: { event: name } }, "event"));
    }
    return (await Promise.all(runs)).filter((r): r is IterationResult => r !== undefined);
  }

  /**
   * Takes a signal for one of this host's loops (transports call it). A stopped host throws
   * ReceiverUnavailableError (the sender retries); a rejected signal's id is not remembered, so
   * the same signal is taken when it comes again and can be.
   */
  async receive(loopId: string, envelope: unknown): Promise<Ack> {
    if (this.stopped) throw new ReceiverUnavailableError(`the host running ${loopId} is stopped`);
    const h = this.hosted.get(loopId);
    if (!h) return { outcome: "rejected", reason: `no loop ${loopId} in this host` };
    if (h.loop.status() === "stopped") return { outcome: "rejected", reason: `loop ${loopId} is stopped` };
    const verdict = this.plumbing.accept(loopId, envelope);
    if (verdict.outcome !== "accepted") {
      this.emit({ type: "signal.received", loop_id: loopId, event_id: verdict.id ?? "?", from: verdict.source ?? "?", outcome: verdict.outcome, at: this.clock.now() });
      return verdict.outcome === "rejected" ? { outcome: "rejected", reason: verdict.reason ?? "invalid envelope" } : { outcome: verdict.outcome };
    }
    const env = verdict.envelope as PulseCloudEvent;
    const route = entryFor(h.loop, env);
    const workspace = (env as unknown as Record<string, unknown>)[EXTENSIONS.workspace];
    const request: IterationRequest = {
      workspace: typeof workspace === "string" ? workspace : this.workspace,
      input: env.data,
      tokens: [env.data as never],
      cause: { signal: env.id, source: env.source, trace_id: env.subject.replace(/^trace_id:/, "") },
    };
    if (route.entry) request.entry = route.entry;
    this.emit({ type: "signal.received", loop_id: loopId, event_id: env.id, from: env.source, outcome: "accepted", at: this.clock.now() });
    // While the host stops, a signal still runs (stop() waits for it): at-least-once holds.
    if (h.loop.status() === "paused") {
      h.held.push(request);
      return { outcome: "accepted" };
    }
    void this.track(loopId, request.workspace as string, h.loop.runIteration(request), true).catch(() => undefined);
    return { outcome: "accepted" };
  }

  private async delivery(event: DeliveryEvent): Promise<void> {
    const trail = this.trails.get(event.emission);
    const audited = auditOf(event);
    if (trail && audited) {
      try {
        await trail.append(audited.type, event.emission.phaseId, event.emission.signature, audited.data);
      } catch {
        // The audit substrate is unreachable: the loop's own circuit reports it.
      }
    }
    const { emission, envelope } = event;
    this.emit({
      type: event.type,
      loop_id: emission.loopId,
      connection: emission.connection.id,
      to_loop: emission.connection.to_loop,
      event_id: envelope.id,
      trace_id: emission.traceId,
      ...(event.type === "signal.dropped"
        ? { detail: event.reason, ...(event.detail ? { message: event.detail } : {}) }
        : event.type === "signal.delivered"
          ? { detail: event.outcome }
          : event.type === "signal.retrying"
            ? { detail: event.error }
            : event.type === "signal.overflow"
              ? { detail: event.policy }
              : {}),
      at: this.clock.now(),
    });
    if (event.type === "signal.overflow" && event.policy === "escalate") {
      await this.escalate({ loopId: emission.loopId, phaseId: emission.phaseId, traceId: emission.traceId, signature: emission.signature, reason: `connection ${emission.connection.id} overflowed max_inflight ${event.inflight}` });
    }
  }

  /** An EscalationRequest (§5.4): to the parent loop if the loop declares one, else the host's human channel. */
  async escalate(e: { loopId: string; phaseId: string; traceId: string; signature: string; reason: string; error?: PulseErrorType }): Promise<void> {
    const loop = this.hosted.get(e.loopId)?.loop;
    const parent = loop?.compiled.manifest.nesting?.parent_loop ?? null;
    const to = parent ?? "human";
    const envelope = escalationEnvelope({ ...e, to, time: this.clock.now() });
    this.emit({ type: "escalation", loop_id: e.loopId, to, phase_id: e.phaseId, reason: e.reason, at: this.clock.now() });
    await this.options.onEscalation?.({ from: e.loopId, to, envelope });
  }

  /** @internal the runtime hooks the host installs */
  hooks() {
    return {
      duringPhase: async (e: Parameters<NonNullable<import("../runtime/loop.js").LoopHooks["duringPhase"]>>[0]) => {
        if (e.loop.compiled.innerLoops.length === 0) return;
        await runInnerLoops(
          {
            clock: this.clock,
            maxInnerIterations: this.options.maxInnerIterations ?? 32,
            loopById: (id) => this.loop(id),
            background: (running) => void this.track(e.loop.id, e.iteration.workspaceId, running as Promise<IterationResult>, true).catch(() => undefined),
            note: (message, loopId) => this.note(loopId, message),
            mutant: this.options.mutant,
          },
          e.loop,
          e.phase,
          e.input,
          e.output,
          e.iteration,
        );
      },
      afterPhase: async (e: Parameters<NonNullable<import("../runtime/loop.js").LoopHooks["afterPhase"]>>[0]) => {
        const h = this.hosted.get(e.loop.id);
        if (!h || h.emitters.size === 0) return;
        await emitConnections(e.loop, e.phase.id, e.input, e.output, e.signature, e.iteration, e.audit, h.emitters, (emission, trail) => this.trails.set(emission, trail), this.clock.now());
      },
      escalate: async (e: Parameters<NonNullable<import("../runtime/loop.js").LoopHooks["escalate"]>>[0]) => {
        await this.escalate({ loopId: e.loop.id, phaseId: e.phase.id, traceId: e.iteration.traceId, signature: e.signature, reason: e.error.message, error: e.error });
      },
    };
  }
}

export async function createHost(options: HostOptions = {}): Promise<Host> {
  let host: Host | undefined;
  const runtime = await createRuntime({
    ...options,
    hooks: {
      duringPhase: (e) => (host as Host).hooks().duringPhase(e),
      afterPhase: (e) => (host as Host).hooks().afterPhase(e),
      escalate: (e) => (host as Host).hooks().escalate(e),
    },
  });
  host = new Host(runtime, options, new SignalPlumbing(options.transport, options.mutant));
  return host;
}
