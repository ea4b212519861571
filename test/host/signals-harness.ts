/**
 * Signal tests share one shape: loop t.a emits an OutcomeSignal per iteration along a connection
 * to loop t.b, either inside one host (in-process) or across two hosts joined by a transport the
 * test controls. Iteration n of t.a emits action_id `act_<n>`, so distinct inputs give distinct
 * phase signatures and therefore distinct envelope ids (a repeated input is a redelivery).
 */
import { inMemorySubstrates, type InMemorySubstrateSet } from "../../adapters/memory/index.js";
import { TransportError, type Ack, type Transport } from "../../src/connections/contracts.js";
import { createHost, type Host, type HostEvent, type HostOptions } from "../../src/host/index.js";
import type { Connection } from "../../src/manifest/types.js";
import { VirtualClock, type Clock, type PhaseHandler } from "../../src/runtime/index.js";
import type { AuditEvent } from "../../src/substrates/contracts.js";
import type { PulseCloudEvent } from "../../src/tokens/types.js";
import { validHandlers } from "../runtime/harness.js";
import { loopManifest } from "./harness.js";

export const START = Date.UTC(2026, 3, 10);

export function connectionTo(overrides: Partial<Connection> = {}): Connection {
  return { id: "a_to_b", emit_phase: "learn", envelope: "cloudevents.v1", token: "OutcomeSignal", to_loop: "t.b", cadence: "async", ...overrides };
}

export function senderManifest(connection: Connection = connectionTo()): Record<string, any> {
  return loopManifest("t.a", (m) => (m.connections = [connection]));
}

export function receiverManifest(mutate: (m: Record<string, any>) => void = () => {}): Record<string, any> {
  return loopManifest("t.b", mutate);
}

const n = (input: unknown): number => (input as { n: number }).n;

/** t.a's handlers: carry n from the trigger's input to the OutcomeSignal fields of apply and learn. */
export const senderHandlers: Record<string, PhaseHandler> = {
  fetch: ({ input }) => ({ n: n(input) }),
  decide: ({ input }) => ({ decision: "fast", n: n(input) }),
  apply: ({ input }) => ({ action_id: `act_${n(input)}`, status: "success", causal_parent_ids: [] }),
  learn: ({ input }) => ({ action_id: (input as { action_id: string }).action_id, status: "success" }),
};

/** What t.b's entry phase was given, in order: the action_ids of the tokens that reached it. */
export interface Received {
  actions: string[];
  inputs: unknown[];
}

export interface Side {
  host: Host;
  events: HostEvent[];
  audit: InMemorySubstrateSet["audit"];
}

export function observed(host: Host): HostEvent[] {
  const events: HostEvent[] = [];
  host.subscribe((e) => events.push(e));
  return events;
}

/** A host whose loops get the runtime harness's valid handlers for every phase kind. */
export async function hostWith(options: HostOptions): Promise<Host> {
  const host = await createHost(options);
  for (const [kind, h] of Object.entries(validHandlers())) host.runtime.handleKind(kind, h);
  return host;
}

/** Loads t.b into `host`; what reaches its entry phase is recorded in `received`. */
export async function loadReceiver(host: Host, manifest: Record<string, any>, received: Received): Promise<InMemorySubstrateSet> {
  const substrates = inMemorySubstrates();
  const b = await host.load(manifest, { substrates });
  const record: PhaseHandler = ({ input }) => {
    received.inputs.push(input);
    received.actions.push((input as { action_id?: string }).action_id ?? "?");
    return { decision: "fast" };
  };
  // Whichever phase the signal enters at records it; later phases of the iteration see other inputs.
  b.handle("fetch", (ctx) => (ctx.input && (ctx.input as { token?: string }).token ? record(ctx) : {}));
  b.handle("decide", (ctx) => (ctx.input && (ctx.input as { token?: string }).token ? record(ctx) : { decision: "fast" }));
  return substrates;
}

/** Loads t.a into `host` with senderHandlers. */
export async function loadSender(host: Host, connection: Connection): Promise<InMemorySubstrateSet> {
  const substrates = inMemorySubstrates();
  const a = await host.load(senderManifest(connection), { substrates });
  for (const [phase, h] of Object.entries(senderHandlers)) a.handle(phase, h);
  return substrates;
}

/** Both loops in one host: signals go in process. */
export async function oneHost(connection: Connection, options: { receiver?: Record<string, any>; host?: Omit<HostOptions, "clock"> } = {}) {
  const clock = new VirtualClock(START);
  const host = await hostWith({ clock, ...options.host });
  const events = observed(host);
  const received: Received = { actions: [], inputs: [] };
  const a = await loadSender(host, connection);
  const b = await loadReceiver(host, options.receiver ?? receiverManifest(), received);
  return { clock, host, events, received, auditA: a.audit, auditB: b.audit };
}

/**
 * t.a in one host, t.b in another; `link` builds the transport host A sends through, given host
 * B's receive function (what a signal server would call).
 */
