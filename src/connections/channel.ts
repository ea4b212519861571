/**
 * One connection's outgoing signals (§10.2, §10.3). Each emission is built into its envelope and
 * sent through the transport; what happens next depends on the connection:
 *
 *   at_least_once (default)  retried with exponential backoff on the clock until the receiver
 *                            acknowledges it; never lost while the process runs
 *   at_most_once             sent once; a transport failure drops it
 *   exactly_once             as at_least_once, and a phase signature already emitted is never
 *                            sent again (the receiver also deduplicates by signature and by id)
 *
 * An acknowledgement "rejected" is final (no such loop, invalid token): the signal is dropped and
 * said so. `max_inflight` (default 1024) bounds the signals not yet acknowledged; when it is
 * reached, `overflow_policy` decides: block (the emitter waits for room), drop_oldest (the
 * oldest unacknowledged signal is abandoned), drop_newest (the new one is), escalate (the new one
 * is dropped and an overflow event asks the host to escalate). Signals are sent in emission
 * order; a retried one may arrive after later ones.
 */
import type { Connection } from "../manifest/types.js";
import type { Clock } from "../runtime/clock.js";
import type { PulseCloudEvent } from "../tokens/types.js";
import type { Ack, DeliveryEvent, Emission, Transport } from "./contracts.js";
import { DedupeWindow } from "./dedupe.js";
import { buildEnvelope } from "./envelope.js";

export interface ChannelOptions {
  connection: Connection;
  transport: Transport;
  clock: Clock;
  onEvent: (e: DeliveryEvent) => void | Promise<void>;
  retry?: { baseMs: number; maxMs: number };
  defaultMaxInflight?: number;
}

interface Pending {
  emission: Emission;
  envelope: PulseCloudEvent;
  attempts: number;
  abandoned: boolean;
}

const DEFAULT_RETRY = { baseMs: 100, maxMs: 30_000 };

export class SignalChannel {
  /** Unacknowledged signals in emission order (a Set: finishing one of 1024 is O(1), not a search). */
  private readonly pending = new Set<Pending>();
  /** flush() callers, woken when nothing is pending. */
  private idle: (() => void)[] = [];
  private readonly sent = new DedupeWindow();
  private readonly waitingForRoom: (() => void)[] = [];
  private stopping = new AbortController();
  private closed = false;
  private readonly maxInflight: number;
  private readonly mode: NonNullable<Connection["delivery"]>;
  private readonly retry: { baseMs: number; maxMs: number };

  constructor(private readonly o: ChannelOptions) {
    this.maxInflight = o.connection.max_inflight ?? o.defaultMaxInflight ?? 1024;
    this.mode = o.connection.delivery ?? "at_least_once";
    this.retry = o.retry ?? DEFAULT_RETRY;
  }

  get inflight(): number {
    return this.pending.size;
  }

  /** `built`: the emission's envelope when it exists already (a signal kept in a store's outbox). */
  async emit(emission: Emission, built?: PulseCloudEvent): Promise<void> {
    // exactly_once: a signature already emitted on this connection is not emitted again (§10.2).
    if (this.mode === "exactly_once" && this.sent.has(emission.signature)) return;
    const envelope = built ?? buildEnvelope(emission);
    if (this.mode === "exactly_once") this.sent.firstTime(emission.signature);
    if (this.closed) {
      await this.o.onEvent({ type: "signal.dropped", emission, envelope, reason: "stopped" });
      return;
    }
    // Waited for only when the handler returns a promise: a synchronous one costs no microtask turn.
    const emitted = this.o.onEvent({ type: "signal.emitted", emission, envelope });
    if (emitted) await emitted;
    while (this.pending.size >= this.maxInflight && !this.closed) {
      const policy = this.o.connection.overflow_policy ?? "block";
      await this.o.onEvent({ type: "signal.overflow", emission, envelope, policy, inflight: this.pending.size });
      if (policy === "block") {
        await new Promise<void>((resolve) => this.waitingForRoom.push(resolve));
        continue;
      }
      if (policy === "drop_oldest") {
        const oldest = this.pending.values().next().value as Pending;
        this.finish(oldest);
        oldest.abandoned = true;
        await this.o.onEvent({ type: "signal.dropped", emission: oldest.emission, envelope: oldest.envelope, reason: "overflow", detail: "drop_oldest" });
        continue;
      }
      await this.o.onEvent({ type: "signal.dropped", emission, envelope, reason: "overflow", detail: policy });
      return;
    }
    // close() released an emitter blocked for room: its signal is not sent after the channel closed.
    if (this.closed) {
      await this.o.onEvent({ type: "signal.dropped", emission, envelope, reason: "stopped" });
      return;
    }
    const p: Pending = { emission, envelope, attempts: 0, abandoned: false };
    this.pending.add(p);
    const delivering = this.deliver(p);
    if (this.o.connection.cadence === "sync") await delivering;
  }

