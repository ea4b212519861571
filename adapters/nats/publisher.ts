/**
 * JetStream publishes, their PubAcks matched on one subscription of our own. The client's
 * `js.publish` builds, per message, a request object, a timer, a copy of its options, and (on
 * every success, when it cancels the finished request) an Error with a stack trace: about a
 * fifth of the sender's CPU per signal (bench/nats.bench.ts). Here a publish is one map entry,
 * and one timer watches the oldest deadline.
 *
 * What the answer means is JetStream's (as in `js.publish`): a PubAck names the stream that
 * stored the message and whether it was a duplicate of a Nats-Msg-Id already stored; an error
 * or "no responders" (no stream takes the subject) rejects; no answer within the bound rejects,
 * and so does a disconnect (the message may still have been stored: a resend with the same
 * Nats-Msg-Id is then acknowledged as a duplicate).
 *
 * Publishes made during one turn of the event loop go out together at its end (as TickBatch
 * does for acks): the client writes to its socket in a microtask after the first publish of a
 * burst, so publishes a few awaits apart would each cost a write of their own.
 */
import { createInbox, type Msg, type MsgHdrs, type NatsConnection } from "@nats-io/transport-node";

export interface PubAck {
  stream: string;
  seq: number;
  duplicate: boolean;
}

export class PublishError extends Error {
  override readonly name = "PublishError";
}

/**
 * Headers: the client's own, or already encoded (codec.ts encodeForPublish). The client's
 * publish only calls `encode()` on them (@nats-io/nats-core 3.x, protocol.ts publish).
 */
export type PublishHeaders = MsgHdrs | { encode(): Uint8Array };

interface Waiting {
  subject: string;
  /** Until sent (then dropped). */
  body: Uint8Array | undefined;
  headers: PublishHeaders | undefined;
  deadline: number;
  resolve: (ack: PubAck) => void;
  reject: (error: Error) => void;
}

const decoder = new TextDecoder();

export class AckedPublisher {
  private readonly inbox: string;
  /** In publish order; every publish has the same bound, so also in deadline order. */
  private readonly waiting = new Map<string, Waiting>();
  /** Publishes of this turn, not sent yet. */
  private queued: Waiting[] = [];
  private scheduled = false;
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed: Error | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs: number,
  ) {
    this.inbox = `${createInbox()}.`;
    nc.subscribe(`${this.inbox}*`, { callback: (error, msg) => this.answer(error, msg) });
    void nc.closed().then(() => this.close(new PublishError("the connection to NATS is closed")));
    void this.watchDisconnects();
  }

  publish(subject: string, body: Uint8Array, headers: PublishHeaders): Promise<PubAck> {
    if (this.closed) return Promise.reject(this.closed);
    return new Promise<PubAck>((resolve, reject) => {
      this.queued.push({ subject, body, headers, deadline: 0, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.send);
      }
    });
  }

  /** Publishes what this turn queued. */
  private readonly send = (): void => {
    this.scheduled = false;
    const queued = this.queued;
    this.queued = [];
    const deadline = performance.now() + this.timeoutMs;
    for (const w of queued) {
      if (this.closed) {
        w.reject(this.closed);
        continue;
      }
      const token = (this.next++).toString(36);
      try {
        this.nc.publish(w.subject, w.body, { reply: this.inbox + token, headers: w.headers as unknown as MsgHdrs });
      } catch (error) {
        w.reject(error as Error);
        continue;
      }
      w.body = undefined;
      w.headers = undefined;
      w.deadline = deadline;
      this.waiting.set(token, w);
    }
    if (this.waiting.size > 0) this.timer ??= setTimeout(() => this.expire(), this.timeoutMs);
  };

  /** Rejects whatever still waits (the transport is closing). */
  close(reason = new PublishError("the NATS transport is closed")): void {
    this.closed ??= reason;
    this.failAll(reason);
  }

  private answer(error: Error | null, msg: Msg): void {
    const token = msg?.subject?.startsWith(this.inbox) ? msg.subject.slice(this.inbox.length) : undefined;
    const w = token === undefined ? undefined : this.waiting.get(token);
    if (!w) {
      // An error not tied to one answer (say, no permission for the inbox) fails every publish.
      if (error) this.failAll(error);
      return;
    }
    this.waiting.delete(token as string);
    if (error) return w.reject(error);
    if (msg.data.length === 0 && msg.headers?.code === 503) return w.reject(new PublishError(`no JetStream stream takes subject ${w.subject} (no responders)`));
    let v: { stream?: unknown; seq?: unknown; duplicate?: unknown; error?: { description?: string; err_code?: number; code?: number } };
    try {
      v = JSON.parse(decoder.decode(msg.data));
    } catch {
      return w.reject(new PublishError("JetStream answered something that is not a PubAck"));
    }
    if (v.error) return w.reject(new PublishError(`JetStream refused the message: ${v.error.description ?? "error"} (code ${v.error.err_code ?? v.error.code})`));
    if (typeof v.stream !== "string" || v.stream === "") return w.reject(new PublishError("invalid ack response"));
    w.resolve({ stream: v.stream, seq: Number(v.seq), duplicate: v.duplicate === true });
  }

  private expire(): void {
    this.timer = undefined;
    const now = performance.now();
    for (const [token, w] of this.waiting) {
      if (w.deadline > now) {
        this.timer = setTimeout(() => this.expire(), w.deadline - now);
        return;
      }
      this.waiting.delete(token);
      w.reject(new PublishError(`no PubAck within ${this.timeoutMs} ms`));
    }
  }

  private failAll(error: Error): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const all = [...this.waiting.values(), ...this.queued];
    this.waiting.clear();
    this.queued = [];
    for (const w of all) w.reject(error);
  }

  /** As the client does for its requests: a disconnect fails the publishes waiting, so they are retried at once. */
  private async watchDisconnects(): Promise<void> {
    for await (const s of this.nc.status()) if (s.type === "disconnect") this.failAll(new PublishError("disconnected from NATS"));
  }
}