export async function twoHosts(
  connection: Connection,
  link: (receive: (loopId: string, envelope: unknown) => Promise<Ack>, clock: VirtualClock) => Transport,
  options: { sender?: Omit<HostOptions, "clock" | "transport">; receiver?: Record<string, any> } = {},
) {
  const clock = new VirtualClock(START);
  const b = await hostWith({ clock });
  const received: Received = { actions: [], inputs: [] };
  const bSubstrates = await loadReceiver(b, options.receiver ?? receiverManifest(), received);
  const transport = link((loopId, envelope) => b.receive(loopId, envelope), clock);
  const a = await hostWith({ clock, transport, signalRetry: { baseMs: 100, maxMs: 1_000 }, ...options.sender });
  const aSubstrates = await loadSender(a, connection);
  const sideA: Side = { host: a, events: observed(a), audit: aSubstrates.audit };
  const sideB: Side = { host: b, events: observed(b), audit: bSubstrates.audit };
  /** Stops host A (its outbox drains on virtual time), then lets host B finish what arrived. */
  const drain = async () => {
    const stopping = a.stop();
    await clock.runAll();
    await stopping;
    await b.settled();
  };
  return { clock, a: sideA, b: sideB, received, transport, drain };
}

export async function trailOf(audit: InMemorySubstrateSet["audit"], traceId: string, workspace = "default"): Promise<AuditEvent[]> {
  return audit.query_by_trace({ trace_id: traceId }, { trace_id: traceId, workspace_id: workspace });
}

/** Host events of one type (an intersection: the signal.* events share one member of HostEvent). */
export function ofType<T extends HostEvent["type"]>(events: HostEvent[], type: T): (HostEvent & { type: T })[] {
  return events.filter((e): e is HostEvent & { type: T } => e.type === type);
}

/** The n of an envelope's OutcomeSignal (`act_<n>`). */
export function signalNumber(envelope: unknown): number {
  return Number(String((envelope as PulseCloudEvent).data && ((envelope as PulseCloudEvent).data as { action_id?: string }).action_id).replace(/^act_/, ""));
}

/** What the network does to one send attempt. */
export type Fate = "ok" | "lost" | "ack_lost" | "duplicated";
export interface Step {
  delayMs: number;
  fate: Fate;
}

/**
 * A network on virtual time: attempt k of signal n waits plan(n, k).delayMs (so concurrent
 * sends overtake each other) and then is delivered (ok), lost before the receiver saw it (lost),
 * delivered with the acknowledgement lost (ack_lost: the sender sees a failure), or delivered
 * twice (duplicated). It records every send and every delivery to the receiver.
 */
export class ScheduledTransport implements Transport {
  readonly sends: number[] = [];
  readonly deliveries: { n: number; outcome: Ack["outcome"] }[] = [];
  private readonly attempts = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly receive: (loopId: string, envelope: unknown) => Promise<Ack>,
    private readonly plan: (n: number, attempt: number) => Step,
  ) {}

  async send(envelope: PulseCloudEvent, toLoop: string): Promise<Ack> {
    const n = signalNumber(envelope);
    const attempt = this.attempts.get(envelope.id) ?? 0;
    this.attempts.set(envelope.id, attempt + 1);
    this.sends.push(n);
    const { delayMs, fate } = this.plan(n, attempt);
    await this.clock.sleep(delayMs);
    if (fate === "lost") throw new TransportError(`signal ${envelope.id} lost`);
    const ack = await this.deliver(n, toLoop, envelope);
    if (fate === "duplicated") await this.deliver(n, toLoop, envelope);
    if (fate === "ack_lost") throw new TransportError(`acknowledgement of ${envelope.id} lost`);
    return ack;
  }

  private async deliver(n: number, toLoop: string, envelope: PulseCloudEvent): Promise<Ack> {
    const ack = await this.receive(toLoop, envelope);
    this.deliveries.push({ n, outcome: ack.outcome });
    return ack;
  }
}

/** A receiver that is down (every send fails like a refused connection) until `up` is set. */
export class SwitchedTransport implements Transport {
  up = false;
  sends = 0;

  constructor(private readonly receive: (loopId: string, envelope: unknown) => Promise<Ack>) {}

  async send(envelope: PulseCloudEvent, toLoop: string): Promise<Ack> {
    this.sends++;
    if (!this.up) throw new TransportError(`signal ${envelope.id}: connect ECONNREFUSED`);
    return this.receive(toLoop, envelope);
  }
}

/** Holds every send for `delayMs` of virtual time, recording when the receiver got it. */
export class SlowTransport implements Transport {
  constructor(
    private readonly clock: Clock,
    private readonly delayMs: number,
    private readonly receive: (loopId: string, envelope: unknown) => Promise<Ack>,
    private readonly log: string[],
  ) {}

  async send(envelope: PulseCloudEvent, toLoop: string): Promise<Ack> {
    await this.clock.sleep(this.delayMs);
    this.log.push(`${toLoop} received ${(envelope.data as { action_id: string }).action_id}`);
    return this.receive(toLoop, envelope);
  }
}
