/**
 * The studio's live feed: events numbered in order, the last `keep` of them held so a browser
 * that reconnects with Last-Event-ID gets what it missed, and a bounded queue per client. A
 * publisher never waits for a client: a client whose queue overflows (a slow or stalled
 * browser) is cut off and told, on reconnect, to read state back (a `reset` event) when what
 * it missed is no longer held.
 */

export interface FeedEvent {
  id: number;
  type: string;
  data: unknown;
}

export interface FeedClient {
  /** Writes SSE text; returns false when the socket's buffer is full (the client is behind). */
  write(text: string): boolean;
  /** Resolves the next time the socket can take more. */
  onDrain(fn: () => void): void;
  close(): void;
}

export interface FeedOptions {
  /** Events held for reconnecting clients (default 2000). */
  keep?: number;
  /** Events a client may have queued before it is cut off (default 1000). */
  maxQueued?: number;
  /** How long events wait to be written together (default 50 ms). */
  flushMs?: number;
}

const texts = new WeakMap<FeedEvent, string>();

/** The event as SSE text, serialised once however many clients it goes to. */
export function sseText(e: FeedEvent): string {
  let t = texts.get(e);
  if (t === undefined) texts.set(e, (t = `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`));
  return t;
}

class Subscriber {
  queue: FeedEvent[] = [];
  blocked = false;
  constructor(
    readonly client: FeedClient,
    readonly filter: (e: FeedEvent) => boolean,
  ) {}
}

export class Feed {
  private seq = 0;
  private readonly held: FeedEvent[] = [];
  private readonly subscribers = new Set<Subscriber>();
  private readonly keep: number;
  private readonly maxQueued: number;
  private readonly flushMs: number;
  private flushing = false;
  /** Clients cut off for falling behind (visible in tests and the bench). */
  cutOff = 0;

  constructor(options: FeedOptions = {}) {
    this.keep = options.keep ?? 2000;
    this.maxQueued = options.maxQueued ?? 1000;
    this.flushMs = options.flushMs ?? 50;
  }

  get lastId(): number {
    return this.seq;
  }

  get clients(): number {
    return this.subscribers.size;
  }

  /** Adds an event; costs the loops an array push per client, writes happen on a later tick. */
  publish(type: string, data: unknown): void {
    const e: FeedEvent = { id: ++this.seq, type, data };
    this.held.push(e);
    if (this.held.length > this.keep * 1.25) this.held.splice(0, this.held.length - this.keep);
    if (this.subscribers.size === 0) return;
    let queued = false;
    for (const s of this.subscribers) {
      if (!s.filter(e)) continue;
      s.queue.push(e);
      queued = true;
      if (s.queue.length > this.maxQueued) this.cut(s);
    }
    // Written in batches, at most every flushMs: one socket write per page per batch, not per event.
    if (queued && !this.flushing) {
      this.flushing = true;
      setTimeout(() => this.flush(), this.flushMs).unref();
    }
  }

  /**
   * A new client; `after` is its Last-Event-ID. What it missed is replayed when still held,
   * else it gets a `reset` (read the state back) and the live events from now on.
   */
  subscribe(client: FeedClient, after: number | undefined, filter: (e: FeedEvent) => boolean = () => true): () => void {
    const s = new Subscriber(client, filter);
    const oldest = this.held[0]?.id ?? this.seq + 1;
    if (after !== undefined && after < this.seq) {
      if (after + 1 >= oldest) s.queue.push(...this.held.filter((e) => e.id > after && filter(e)));
      else s.queue.push({ id: this.seq, type: "reset", data: { reason: `events after ${after} are no longer held: read the state again`, last: this.seq } });
    } else s.queue.push({ id: this.seq, type: "hello", data: { last: this.seq } });
    this.subscribers.add(s);
    this.write(s);
    return () => this.subscribers.delete(s);
  }

  private cut(s: Subscriber): void {
    this.subscribers.delete(s);
    s.queue = [];
    this.cutOff++;
    s.client.close();
  }

  private flush(): void {
    this.flushing = false;
    for (const s of this.subscribers) this.write(s);
  }

  private write(s: Subscriber): void {
    if (s.blocked || s.queue.length === 0) return;
    const batch = s.queue;
    s.queue = [];
    const ok = s.client.write(batch.map(sseText).join(""));
    if (!ok) {
      s.blocked = true;
      s.client.onDrain(() => {
        s.blocked = false;
        if (this.subscribers.has(s)) this.write(s);
      });
    }
  }

  /** Ends every client (at shutdown). */
  closeAll(): void {
    for (const s of this.subscribers) s.client.close();
    this.subscribers.clear();
  }
}
