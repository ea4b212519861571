/**
 * A host runs many loops (many manifests, many workspaces) in one process: it arms each loop's
 * cadences, carries signals between loops (and to other hosts through a transport), runs nested
 * loops, routes escalations, and stops gracefully (in-flight iterations finish, nothing new
 * starts). All timing goes through the runtime's clock, so tests run on virtual time.
 */
import type { Manifest } from "../manifest/types.js";
import type { Clock } from "../runtime/clock.js";
import { PulseError, type PulseError as PulseErrorType } from "../runtime/errors.js";
import type { IterationRequest, IterationResult } from "../runtime/iteration-result.js";
import type { Loop } from "../runtime/loop.js";
import { mutantOf } from "../runtime/mutants.js";
import { Runtime, type LoadOptions } from "../runtime/runtime.js";
import { initSignatures } from "../runtime/signature.js";
import type { AuditTrail } from "../runtime/audit-trail.js";
import { ReceiverUnavailableError, type Ack, type Emission, type SignalReceiver } from "../connections/contracts.js";
import type { PulseCloudEvent } from "../tokens/types.js";
import { sendUnsent } from "./outbox.js";
import { SettleRetry } from "./settle-retry.js";
import { holds, type Expr } from "../grammar/expression/index.js";
import type { CadenceContext, CadenceDriver } from "./cadence/driver.js";
import type { RateLimiter } from "./cadence/rate-limit.js";
import { armCadences } from "./arm.js";
import { reportDelivery, type DeliveryDeps } from "./delivery.js";
import { escalationEnvelope } from "./escalation.js";
import { HostEvents, type HostEvent } from "./host-events.js";
import { hostHooks } from "./hooks.js";
import { SignalPlumbing } from "./plumbing.js";
import { signalRequest, type ConnectionEmitter } from "./signals.js";
import { IterationTracker } from "./tracker.js";
import { waitsOf, type HostWait } from "./waiting.js";
import { resumeInterrupted, resumeNotCommitted, takeOver, type TakenOver } from "./recovery.js";

export type { HostEvent } from "./host-events.js";
export type { HostWait } from "./waiting.js";

export { DEFAULT_STOP_TIMEOUT_MS, type HostOptions, type StopOptions, type StopResult } from "./host-options.js";
import { DEFAULT_STOP_TIMEOUT_MS, type HostOptions, type StopOptions, type StopResult } from "./host-options.js";
import { watchStore, type StoreFailure, type StoreWatch } from "./store-failure.js";

interface Hosted {
  loop: Loop;
  drivers: CadenceDriver[];
  outside: string[];
  emitters: Map<string, ConnectionEmitter>;
  limiter: RateLimiter | undefined;
  events: { trigger: string; filter: Expr | undefined }[];
  receiver: SignalReceiver;
  /** Signals that arrived while the loop was paused, run on resume (then `done` settles with the commit). */
  held: { request: IterationRequest; done: (run: Promise<unknown>) => void }[];
}

export class Host {
  readonly runtime: Runtime;
  readonly clock: Clock;
  private readonly hosted = new Map<string, Hosted>();
  private readonly events = new HostEvents();
  private readonly tracker: IterationTracker;
  private readonly trails = new WeakMap<Emission, AuditTrail>();
  private readonly plumbing: SignalPlumbing;
  private readonly hooks: ReturnType<typeof hostHooks>;
  private readonly deliveryDeps: DeliveryDeps;
  /** Outbox settles, kept and tried again while the store is unreachable. */
  private readonly settles: SettleRetry | undefined;
  private readonly storeWatch: StoreWatch;
  /** Iterations started that count against maxIterations. */
  private admitted = 0;
  private started = false;
  private stopping = false;
  /** Set once stop() has finished, until start(): arriving signals are refused, to be retried. */
  private stopped = false;

  /**
   * A host on a runtime bound to exactly `options.registry`; `createHost` (the package's entry,
   * src/embedded.ts) adds the embedded default adapters first.
   */
  static async assemble(options: HostOptions = {}): Promise<Host> {
    await initSignatures();
    let host: Host | undefined;
    const hooks = () => (host as Host).hooks;
    const runtime = new Runtime({
      ...options,
      hooks: {
        duringPhase: (e) => hooks().duringPhase(e),
        afterPhase: (e) => hooks().afterPhase(e),
        escalate: (e) => hooks().escalate(e),
      },
    });
    host = new Host(runtime, options, new SignalPlumbing(options.transport, mutantOf(options), options.dedupe, options.fleet !== undefined && options.transport !== undefined));
    return host;
  }

