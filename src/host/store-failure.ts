/**
 * What a host does when its store fails under an iteration (docs/store.md, "When the file is not
 * usable"): a failure that will not pass by itself (a full disk, a damaged or read-only file)
 * stops every loop's cadences and refuses further iterations; one that may pass (the file locked
 * by another process beyond the busy timeout, PostgreSQL unreachable) pauses the loops and tries
 * again after a while. Either is said once, as one `store.failed` event, however many iterations
 * hit it: without this each cadence tick ran an iteration into the same failure and said so again.
 */
import type { Clock } from "../runtime/clock.js";
import type { HostEvent } from "./host-events.js";

/** Failures that may pass on their own: the loops pause and try again. */
const TRANSIENT = new Set(["STORE_LOCKED", "STORE_UNAVAILABLE"]);
/**
 * The store itself failed (not a refusal of one unit such as STORE_LEASE_LOST or
 * STORE_IDEMPOTENCY_CLAIMED, which a fleet host meets in its ordinary course).
 */
const FAILED = new Set(["STORE_FULL", "STORE_CORRUPT", "STORE_READ_ONLY", "STORE_IO", "STORE_CANNOT_OPEN", "STORE_FAILED", ...TRANSIENT]);

/** How long the loops stay paused by a failure that may pass before they try again (host clock). */
export const STORE_RETRY_MS = 10_000;

export function isStoreFailure(code: string | undefined): boolean {
  return code !== undefined && FAILED.has(code);
}

export interface StoreFailure {
  code: string;
  message: string;
  transient: boolean;
}

export class StoreWatch {
  /** The failure that stopped the loops for good (until the host is started again on a store that works). */
  private stoppedBy: StoreFailure | undefined;
  /** The failure that paused the loops: set until an iteration commits again. */
  private pausedBy: StoreFailure | undefined;
  /** Loops this watch paused (a loop paused by its user stays paused). */
  private readonly paused = new Set<string>();
  private retry: AbortController | undefined;

  constructor(
    private readonly d: {
      clock: Clock;
      retryMs: number;
      emit(event: HostEvent): void;
      /** Disarms every loop's cadences. */
      stopLoops(): void;
      /** The loops running, and whether each is paused now. */
      loops(): { id: string; paused: boolean }[];
      pause(loopId: string): void;
      resume(loopId: string): void;
    },
  ) {}

  /** Why no iteration may start now, if the store failed. */
  get refusal(): string | undefined {
    if (this.stoppedBy) return `the store failed (${this.stoppedBy.code}): the loops are stopped`;
    if (this.pausedBy && this.retry) return `the store failed (${this.pausedBy.code}): the loops are paused until it answers again`;
    return undefined;
  }

  /** The failure still standing (the loops stopped, or paused and not yet committing again). */
  get failure(): StoreFailure | undefined {
    return this.stoppedBy ?? this.pausedBy;
  }

  observe(e: HostEvent): void {
    // An iteration in doubt was read back: the store answers again, so what its failure paused goes on now.
    if (e.type === "iteration.resolved") return this.answered();
    if (e.type !== "iteration.finished") return;
    if (e.error && isStoreFailure(e.error.code)) this.failed(e.loop_id, { code: e.error.code, message: e.error.message, transient: TRANSIENT.has(e.error.code) });
    else if (e.status === "completed" && this.pausedBy && !this.stoppedBy) {
      this.pausedBy = undefined;
      this.d.emit({ type: "host.note", loop_id: "host", message: "the store answers again: the loops go on", at: this.d.clock.now() });
    }
  }

  private answered(): void {
    if (!this.pausedBy || this.stoppedBy) return;
    this.pausedBy = undefined;
    this.retry?.abort();
    this.retry = undefined;
    for (const id of this.paused) this.d.resume(id);
    this.paused.clear();
    this.d.emit({ type: "host.note", loop_id: "host", message: "the store answers again: the loops go on", at: this.d.clock.now() });
  }

  private failed(loopId: string, failure: StoreFailure): void {
    if (this.stoppedBy) return;
    if (!failure.transient) {
      this.stoppedBy = failure;
      this.retry?.abort();
      this.d.stopLoops();
      this.d.emit({ type: "store.failed", loop_id: loopId, ...failure, at: this.d.clock.now() });
      return;
    }
    const first = this.pausedBy === undefined;
    this.pausedBy = failure;
    for (const l of this.d.loops()) {
      if (l.paused) continue;
      this.paused.add(l.id);
      this.d.pause(l.id);
    }
    if (first) this.d.emit({ type: "store.failed", loop_id: loopId, ...failure, at: this.d.clock.now() });
    this.scheduleRetry();
  }

  /** Resumes the loops this watch paused after retryMs; the next iteration says whether the store answers. */
  private scheduleRetry(): void {
    if (this.retry) return;
    const retry = (this.retry = new AbortController());
    this.d.clock.sleep(this.d.retryMs, retry.signal).then(
      () => {
        this.retry = undefined;
        if (this.stoppedBy) return;
        for (const id of this.paused) this.d.resume(id);
        this.paused.clear();
      },
      () => undefined,
    );
  }

  /** The host stops: no retry outlives it. */
  close(): void {
    this.retry?.abort();
    this.retry = undefined;
  }
}

/** The watch of a host's loops (`hosted`: its loops by id, with their cadence drivers). */
export function watchStore(
  hosted: ReadonlyMap<string, { loop: { id: string; status(): string }; drivers: { stop(): void }[] }>,
  d: { clock: Clock; retryMs: number | undefined; emit(event: HostEvent): void; pause(loopId: string): void; resume(loopId: string): void },
): StoreWatch {
  return new StoreWatch({
    ...d,
    retryMs: d.retryMs ?? STORE_RETRY_MS,
    stopLoops: () => {
      for (const h of hosted.values()) for (const driver of h.drivers) driver.stop();
    },
    loops: () => [...hosted.values()].map((h) => ({ id: h.loop.id, paused: h.loop.status() === "paused" })),
  });
}
