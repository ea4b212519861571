/**
 * The receiving half: a durable pull consumer per receiving loop hands each signal to the host
 * and acknowledges it to JetStream only once the host is done with it.
 *
 *   receiver's answer                   the message
 *   accepted or duplicate, with         ack once the triggered iteration has committed (while it
 *   `committed`                         runs, working() keeps ack_wait from expiring); nak if it
 *                                       could not commit
 *   accepted (no `committed`), duplicate  ack
 *   rejected (invalid, no such loop)    term: final, never redelivered
 *   thrown (a stopped host, …)          nak with a delay: redelivered
 *   not a signal at all                 term, with the reason
 *
 * A host that dies before acknowledging never acks: JetStream redelivers the signal after
 * ack_wait to whichever host of the system consumes the loop next. `max_ack_pending` (the
 * connection's `max_inflight`) bounds the signals handed out and not yet acknowledged; the rest
 * wait in the stream.
 */
import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JetStreamClient, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
import type { SignalReceiver } from "../../src/connections/contracts.js";
import { decodeSignal } from "./codec.js";
import { consumerName, loopSubject } from "./names.js";
import { TickBatch } from "./tick-batch.js";

export interface ConsumerOptions {
  /** Signals handed to this host and not yet acknowledged (default 1024). */
  maxAckPending?: number;
  /** How long JetStream waits for an ack before redelivering (default 30 s). */
  ackWaitMs?: number;
  /** Redelivery delay after the receiver could not take a signal (default 1 s). */
  nakDelayMs?: number;
}

/** What happened to a delivered message that a person may want to know. */
export interface NatsReceiveNote {
  loop_id: string;
  event_id?: string;
  /** redelivered: a delivery after the first; terminated: refused for good; retried: nak'd. */
  kind: "redelivered" | "terminated" | "retried";
  delivery: number;
  reason?: string;
}

const NS_PER_MS = 1_000_000;

