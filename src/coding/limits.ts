/**
 * Limits of a coding loop and the stop reasons they produce. Every stop has a typed reason, and
 * spend caps are enforced: checked before each dispatch, so a loop overshoots a cap by at most
 * the one iteration that crossed it (and says by how much).
 */

export type StopReason = "completed" | "blocked" | "max_iterations" | "budget_exhausted" | "timeout" | "no_progress" | "circuit_open" | "aborted" | "failed";

export const STOP_REASONS: readonly StopReason[] = ["completed", "blocked", "max_iterations", "budget_exhausted", "timeout", "no_progress", "circuit_open", "aborted", "failed"];

export interface Limits {
  /** Default 10. 0 means unbounded, allowed only with `allowUnbounded` and a cost cap. */
  maxIterations: number;
  allowUnbounded?: boolean;
  /** Wall time of the whole loop. */
  maxWallMs?: number;
  maxTokens?: number;
  maxCostUsd?: number;
  /** Consecutive failed agent calls (errors and timeouts; rate limits are waits, not failures). Default 5. */
  maxConsecutiveFailures: number;
  /** Consecutive iterations without progress in git before the breaker opens. Default 3. */
  noProgressLimit: number;
  /** The same error this many times in a row opens the breaker. Default 5. */
  sameErrorLimit: number;
  /** Iterations with permission denials before the breaker opens. Default 2. */
  permissionDenialLimit: number;
  /** How long an open breaker stays open before one more try (half-open). Default 30 min. */
  cooldownMs: number;
  /** The longest rate-limit wait sat out; a longer one pauses the session with the reset time instead. Default 30 min. */
  maxRateLimitWaitMs: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxIterations: 10,
  maxConsecutiveFailures: 5,
  noProgressLimit: 3,
  sameErrorLimit: 5,
  permissionDenialLimit: 2,
  cooldownMs: 30 * 60_000,
  maxRateLimitWaitMs: 30 * 60_000,
};

export class LimitsError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`limits.${field}: ${message}`);
    this.name = "LimitsError";
  }
}

/** Fills defaults and refuses limits that would let a loop run away. */
export function resolveLimits(partial: Partial<Limits> = {}): Limits {
  const limits: Limits = { ...DEFAULT_LIMITS };
  for (const [key, value] of Object.entries(partial)) if (value !== undefined) (limits as unknown as Record<string, unknown>)[key] = value;
  const counts: (keyof Limits)[] = ["maxIterations", "maxConsecutiveFailures", "noProgressLimit", "sameErrorLimit", "permissionDenialLimit"];
  for (const key of counts) {
    const v = limits[key] as number;
    if (!Number.isInteger(v) || v < 0) throw new LimitsError(key, `must be a whole number ≥ 0, got ${JSON.stringify(v)}`);
  }
  for (const key of ["maxWallMs", "maxTokens", "maxCostUsd", "cooldownMs", "maxRateLimitWaitMs"] as const) {
    const v = limits[key];
    if (v !== undefined && (typeof v !== "number" || !Number.isFinite(v) || v <= 0)) throw new LimitsError(key, `must be a number > 0, got ${JSON.stringify(v)}`);
  }
  if (limits.maxIterations === 0) {
    if (!limits.allowUnbounded) throw new LimitsError("maxIterations", "0 (unbounded) needs allowUnbounded: true and a cost cap (maxCostUsd): an unbounded loop once ran 6,239 iterations");
    if (limits.maxCostUsd === undefined) throw new LimitsError("maxCostUsd", "an unbounded loop (maxIterations 0) needs a cost cap");
  }
  return limits;
}
