/**
 * `manual` cadences may declare `rate_limit` (§8.6): "10/min" admits 10 triggers in any window of
 * one minute. A sliding log of admission times (at most `count` entries) answers exactly, and
 * says when the next trigger will be admitted.
 */
import { parseRate } from "../../grammar/rate.js";
import { PulseError } from "../../runtime/errors.js";

export class RateLimitedError extends PulseError {
  constructor(
    readonly loopId: string,
    readonly limit: string,
    readonly retryAfterMs: number,
  ) {
    super("RATE_LIMITED", `manual trigger of ${loopId} refused: rate_limit ${limit} reached; the next trigger is admitted in ${(retryAfterMs / 1000).toFixed(1)}s (§8.6)`);
  }
}

export class RateLimiter {
  private readonly count: number;
  private readonly perMs: number;
  private readonly admitted: number[] = [];

  constructor(
    readonly loopId: string,
    readonly limit: string,
  ) {
    const parsed = parseRate(limit);
    if (!parsed.ok) throw new Error(`rate_limit "${limit}" of ${loopId}: ${parsed.error.message}`);
    this.count = parsed.value.count;
    this.perMs = parsed.value.perMs;
  }

  /** Admits a trigger at `now`, or throws RateLimitedError. */
  admit(now: number): void {
    while (this.admitted.length > 0 && (this.admitted[0] as number) <= now - this.perMs) this.admitted.shift();
    if (this.admitted.length >= this.count) throw new RateLimitedError(this.loopId, this.limit, (this.admitted[0] as number) + this.perMs - now);
    this.admitted.push(now);
  }
}
