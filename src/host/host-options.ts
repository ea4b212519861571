/**
 * What a host is given (HostOptions) and what its stop() takes and answers: kept apart from
 * host.ts so that the host's module stays about running loops.
 */
import type { RuntimeOptions } from "../runtime/runtime.js";
import type { Transport } from "../connections/contracts.js";
import type { DedupeLimits } from "../connections/dedupe.js";
import type { FleetGate } from "../fleet/contracts.js";
import type { Escalation } from "./escalation.js";

export interface HostOptions extends Omit<RuntimeOptions, "hooks"> {
  /** Workspace of cadence-triggered iterations and of signals that name none. */
  workspace?: string;
  /** Carries signals to loops this host does not run (default: in-process only). */
  transport?: Transport;
  /** Stream URIs of streaming cadences, bound to sources. */
  streams?: Record<string, AsyncIterable<unknown>>;
  /** Upper bound on inner iterations an until_stable wait runs before it gives up. */
  maxInnerIterations?: number;
  /** Where escalations go that no parent loop takes: the host's human channel. */
  onEscalation?: (escalation: Escalation) => void | Promise<void>;
  /** Backoff of signal redelivery. */
  signalRetry?: { baseMs: number; maxMs: number };
  /**
   * A fleet this host shares its loops with: cadences run an iteration only when the fleet
   * admits it (this host holds the loop's lease), and signals to this host's own loops go through
   * `transport` too, to whichever host holds the target loop.
   */
  fleet?: FleetGate;
  /**
   * Start at most this many iterations in all, whatever starts them (cadences, triggers, events,
   * signals); inner-loop iterations run inside the outer iteration that waits for them and are
   * not counted. Past it, cadences decline, triggers throw ITERATIONS_SPENT and arriving signals
   * are rejected with that reason (`pulse run --iterations`).
   */
  maxIterations?: number;
  /**
   * Bounds of the window of received signal ids each loop remembers to run every signal once
   * (default 100,000 ids and 16 MiB per loop; at least half of either is always remembered).
   */
  dedupe?: DedupeLimits;
  /** How long loops paused by a store failure that may pass wait before they try again (default 10 s). */
  storeRetryMs?: number;
}

/** How long stop() lets in-flight work finish by default, on the host's clock. */
export const DEFAULT_STOP_TIMEOUT_MS = 10_000;

export interface StopOptions {
  /**
   * How long in-flight iterations and undelivered signals get to finish (default 10 s, on the
   * host's clock). Past it, signals not yet acknowledged are dropped (reason "stopped", audited)
   * and stop() resolves; iterations still running finish on their own, and their signals are
   * dropped the same way.
   */
  timeoutMs?: number;
}

export interface StopResult {
  /** True when the deadline passed before everything finished. */
  timedOut: boolean;
  /** Signals dropped because they were still unacknowledged at the end. */
  signalsDropped: number;
  /** Iterations still running when stop() resolved (0 unless timedOut). */
  iterationsRunning: number;
}
