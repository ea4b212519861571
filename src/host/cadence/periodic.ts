/**
 * `periodic` (§8.2): an iteration every `interval` on the grid start + phase_offset + k × interval.
 * The first tick is the first point of that grid strictly after start: `phase_offset` after start
 * when the manifest sets one, else one interval after start (a loop that should also run at once
 * is triggered: `pulse run` does that with --kickoff). Ticks are scheduled at absolute times, so
 * timer lateness never accumulates into drift. A periodic loop never runs two iterations at once:
 * a tick that finds the previous iteration still running is skipped, and the next tick is the
 * first scheduled time after it finished. A slow iteration delays the loop; it never piles
 * iterations up. A tick whose timer fires an interval or more late is skipped the same way.
 */
import { parseDuration } from "../../grammar/duration.js";
import type { CadenceContext, CadenceDriver } from "./driver.js";

export class PeriodicCadence implements CadenceDriver {
  readonly type = "periodic";
  private readonly intervalMs: number;
  private readonly interval: string;
  /** When the next tick is scheduled (while started). */
  private nextAt: number | undefined;
  private readonly offsetMs: number;
  private first = 0;
  private cancel: (() => void) | undefined;
  private stopped = true;
  /** Ticks that found the previous iteration still running. */
  skipped = 0;

  constructor(
    params: Record<string, unknown>,
    private readonly ctx: CadenceContext,
  ) {
    this.intervalMs = durationOf(params.interval, 0);
    this.interval = String(params.interval);
    this.offsetMs = durationOf(params.phase_offset, 0);
    if (!(this.intervalMs > 0)) throw new Error(`periodic cadence of ${ctx.loop.id} needs an interval longer than zero`);
  }

  start(): void {
    this.stopped = false;
    // A fleet's hosts share one grid of ticks (ctx.origin): the next tick on it after now.
    const origin = this.ctx.origin ?? this.ctx.clock.now();
    this.first = origin + (this.offsetMs > 0 ? this.offsetMs : this.intervalMs);
    this.schedule(this.ctx.origin === undefined ? this.first : this.nextTickAfter(this.ctx.clock.now()));
  }

  stop(): void {
    this.stopped = true;
    this.cancel?.();
    this.cancel = undefined;
    this.nextAt = undefined;
  }

  waiting(): { for: string; due?: number } | undefined {
    if (this.stopped) return undefined;
    return this.nextAt === undefined ? { for: `periodic tick (every ${this.interval})` } : { for: `periodic tick (every ${this.interval})`, due: this.nextAt };
  }

  /** The first scheduled tick strictly after `time`. */
  nextTickAfter(time: number): number {
    const first = this.first;
    if (time < first) return first;
    return first + (Math.floor((time - first) / this.intervalMs) + 1) * this.intervalMs;
  }

  private schedule(at: number): void {
    if (this.stopped) return;
    this.nextAt = at;
    this.cancel = this.ctx.clock.timer(Math.max(0, at - this.ctx.clock.now()), () => void this.tick(at));
  }

  private async tick(at: number): Promise<void> {
    if (this.stopped) return;
    this.nextAt = undefined;
    // A timer that fired an interval or more late (the process was stopped, or starved): the
    // tick is long past, and runs no more than the ticks its lateness skipped over: the next
    // tick is the first one after now. (A fleet host stalled past its lease could otherwise
    // fire a tick the new holder already ran or skipped.)
    if (this.ctx.busy() || this.ctx.clock.now() >= at + this.intervalMs) {
      this.skipped++;
    } else {
      const scheduled_at = new Date(at).toISOString();
      await this.ctx.run({ workspace: this.ctx.workspace, input: { cadence: "periodic", scheduled_at }, cause: { cadence: "periodic", scheduled_at } }, "periodic");
    }
    this.schedule(this.nextTickAfter(Math.max(at, this.ctx.clock.now())));
  }
}

function durationOf(value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "string") return Number.NaN;
  const parsed = parseDuration(value);
  return parsed.ok ? parsed.value : Number.NaN;
}
