/**
 * All runtime timing goes through a Clock, so tests and the conformance suite run on virtual
 * time: backoff, timeouts, circuit cooldowns and (in the host) cadences.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after ms; rejects with the signal's reason when aborted first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `fire` after ms unless the returned cancel function is called first. */
  timer(ms: number, fire: () => void): () => void;
}

/**
 * setTimeout holds 2^31-1 ms (24.8 days) and fires after 1 ms for anything longer, Infinity
 * included. A longer wait is capped at that; an infinite one (timeout_ms: .inf) never fires.
 */
const MAX_TIMER_MS = 2_147_483_647;
const timerDelay = (ms: number): number | undefined => (ms === Number.POSITIVE_INFINITY ? undefined : Math.min(MAX_TIMER_MS, Math.max(0, ms || 0)));

export const systemClock: Clock = {
  now: () => Date.now(),
  timer: (ms, fire) => {
    const delay = timerDelay(ms);
    if (delay === undefined) return () => undefined;
    const t = setTimeout(fire, delay);
    return () => clearTimeout(t);
  },
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const delay = timerDelay(ms);
      const timer =
        delay === undefined
          ? undefined
          : setTimeout(() => {
              signal?.removeEventListener("abort", onAbort);
              resolve();
            }, delay);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
};

interface Timer {
  at: number;
  seq: number;
  resolve: () => void;
}

/** Let every pending promise callback run (setImmediate fires after the microtask queue drains). */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * How long (real time) `advance` waits for work on the wire before it moves time anyway: a
 * substrate call that is itself waiting for loop time (a peer that never answers until the
 * phase's timeout aborts it) would otherwise hold the clock for good.
 */
export const DEFAULT_IN_FLIGHT_BOUND_MS = 10_000;

export interface VirtualClockOptions {
  /** Real milliseconds `advance` waits for tracked work before moving time regardless. */
  inFlightBoundMs?: number;
}

/**
 * Time that moves only when told to. `advance(ms)` fires due timers in order, letting the code
 * each one wakes run (and schedule further timers) before the next fires.
 *
 * Work that takes real time (a substrate call over HTTP) is invisible to a settle() of the
 * event loop: time would pass while it is on the wire, and a timer its continuation sets would
 * land after the advance that should have fired it. Such work is passed through `track`, and
 * `advance` waits for it (bounded) before each step.
 */
export class VirtualClock implements Clock {
  private time: number;
  private seq = 0;
  private timers: Timer[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly inFlightBoundMs: number;

  constructor(start = Date.UTC(2026, 0, 1), options: VirtualClockOptions = {}) {
    this.time = start;
    this.inFlightBoundMs = options.inFlightBoundMs ?? DEFAULT_IN_FLIGHT_BOUND_MS;
  }

  now(): number {
    return this.time;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer: Timer = {
        at: this.time + Math.max(0, ms),
        seq: this.seq++,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.timers = this.timers.filter((t) => t !== timer);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.timers.push(timer);
    });
  }

  timer(ms: number, fire: () => void): () => void {
    const timer: Timer = { at: this.time + Math.max(0, ms), seq: this.seq++, resolve: fire };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Holds loop time while `work` (real-time work such as a substrate call) is under way; returns it unchanged. */
  track<T>(work: Promise<T>): Promise<T> {
    const done: Promise<void> = work.then(
      () => undefined,
      () => undefined,
    );
    this.inFlight.add(done);
    void done.then(() => this.inFlight.delete(done));
    return work;
  }

  /** Tracked work still under way. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** Number of timers waiting. */
  get pending(): number {
    return this.timers.length;
  }

  /** The time of the next timer, if any. */
  nextAt(): number | undefined {
    let next: number | undefined;
    for (const t of this.timers) if (next === undefined || t.at < next) next = t.at;
    return next;
  }

  async advance(ms: number): Promise<void> {
    const target = this.time + ms;
    await this.quiesce();
    for (;;) {
      const due = this.takeNext(target);
      if (!due) break;
      this.time = due.at;
      due.resolve();
      await this.quiesce();
    }
    this.time = target;
    await this.quiesce();
  }

  /** Lets pending callbacks run and tracked work finish (up to the in-flight bound of real time). */
  private async quiesce(): Promise<void> {
    await settle();
    if (this.inFlight.size === 0) return;
    const deadline = performance.now() + this.inFlightBoundMs;
    while (this.inFlight.size > 0) {
      const left = deadline - performance.now();
      if (left <= 0) return;
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(this.inFlight), new Promise((resolve) => (bound = setTimeout(resolve, left)))]);
      clearTimeout(bound);
      // What the finished work woke may start further calls before it blocks again.
      await settle();
    }
  }

  /** Advances to each next timer until none is left or `limitMs` has passed. */
  async runAll(limitMs = 24 * 3600_000): Promise<void> {
    const end = this.time + limitMs;
    await settle();
    for (let next = this.nextAt(); next !== undefined && next <= end; next = this.nextAt()) await this.advance(next - this.time);
  }

  private takeNext(target: number): Timer | undefined {
    let best = -1;
    for (let i = 0; i < this.timers.length; i++) {
      const t = this.timers[i] as Timer;
      if (t.at > target) continue;
      const b = this.timers[best];
      if (best < 0 || t.at < (b as Timer).at || (t.at === (b as Timer).at && t.seq < (b as Timer).seq)) best = i;
    }
    return best < 0 ? undefined : this.timers.splice(best, 1)[0];
  }
}
