/**
 * The iterations a host started and has not seen finish: what graceful stop waits for, what
 * idleness measures (every iteration but the idle cadences' own is activity), and what tells a
 * periodic cadence that the previous iteration of its workspace is still running.
 */
import type { Clock } from "../runtime/clock.js";
import type { IterationResult } from "../runtime/iteration-result.js";
import { ActivityTracker } from "./cadence/idle.js";

export class IterationTracker {
  readonly activity: ActivityTracker;
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly busyLoops = new Map<string, number>();

  constructor(private readonly clock: Clock) {
    this.activity = new ActivityTracker(clock.now());
  }

  /** Keeps track of a started iteration until it settles; `activity`: whether it counts against idleness. */
  track(loopId: string, workspace: string, running: Promise<IterationResult>, activity: boolean): Promise<IterationResult> {
    const key = `${loopId} ${workspace}`;
    this.busyLoops.set(key, (this.busyLoops.get(key) ?? 0) + 1);
    if (activity) this.activity.began(this.clock.now());
    const done = running.finally(() => {
      this.busyLoops.set(key, (this.busyLoops.get(key) ?? 1) - 1);
      if (activity) this.activity.ended(this.clock.now());
      this.inflight.delete(done);
    });
    this.inflight.add(done);
    return done;
  }

  /** Whether an iteration of the loop is in flight in the workspace. */
  busy(loopId: string, workspace: string): boolean {
    return (this.busyLoops.get(`${loopId} ${workspace}`) ?? 0) > 0;
  }

  get running(): number {
    return this.inflight.size;
  }

  /** Resolves when no tracked iteration is in flight. */
  async settled(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }
}
