/**
 * A cadence (§3.3, §8) armed for one loop: it decides when the loop iterates and asks the host
 * to run an iteration. The host applies the policies all cadences share (one iteration at a
 * time per workspace, nothing while paused, stopped or degraded before the circuit allows a probe).
 */
import type { Clock } from "../../runtime/clock.js";
import type { IterationRequest, IterationResult } from "../../runtime/iteration-result.js";
import type { Loop } from "../../runtime/loop.js";

export interface CadenceContext {
  loop: Loop;
  clock: Clock;
  /** Workspace cadence-triggered iterations run in. */
  workspace: string;
  /** Runs an iteration for this cadence; undefined when the host declined (stopping, paused, degraded, busy). */
  run(request: IterationRequest, reason: string): Promise<IterationResult | undefined>;
  /** Whether an iteration of the loop is in flight in the workspace. */
  busy(): boolean;
  /** Tell the host something worth reporting (e.g. an unbound stream). */
  note(message: string): void;
  /** Where periodic ticks are counted from when hosts of a fleet share one schedule (default: the cadence's start). */
  origin?: number;
}

/** What an armed cadence waits for, and when it fires next if it knows. */
export interface CadenceWait {
  /** In words, e.g. "periodic tick (every 1h)". */
  for: string;
  /** Clock time of the next firing, when it is scheduled. */
  due?: number;
}

export interface CadenceDriver {
  readonly type: string;
  start(): void;
  stop(): void;
  /** What it is waiting for at this moment; undefined when it cannot fire again on its own (stopped, quota used, stream ended). */
  waiting(): CadenceWait | undefined;
}