  constructor(
    runtime: Runtime,
    private readonly options: HostOptions,
    plumbing: SignalPlumbing,
  ) {
    this.runtime = runtime;
    this.clock = runtime.clock;
    this.tracker = new IterationTracker(this.clock);
    this.plumbing = plumbing;
    this.hooks = hostHooks({
      clock: this.clock,
      maxInnerIterations: options.maxInnerIterations ?? 32,
      loopById: (id) => this.loop(id),
      emittersOf: (id) => this.hosted.get(id)?.emitters,
      background: (loopId, workspace, running) => void this.tracker.track(loopId, workspace, running, true).catch(() => undefined),
      remember: (emission, trail) => this.trails.set(emission, trail),
      note: (message, loopId) => this.note(loopId, message),
      escalate: (e) => this.escalate(e),
      mutant: mutantOf(options),
    });
    const store = runtime.store;
    this.settles = store ? new SettleRetry(store, this.clock, (m) => this.note("*", m)) : undefined;
    this.deliveryDeps = { trails: this.trails, emit: (e) => this.emit(e), now: () => this.clock.now(), escalate: (e) => this.escalate(e), ...(this.settles ? { settle: this.settles.settle } : {}) };
    this.storeWatch = watchStore(this.hosted, { clock: this.clock, retryMs: options.storeRetryMs, emit: (e) => this.emit(e), pause: (id) => this.pause(id), resume: (id) => this.resume(id) });
    runtime.subscribe((e) => {
      this.emit(e);
      // An iteration whose end turned out not committed once the store answered: it continues here.
      if (e.type === "iteration.resolved" && e.outcome === "resumed" && !this.stopping) resumeNotCommitted(this.hosted.get(e.loop_id)?.loop, e.workspace_id, (m) => this.note(e.loop_id, m), (running) => this.tracker.track(e.loop_id, e.workspace_id, running, true));
    });
  }

  /** The store failure that stopped or paused the loops, while it stands (store-failure.ts). */
  get storeFailure(): StoreFailure | undefined {
    return this.storeWatch.failure;
  }

  get workspace(): string {
    return this.options.workspace ?? "default";
  }

  subscribe(listener: (event: HostEvent) => void): () => void {
    return this.events.subscribe(listener);
  }

  private emit(event: HostEvent): void {
    this.events.emit(event);
    this.storeWatch.observe(event);
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
    const ctx = (type: string): CadenceContext => ({
      loop,
      clock: this.clock,
      workspace: this.workspace,
      run: (request, reason) => this.cadenceRun(loop, request, reason || type),
      busy: () => this.tracker.busy(loop.id, this.workspace),
      note: (message) => this.note(loop.id, message),
      ...(this.options.fleet ? { origin: this.options.fleet.cadenceOrigin } : {}),
    });
    const armed = armCadences(loop, ctx, this.tracker.activity, this.options.streams);
    const hosted: Hosted = { loop, ...armed, emitters: new Map(), held: [], receiver: { receive: (e) => this.receive(loop.id, e) } };
    for (const { connection } of loop.compiled.connections) {
      hosted.emitters.set(connection.id, this.plumbing.channel(connection, this.clock, (e) => reportDelivery(e, this.deliveryDeps), this.options.signalRetry));
    }
    this.plumbing.register(loop.id, hosted.receiver);
    this.hosted.set(loop.id, hosted);
    if (this.started) for (const d of hosted.drivers) d.start();
    return loop;
  }

  /** Starts every loaded loop's cadences (again after a stop: signals flow again too). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    this.stopped = false;
    this.plumbing.reopen();
    for (const h of this.hosted.values()) for (const d of h.drivers) d.start();
    // In a fleet the store is shared: takeOver() resends and resumes what each lease gained here covers.
    if (!this.options.fleet) this.sendUnsent();
    if (!this.options.fleet) resumeInterrupted(this.loops, (loopId, message) => this.note(loopId, message), (loopId, workspace, running) => void this.tracker.track(loopId, workspace, running, true).catch(() => undefined));
  }

  /** This host gained the fleet lease of a loop in `workspace`: see recovery.ts takeOver. */
  async takeOver(loopId: string, workspace = this.workspace): Promise<TakenOver> {
    const taken = await takeOver(this.required(loopId).loop, workspace, (m) => this.note(loopId, m), (running) => this.tracker.track(loopId, workspace, running, true));
    // What the previous holder wrote to the outbox and never saw acknowledged: sent from here now.
    this.sendUnsent({ loopId, workspace });
    return taken;
  }

