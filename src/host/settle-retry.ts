/**
 * Marking the store's outbox rows settled once their signal was acknowledged. A settle that
 * meets an outage (the store unreachable) is not lost: it is kept, oldest first, and tried again
 * (250 ms doubling to 5 s) until the store answers, so a delivered signal does not stay pending
 * for the next starting host to send again. Said once when it starts failing, once when done.
 */
import type { Clock } from "../runtime/clock.js";
import type { Store } from "../store/contracts.js";

type Settle = Parameters<Store["settle"]>;

const FIRST_MS = 250;
const MAX_MS = 5_000;

export class SettleRetry {
  private readonly queue: Settle[] = [];
  private cancel: (() => void) | undefined;
  private delay = FIRST_MS;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly note: (message: string) => void,
  ) {}

  readonly settle = async (...args: Settle): Promise<void> => {
    // Behind earlier ones still waiting: settled in order, by the retry.
    if (this.queue.length > 0) return void this.queue.push(args);
    try {
      await this.store.settle(...args);
    } catch (error) {
      if (!unavailable(error)) throw error;
      this.queue.push(args);
      this.note(`outbox: signal ${args[1]} was ${args[2]} but the store cannot mark it settled (${(error as Error).message}); trying again until it answers`);
      this.schedule();
    }
  };

  /** Settles still waiting (0 once the store answered). */
  get waiting(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.cancel) return;
    this.cancel = this.clock.timer(this.delay, () => {
      this.cancel = undefined;
      void this.retry();
    });
  }

  private async retry(): Promise<void> {
    const count = this.queue.length;
    while (this.queue.length > 0) {
      try {
        await this.store.settle(...this.queue[0]!);
      } catch (error) {
        if (unavailable(error)) {
          this.delay = Math.min(this.delay * 2, MAX_MS);
          return this.schedule();
        }
        // Refused otherwise (the store closed): the row stays pending, sent again on a later start.
      }
      this.queue.shift();
    }
    this.delay = FIRST_MS;
    this.note(`outbox: the store answers again: ${count} signal(s) marked settled`);
  }

  /** The host stopped: what is still waiting stays pending in the store (sent again on a later start). */
  close(): void {
    this.cancel?.();
    this.cancel = undefined;
  }
}

function unavailable(error: unknown): boolean {
  return (error as { code?: unknown })?.code === "STORE_UNAVAILABLE";
}