export class LoopConsumer {
  private messages: ConsumerMessages | undefined;
  /** Messages being handled, and who waits for none to be (stop()). */
  private handling = 0;
  private idle: (() => void)[] = [];
  private stopping = false;
  private readonly acks = new TickBatch();
  /** Messages whose iteration has not committed yet (told "working" until it has). */
  private readonly running = new Set<JsMsg>();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly stream: string,
    private readonly system: string,
    readonly loopId: string,
    private readonly receiver: SignalReceiver,
    private readonly options: ConsumerOptions,
    private readonly onNote: (note: NatsReceiveNote) => void,
  ) {}

  get name(): string {
    return consumerName(this.loopId);
  }

  /** Creates (or adjusts) the loop's durable consumer and starts taking its signals. */
  async start(): Promise<void> {
    const maxAckPending = this.options.maxAckPending ?? 1024;
    const ackWait = (this.options.ackWaitMs ?? 30_000) * NS_PER_MS;
    const wanted = { max_ack_pending: maxAckPending, ack_wait: ackWait };
    const existing = await this.jsm.consumers.info(this.stream, this.name).catch(() => undefined);
    if (!existing) {
      try {
        await this.jsm.consumers.add(this.stream, {
          durable_name: this.name,
          filter_subject: loopSubject(this.system, this.loopId),
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          max_deliver: -1,
          ...wanted,
        });
      } catch (error) {
        // Another host of the system created it first: use theirs.
        if (!(await this.jsm.consumers.info(this.stream, this.name).catch(() => undefined))) throw error;
      }
    } else if (existing.config.max_ack_pending !== maxAckPending || existing.config.ack_wait !== ackWait) {
      await this.jsm.consumers.update(this.stream, this.name, wanted);
    }
    const consumer = await this.js.consumers.get(this.stream, this.name);
    this.messages = await consumer.consume({ max_messages: Math.min(maxAckPending, 512), callback: (m) => this.track(this.handle(m)) });
  }

  private track(work: Promise<void>): void {
    // A count, not a set of promises with a finally() each: one fewer promise per signal.
    this.handling++;
    work.then(this.handled, this.handled);
  }

  private readonly handled = (): void => {
    if (--this.handling > 0) return;
    for (const wake of this.idle.splice(0)) wake();
  };

  private async handle(m: JsMsg): Promise<void> {
    const delivery = deliveryCount(m);
    const note = (kind: NatsReceiveNote["kind"], eventId: string | undefined, reason?: string) =>
      this.onNote({ loop_id: this.loopId, kind, delivery, ...(eventId ? { event_id: eventId } : {}), ...(reason ? { reason } : {}) });
    if (this.stopping) return m.nak();
    let envelope: Record<string, unknown>;
    try {
      envelope = decodeSignal(m.headers, m.data);
    } catch (error) {
      m.term((error as Error).message);
      return note("terminated", m.headers?.get("Nats-Msg-Id") || undefined, (error as Error).message);
    }
    const eventId = typeof envelope.id === "string" ? envelope.id : undefined;
    if (delivery > 1) note("redelivered", eventId);
    const retry = (reason: string) => {
      m.nak(this.options.nakDelayMs ?? 1_000);
      note("retried", eventId, reason);
    };
    let ack;
    try {
      ack = await this.receiver.receive(envelope as never);
    } catch (error) {
      return retry((error as Error).message);
    }
    if (ack.outcome === "rejected") {
      m.term(ack.reason);
      return note("terminated", eventId, ack.reason ?? "rejected");
    }
    // Accepted, or a duplicate whose first delivery's iteration is still running: acked once it committed.
    if (ack.committed) {
      this.running.add(m);
      this.heartbeat ??= setInterval(this.beat, Math.max(50, (this.options.ackWaitMs ?? 30_000) / 3));
      try {
        await ack.committed;
      } catch (error) {
        return retry(`its iteration did not commit: ${(error as Error).message}`);
      } finally {
        this.running.delete(m);
      }
    }
    this.acks.later(() => m.ack());
  }

  /**
   * Keeps JetStream from redelivering a signal whose iteration outlasts ack_wait: one timer for
   * every message still waiting for its commit (not one per message), stopped when none waits.
   */
  private readonly beat = (): void => {
    for (const m of this.running) m.working();
    if (this.running.size === 0) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
    }
  };

  /**
   * Stops taking signals; those already taken get up to `timeoutMs` to commit and be
   * acknowledged. Anything left is redelivered by JetStream.
   */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    // Closing asks the server to stop sending: with the server unreachable it would never answer.
    await Promise.race([this.messages?.close().catch(() => undefined), deadline]);
    const none = this.handling === 0 ? Promise.resolve() : new Promise<void>((resolve) => this.idle.push(resolve));
    await Promise.race([none, deadline]);
    clearTimeout(timer);
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}

/**
 * How many times JetStream has delivered the message, read from its ack subject without the
 * client's parse of every field (m.info): `$JS.ACK.<stream>.<consumer>.<delivered>.…` (9 tokens)
 * or `$JS.ACK.<domain>.<account>.<stream>.<consumer>.<delivered>.…` (11 or more).
 */
export function deliveryCount(m: { readonly info: { deliveryCount: number } }): number {
  // The client's message has it (its reply subject), though its JsMsg type does not say so.
  const reply = (m as { reply?: unknown }).reply;
  if (typeof reply !== "string") return m.info.deliveryCount;
  if (reply.startsWith("$JS.ACK.")) {
    let dots = 0;
    let fourth = -1;
    let sixth = -1;
    for (let i = reply.indexOf("."); i !== -1; i = reply.indexOf(".", i + 1)) {
      dots++;
      if (dots === 4) fourth = i;
      else if (dots === 6) sixth = i;
    }
    const from = dots === 8 ? fourth : dots >= 10 ? sixth : -1;
    if (from !== -1) {
      const n = Number.parseInt(reply.slice(from + 1, reply.indexOf(".", from + 1)), 10);
      if (n > 0) return n;
    }
  }
  return m.info.deliveryCount;
}