  /** Sends again what the store's outbox holds (of one loop and workspace, in a fleet). */
  private sendUnsent(only?: { loopId: string; workspace: string }): void {
    sendUnsent(this.runtime.store, (loopId, connectionId) => this.hosted.get(loopId)?.emitters.get(connectionId), this.clock, (m) => this.note("*", m), only);
  }

  /**
   * This host lost the fleet lease of a loop in `workspace`: its iterations there start no
   * further phase and commit nothing more (Loop.fence); the lease's new holder resumes them.
   */
  release(loopId: string, why: string, workspace = this.workspace): void {
    this.hosted.get(loopId)?.loop.fence(workspace, why);
  }

  /**
   * Graceful stop: cadences disarm, nothing new starts, in-flight iterations and signals finish,
   * within `timeoutMs` (a receiver that never acknowledges cannot hold the host forever).
   */
  async stop(options: StopOptions = {}): Promise<StopResult> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
    this.stopping = true;
    this.storeWatch.close();
    for (const h of this.hosted.values()) for (const d of h.drivers) d.stop();
    const deadline = new AbortController();
    let timedOut = false;
    const expired = this.clock.sleep(timeoutMs, deadline.signal).then(
      () => void (timedOut = true),
      () => undefined,
    );
    await Promise.race([this.drain(), expired]);
    deadline.abort();
    for (const h of this.hosted.values()) h.loop.forgetDoubts();
    // Signals held for a loop still paused were never run: not acknowledged, their senders keep them.
    for (const h of this.hosted.values()) for (const { done } of h.held.splice(0)) done(Promise.reject(new ReceiverUnavailableError(`the host stopped before ${h.loop.id}, paused, took the signal`)));
    const signalsDropped = await this.plumbing.close();
    this.settles?.close();
    this.started = false;
    this.stopped = true;
    const iterationsRunning = this.tracker.running;
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
      if (this.tracker.running === 0) break;
      await this.settled();
    }
  }

  /** Resolves when no iteration the host started is in flight. */
  async settled(): Promise<void> {
    await this.tracker.settled();
  }

  pause(loopId: string): void {
    this.required(loopId).loop.pause();
  }

  resume(loopId: string): void {
    const h = this.required(loopId);
    h.loop.resume();
    for (const { request, done } of h.held.splice(0)) done(this.runSignalled(h, request));
  }

  /** A signal's iteration, settled once it committed; stopped by a lost lease it did not, and the broker gives the signal to the next holder. */
  private runSignalled(h: Hosted, request: IterationRequest): Promise<void> {
    const run = this.tracker.track(h.loop.id, request.workspace ?? this.workspace, h.loop.runIteration(request), true);
    return run.then((r) => (r.error?.code === "LEASE_LOST" ? Promise.reject(new Error(r.error.message)) : undefined));
  }

  private required(loopId: string): Hosted {
    const h = this.hosted.get(loopId);
    if (!h) throw new PulseError("NOT_FOUND", `no loop ${loopId} in this host (loaded: ${[...this.hosted.keys()].join(", ") || "none"})`);
    return h;
  }

  private async cadenceRun(loop: Loop, request: IterationRequest, reason: string): Promise<IterationResult | undefined> {
    const decline = (why: string) => {
      this.emit({ type: "cadence.declined", loop_id: loop.id, cadence: reason, reason: why, at: this.clock.now() });
      return undefined;
    };
    if (this.stopping) return decline("the host is stopping");
    const failed = this.storeWatch.refusal;
    if (failed) return decline(failed);
    const status = loop.status();
    if (status === "stopped" || status === "paused") return decline(`the loop is ${status}`);
    // A degraded loop is not retried before its open circuits allow a probe: no spinning.
    if (status === "degraded" && !loop.skipsUnavailable && this.clock.now() < loop.retryAt()) return decline(`degraded until ${new Date(loop.retryAt()).toISOString()}`);
    const spent = this.spent();
    if (spent) return decline(spent);
    const fleet = this.options.fleet;
    if (fleet && !(await fleet.admit(loop.id, request, reason))) {
      // Routine (a live host runs the loop) is not said at every tick of every standby host.
      const why = fleet.declined ? fleet.declined(loop.id) : "another host of the fleet runs it";
      return why === undefined ? undefined : decline(why);
    }
    this.admitted++;
    this.emit({ type: "cadence.fired", loop_id: loop.id, cadence: reason, at: this.clock.now() });
    try {
      const result = await this.tracker.track(loop.id, request.workspace ?? this.workspace, loop.runIteration(request), reason !== "idle");
      // One stopped by a lost lease is left unfinished: the lease's next holder resumes or runs it.
      await this.options.fleet?.finished(loop.id, request, reason, result.error?.code === "LEASE_LOST").catch(() => undefined);
      return result;
    } catch (error) {
      return decline((error as Error).message);
    }
  }

  /**
   * A manual trigger (§8.6): runs one iteration now, within the loop's rate_limit, in the
   * request's workspace or else the host's, its cause `{trigger: "manual"}` unless the request
   * names one.
   */
  async trigger(loopId: string, request: IterationRequest = {}): Promise<IterationResult> {
    const h = this.required(loopId);
    h.limiter?.admit(this.clock.now());
    if (this.stopping) throw new PulseError("HOST_STOPPING", "the host is stopping: no new iteration starts");
    const failed = this.storeWatch.refusal;
    if (failed) throw new PulseError("STORE_FAILED", failed);
    const spent = this.spent();
    if (spent) throw new PulseError("ITERATIONS_SPENT", spent);
    this.admitted++;
    const workspace = request.workspace ?? this.workspace;
    return this.tracker.track(loopId, workspace, h.loop.runIteration({ ...request, workspace, cause: request.cause ?? { trigger: "manual" } }), true);
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
    // A store that failed cannot record the signal's iteration: the sender keeps it and retries.
    const failed = this.stopped ? `the host running ${loopId} is stopped` : this.storeWatch.refusal;
    if (failed) throw new ReceiverUnavailableError(failed);
    const h = this.hosted.get(loopId);
    if (!h) return { outcome: "rejected", reason: `no loop ${loopId} in this host` };
    if (h.loop.status() === "stopped") return { outcome: "rejected", reason: `loop ${loopId} is stopped` };
    const spent = this.spent();
    if (spent) return { outcome: "rejected", reason: spent };
    const verdict = this.plumbing.accept(loopId, envelope);
    if (verdict.outcome !== "accepted") {
      this.emit({ type: "signal.received", loop_id: loopId, event_id: verdict.id ?? "?", from: verdict.source ?? "?", outcome: verdict.outcome, ...(verdict.reason ? { reason: verdict.reason } : {}), at: this.clock.now() });
      if (verdict.conflict) this.note(loopId, `signal refused: ${verdict.reason}`);
      return verdict.outcome === "rejected" ? { outcome: "rejected", reason: verdict.reason ?? "invalid envelope" } : { outcome: "duplicate", ...(verdict.committed ? { committed: verdict.committed } : {}) };
    }
    const env = verdict.envelope as PulseCloudEvent;
    const request = signalRequest(h.loop, env, this.workspace);
    // A signal whose iteration committed before a restart is in the store's inbox: a redelivery.
    if (this.runtime.store && (await this.runtime.store.received(loopId, request.workspace as string, env.id))) {
      this.emit({ type: "signal.received", loop_id: loopId, event_id: env.id, from: env.source, outcome: "duplicate", at: this.clock.now() });
      return { outcome: "duplicate" };
    }
    // Checked again: another iteration may have taken the last of maxIterations during the store's answer.
    const spentSince = this.spent();
    if (spentSince) return { outcome: "rejected", reason: spentSince };
    this.admitted++;
    this.emit({ type: "signal.received", loop_id: loopId, event_id: env.id, from: env.source, outcome: "accepted", at: this.clock.now() });
    // While the host stops, a signal still runs (stop() waits for it): at-least-once holds.
    // Acknowledged (over HTTP answered, over NATS acked) once the iteration committed, never before.
    const committed: Promise<void> =
      h.loop.status() === "paused" ? new Promise<unknown>((done) => h.held.push({ request, done })).then(() => undefined) : this.runSignalled(h, request);
    this.plumbing.committing(loopId, env, committed); // which also catches its rejection
    return { outcome: "accepted", committed };
  }

  /** Why no further iteration may start (maxIterations reached), if so. */
  private spent(): string | undefined {
    const max = this.options.maxIterations;
    return max !== undefined && this.admitted >= max ? `the host's ${max} iteration${max === 1 ? "" : "s"} (maxIterations) have all started` : undefined;
  }

  /** Whether nothing is in flight: no iteration running, no signal waiting for its acknowledgement. */
  get quiet(): boolean {
    return this.tracker.running === 0 && this.plumbing.pending === 0;
  }

  /** What each loop waits for (waiting.ts). */
  waiting(): HostWait[] {
    return waitsOf(this.hosted.values());
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
}

