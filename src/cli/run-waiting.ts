/**
 * What `pulse run` says and does when its host goes quiet (no iteration running, no signal on its
 * way): if some loop's next trigger is armed (a periodic tick, an idle period, a stream, or
 * signals arriving over --listen) it waits, and says what for and when, once per quiet spell,
 * when that is at least WAIT_NOTE_MS away; if nothing can ever trigger another iteration (event
 * and manual cadences, signals from loops that are not running), the run is starved and stops.
 */
import type { Host, HostWait } from "../host/host.js";

/** A quiet spell shorter than this passes without a note (a 2 s periodic loop says nothing). */
export const WAIT_NOTE_MS = 5_000;

/** How long the host must stay quiet before it is judged: lets a just-finished iteration's signal leave. */
const SETTLE_MS = 25;

export interface QuietOptions {
  /** Whether signals may arrive over --listen (then the run is never starved). */
  listening: boolean;
  now(): number;
  /** Some loop's next trigger is armed: say what the loops wait for. */
  waiting(waits: HostWait[]): void;
  /** Nothing can trigger another iteration. */
  starved(waits: HostWait[]): void;
}

export class QuietWatcher {
  private timer: NodeJS.Timeout | undefined;
  private noted = false;
  private done = false;

  constructor(
    private readonly host: Host,
    private readonly o: QuietOptions,
  ) {}

  /** Something happened (an iteration ended, a signal settled, kickoff finished): look again shortly. */
  poke(): void {
    if (this.done) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.check(), SETTLE_MS);
  }

  /** A new iteration started: the next quiet spell gets its own note. */
  active(): void {
    this.noted = false;
  }

  close(): void {
    this.done = true;
    clearTimeout(this.timer);
  }

  private check(): void {
    if (this.done || !this.host.quiet) return;
    const waits = this.host.waiting();
    const armed = waits.filter((w) => w.armed);
    if (armed.length === 0 && !this.o.listening) {
      this.done = true;
      this.o.starved(waits);
      return;
    }
    if (this.noted) return;
    const dues = armed.map((w) => w.due);
    const soonest = dues.every((d) => d !== undefined) && dues.length > 0 ? Math.min(...(dues as number[])) : undefined;
    if (soonest !== undefined && soonest - this.o.now() < WAIT_NOTE_MS) return;
    this.noted = true;
    this.o.waiting(waits);
  }
}

/** One line per loop: what it waits for, when it is due, and how a trigger from outside can come in `pulse run`. */
export function describeWaits(waits: readonly HostWait[], now: number, context: { hosted: ReadonlySet<string>; listening: boolean }): string[] {
  const byLoop = new Map<string, string[]>();
  for (const w of waits) {
    const parts = byLoop.get(w.loop_id) ?? [];
    parts.push(describeWait(w, now, context));
    byLoop.set(w.loop_id, parts);
  }
  return [...byLoop].map(([loop, parts]) => `${loop}: ${parts.join("; or ")}`);
}

function describeWait(w: HostWait, now: number, context: { hosted: ReadonlySet<string>; listening: boolean }): string {
  if (w.armed) return w.due === undefined ? w.for : `${w.for}, due ${new Date(w.due).toISOString()} (in ${span(w.due - now)})`;
  if (w.for.startsWith("event ")) return `${w.for} (pulse run emits events only at start: -e ${w.for.slice(7, -1)}='{…}')`;
  if (w.for === "a manual trigger") return `${w.for} (pulse run triggers only at start, with --kickoff)`;
  const from = /^a signal from ([^/]+)/.exec(w.for)?.[1];
  if (from && !context.hosted.has(from)) return `${w.for} (${context.listening ? "over --listen" : "not in this run: --listen receives signals from another pulse run"})`;
  return w.for;
}

/** A duration as a person reads it: 850ms, 12s, 3m 20s, 6d 23h. */
export function span(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${s % 60 ? ` ${s % 60}s` : ""}`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h${m % 60 ? ` ${m % 60}m` : ""}`;
  const d = Math.floor(h / 24);
  return `${d}d${h % 24 ? ` ${h % 24}h` : ""}`;
}
