/**
 * The host's side of signal delivery: one channel per connection (src/connections), a transport
 * that reaches this host's own loops in process and any other loop through the configured
 * transport, and per-loop deduplication of what arrives.
 */
import type { Connection } from "../manifest/types.js";
import type { Clock } from "../runtime/clock.js";
import type { MutantName } from "../runtime/mutants.js";
import type { PulseCloudEvent } from "../tokens/types.js";
import type { Ack, DeliveryEvent, SignalReceiver, Transport } from "../connections/contracts.js";
import { SignalChannel } from "../connections/channel.js";
import { DedupeWindow, type DedupeLimits } from "../connections/dedupe.js";
import { builtHere, EXTENSIONS, readEnvelope } from "../connections/envelope.js";
import { fingerprintOf } from "../connections/fingerprint.js";
import { InProcessTransport } from "../transports/in-process.js";
import type { ConnectionEmitter } from "./signals.js";

export interface Verdict {
  outcome: Ack["outcome"];
  id?: string;
  source?: string;
  reason?: string;
  envelope?: PulseCloudEvent;
  /** The id was seen before with other content. */
  conflict?: boolean;
  /** A duplicate whose first delivery's iteration has not committed yet: settles when it has. */
  committed?: Promise<void>;
}

/**
 * What an envelope says: what a redelivery of the same event repeats exactly. An envelope built in
 * this process is redelivered as the same frozen object, and its id already names its emission
 * (connection, signature, trace): it needs none, and the same id from elsewhere never matches it.
 */
function fingerprint(e: PulseCloudEvent): string {
  if (builtHere(e)) return "built here";
  const x = e as unknown as Record<string, unknown>;
  return fingerprintOf([e.type, e.source, e.subject, e.time, x.dataschema ?? null, x[EXTENSIONS.workspace] ?? null, e.data]);
}

/** Signals to this host's loops stay in process; others go through `external` (or are refused). */
class HostTransport implements Transport {
  constructor(
    readonly local: InProcessTransport,
    private readonly localLoops: Set<string>,
    private readonly external: Transport | undefined,
    private readonly dropAll: boolean,
    private readonly allThroughExternal: boolean,
  ) {}

