/**
 * `idle` (§8.4): iterate when the whole host has been idle for `min_idle_ms`, at most
 * `max_iteration_per_idle` times per idle period. Idleness is measured across the host: any
 * iteration of any loop is activity and starts a new period, except the iterations idle cadences
 * run themselves (the host does not report those).
 */
import type { CadenceContext, CadenceDriver } from "./driver.js";

/** Host-wide activity: the host reports every iteration start and end. */
export class ActivityTracker {
  private lastActivity: number;
  private active = 0;
  /** Increases with every activity; an idle period is the time between two changes of it. */
  period = 0;
  private listeners = new Set<() => void>();

  constructor(now: number) {
    this.lastActivity = now;
  }

  began(now: number): void {
    this.active++;
    this.lastActivity = now;
    this.period++;
    for (const l of this.listeners) l();
  }

  ended(now: number): void {
    this.active = Math.max(0, this.active - 1);
    this.lastActivity = now;
    this.period++;
    for (const l of this.listeners) l();
  }

  get busy(): boolean {
    return this.active > 0;
  }

  get since(): number {
    return this.lastActivity;
  }

  onActivity(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export class IdleCadence implements CadenceDriver {
  readonly type = "idle";
  private readonly minIdleMs: number;
  private readonly maxPerIdle: number;
  private cancel: (() => void) | undefined;
  private unsubscribe: (() => void) | undefined;
  private stopped = true;
  private ranInPeriod = 0;
  private period = -1;

  constructor(
    params: Record<string, unknown>,
    private readonly ctx: CadenceContext,
    private readonly activity: ActivityTracker,
  ) {
    this.minIdleMs = typeof params.min_idle_ms === "number" ? params.min_idle_ms : 0;
    this.maxPerIdle = typeof params.max_iteration_per_idle === "number" ? params.max_iteration_per_idle : 1;
  }

  start(): void {
    this.stopped = false;
    this.unsubscribe = this.activity.onActivity(() => this.arm());
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    this.cancel?.();
    this.unsubscribe?.();
  }

  waiting(): { for: string; due?: number } | undefined {
    if (this.stopped) return undefined;
    const what = `idle (${this.minIdleMs} ms without an iteration in the host)`;
    // Its quota for this idle period is used: only an iteration elsewhere starts a new period.
    if (this.period === this.activity.period && this.ranInPeriod >= this.maxPerIdle) return undefined;
    return this.activity.busy ? { for: what } : { for: what, due: this.activity.since + this.minIdleMs };
  }

  private arm(): void {
    if (this.stopped) return;
    this.cancel?.();
    const due = this.activity.since + this.minIdleMs;
    this.cancel = this.ctx.clock.timer(Math.max(0, due - this.ctx.clock.now()), () => void this.fire());
  }

  private async fire(): Promise<void> {
    if (this.stopped || this.activity.busy || this.ctx.clock.now() - this.activity.since < this.minIdleMs) return;
    if (this.period !== this.activity.period) {
      this.period = this.activity.period;
      this.ranInPeriod = 0;
    }
    while (this.ranInPeriod < this.maxPerIdle && !this.stopped && this.period === this.activity.period) {
      this.ranInPeriod++;
      const idle_since = new Date(this.activity.since).toISOString();
      await this.ctx.run({ workspace: this.ctx.workspace, input: { cadence: "idle", idle_since }, cause: { cadence: "idle", idle_since } }, "idle");
    }
  }
}