  private backoff(attempt: number): number {
    return Math.min(this.retry.maxMs, this.retry.baseMs * 2 ** (attempt - 1));
  }

  private async deliver(p: Pending): Promise<void> {
    for (;;) {
      if (p.abandoned) return;
      p.attempts++;
      let ack: Ack | undefined;
      let failure: unknown;
      try {
        ack = await this.o.transport.send(p.envelope, p.emission.connection.to_loop);
      } catch (error) {
        failure = error;
      }
      if (p.abandoned) return;
      if (ack) {
        this.finish(p);
        if (ack.outcome === "rejected") await this.o.onEvent({ type: "signal.dropped", emission: p.emission, envelope: p.envelope, reason: "rejected", ...(ack.reason ? { detail: ack.reason } : {}) });
        else {
          const delivered = this.o.onEvent({ type: "signal.delivered", emission: p.emission, envelope: p.envelope, outcome: ack.outcome, attempts: p.attempts, ...(ack.committed ? { committed: ack.committed } : {}) });
          if (delivered) await delivered;
        }
        return;
      }
      const message = (failure as Error)?.message ?? String(failure);
      if (this.mode === "at_most_once" || this.closed) {
        this.finish(p);
        await this.o.onEvent({ type: "signal.dropped", emission: p.emission, envelope: p.envelope, reason: this.closed ? "stopped" : "at_most_once_failed", detail: message });
        return;
      }
      const delayMs = this.backoff(p.attempts);
      await this.o.onEvent({ type: "signal.retrying", emission: p.emission, envelope: p.envelope, attempt: p.attempts, delayMs, error: message });
      try {
        await this.o.clock.sleep(delayMs, this.stopping.signal);
      } catch {
        // close() interrupted the wait: the loop ends on the closed check above.
      }
    }
  }

  private finish(p: Pending): void {
    if (!this.pending.delete(p)) return;
    this.waitingForRoom.shift()?.();
    if (this.pending.size === 0 && this.idle.length > 0) {
      const idle = this.idle;
      this.idle = [];
      for (const wake of idle) wake();
    }
  }

  /** Resolves when every signal has been acknowledged or dropped. */
  async flush(): Promise<void> {
    while (this.pending.size > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  /**
   * Stops retrying: signals still unacknowledged are dropped (reason "stopped"), blocked emitters
   * released. Resolves with how many were dropped.
   */
  async close(): Promise<number> {
    this.closed = true;
    this.stopping.abort(new Error("channel closed"));
    for (const wake of this.waitingForRoom.splice(0)) wake();
    const left = [...this.pending];
    for (const p of left) {
      this.finish(p);
      p.abandoned = true;
      await this.o.onEvent({ type: "signal.dropped", emission: p.emission, envelope: p.envelope, reason: "stopped" });
    }
    return left.length;
  }

  /** Takes signals again after close() (a host started again after a stop). */
  reopen(): void {
    if (!this.closed) return;
    this.closed = false;
    this.stopping = new AbortController();
  }
}