  /** Not async: the chosen transport's promise is handed back as it is, not wrapped in another. */
  send(envelope: PulseCloudEvent, toLoop: string): Promise<Ack> {
    // The "drops-signal" mutant of the conformance self-test: acknowledged, never delivered.
    if (this.dropAll) return Promise.resolve({ outcome: "accepted" });
    if (this.localLoops.has(toLoop) && !this.allThroughExternal) return this.local.send(envelope, toLoop);
    if (!this.external) return Promise.resolve({ outcome: "rejected", reason: `loop ${toLoop} is not in this host and no transport route reaches it` });
    try {
      return this.external.send(envelope, toLoop);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Lets the external transport release what it holds (an HTTP transport's idle sockets). */
  async close(): Promise<void> {
    await this.external?.close?.();
  }
}

export class SignalPlumbing {
  readonly transport: Transport;
  private readonly local = new InProcessTransport();
  private readonly loops = new Set<string>();
  private readonly windows = new Map<string, DedupeWindow>();
  private readonly channels = new Map<ConnectionEmitter, SignalChannel>();
  /** Accepted signals whose iteration has not committed yet, by loop and id. */
  private readonly uncommitted = new Map<string, Promise<void>>();

  /** `allThroughExternal`: even signals to this host's own loops go through `external` (a fleet's). */
  constructor(
    external: Transport | undefined,
    mutant: MutantName | undefined,
    /** Bounds of each loop's window of received ids (HostOptions.dedupe). */
    private readonly dedupe: DedupeLimits = {},
    allThroughExternal = false,
  ) {
    this.transport = new HostTransport(this.local, this.loops, external, mutant === "drops-signal", allThroughExternal);
  }

  register(loopId: string, receiver: SignalReceiver): void {
    this.loops.add(loopId);
    this.local.register(loopId, receiver);
  }

  /**
   * Validates an arriving envelope and says whether the loop has seen its id before: with the same
   * content a duplicate, with other content a conflict, rejected with the reason (and not
   * remembered, so the first event keeps its id).
   */
  accept(loopId: string, raw: unknown): Verdict {
    let envelope: PulseCloudEvent;
    try {
      envelope = readEnvelope(raw);
    } catch (error) {
      return { outcome: "rejected", reason: (error as Error).message };
    }
    let window = this.windows.get(loopId);
    if (!window) {
      window = new DedupeWindow(this.dedupe);
      this.windows.set(loopId, window);
    }
    const seen = window.see(envelope.id, fingerprint(envelope));
    if (seen === "conflict") {
      const reason = `event id ${envelope.id} from ${envelope.source} was received before with other content; an id names one event (CloudEvents), so this one is refused, not taken as a duplicate`;
      return { outcome: "rejected", id: envelope.id, source: envelope.source, reason, conflict: true };
    }
    if (seen === "first") {
      // exactly_once: an emission of a signature this loop already ran is a duplicate too (§10.2).
      const signature = (envelope as unknown as Record<string, unknown>)[EXTENSIONS.signature];
      if (typeof signature === "string" && window.see(`signature ${envelope.source}\n${signature}`) !== "first") return { outcome: "duplicate", id: envelope.id, source: envelope.source, envelope };
    }
    if (seen === "duplicate") {
      const committed = this.uncommitted.get(`${loopId}\n${envelope.id}`);
      return { outcome: "duplicate", id: envelope.id, source: envelope.source, envelope, ...(committed ? { committed } : {}) };
    }
    return { outcome: "accepted", id: envelope.id, source: envelope.source, envelope };
  }

  /**
   * Follows an accepted signal's iteration until it commits: a redelivery meanwhile is a duplicate
   * that waits for the same commit (acknowledged only then). If it cannot commit, the loop forgets
   * the id, so the redelivery the sender makes is taken again rather than answered duplicate.
   */
  committing(loopId: string, envelope: PulseCloudEvent, committed: Promise<void>): void {
    const key = `${loopId}\n${envelope.id}`;
    this.uncommitted.set(key, committed);
    committed.then(
      () => this.uncommitted.delete(key),
      () => {
        this.uncommitted.delete(key);
        const window = this.windows.get(loopId);
        window?.forget(envelope.id);
        const signature = (envelope as unknown as Record<string, unknown>)[EXTENSIONS.signature];
        if (typeof signature === "string") window?.forget(`signature ${envelope.source}\n${signature}`);
      },
    );
  }

  channel(connection: Connection, clock: Clock, onEvent: (e: DeliveryEvent) => void | Promise<void>, retry?: { baseMs: number; maxMs: number }): ConnectionEmitter {
    const channel = new SignalChannel({ connection, transport: this.transport, clock, onEvent, ...(retry ? { retry } : {}) });
    const emitter: ConnectionEmitter = { connection, emit: (emission, envelope) => channel.emit(emission, envelope) };
    this.channels.set(emitter, channel);
    return emitter;
  }

  /** Signals sent and not yet acknowledged or dropped, over every channel. */
  get pending(): number {
    let n = 0;
    for (const c of this.channels.values()) n += c.inflight;
    return n;
  }

  async flush(): Promise<void> {
    for (const c of this.channels.values()) await c.flush();
  }

  /** Closes every channel (undelivered signals dropped) and the transport; resolves with how many signals were dropped. */
  async close(): Promise<number> {
    let dropped = 0;
    for (const c of this.channels.values()) dropped += await c.close();
    await this.transport.close?.();
    return dropped;
  }

  /** Opens the channels again after close(). */
  reopen(): void {
    for (const c of this.channels.values()) c.reopen();
  }
}
