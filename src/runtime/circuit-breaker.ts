/**
 * One circuit breaker per bound substrate (§12 test 9): after `failureThreshold` consecutive
 * unavailability failures the circuit opens and calls fail fast with CircuitOpenError instead of
 * spinning; after `cooldownMs` one probe call is let through (half-open); its success closes the
 * circuit, its failure opens it again. Business refusals (a policy deny) are not failures here.
 */
import type { Clock } from "./clock.js";
import { CircuitOpenError } from "./errors.js";
import type { CircuitState } from "./events.js";

export interface CircuitOptions {
  failureThreshold: number;
  cooldownMs: number;
}

export const DEFAULT_CIRCUIT: CircuitOptions = { failureThreshold: 5, cooldownMs: 30_000 };

export class CircuitBreaker {
  private state: CircuitState = "closed";
  private failures = 0;
  private openedAt = 0;
  private probing = false;

  constructor(
    readonly slot: string,
    private readonly clock: Clock,
    private readonly options: CircuitOptions,
    private readonly onChange: (state: CircuitState, previous: CircuitState) => void,
    /** The "no-circuit" mutant of the conformance self-test: never opens. */
    private readonly disabled = false,
  ) {}

  get current(): CircuitState {
    if (this.state === "open" && this.clock.now() - this.openedAt >= this.options.cooldownMs) return "half_open";
    return this.state;
  }

  get retryAt(): number {
    return this.openedAt + this.options.cooldownMs;
  }

  /** Throws CircuitOpenError when the call must not be attempted. */
  admit(): void {
    const state = this.current;
    if (state === "closed") return;
    if (state === "half_open" && !this.probing) {
      this.probing = true;
      if (this.state !== "half_open") this.move("half_open");
      return;
    }
    throw new CircuitOpenError(this.slot, this.retryAt);
  }

  succeeded(): void {
    this.failures = 0;
    this.probing = false;
    if (this.state !== "closed") this.move("closed");
  }

  failed(): void {
    if (this.disabled) return;
    this.probing = false;
    this.failures++;
    if (this.state === "half_open" || (this.state === "closed" && this.failures >= this.options.failureThreshold)) {
      this.openedAt = this.clock.now();
      this.move("open");
    } else if (this.state === "open") {
      this.openedAt = this.clock.now();
    }
  }

  /** A call admitted as the probe ended without a verdict (e.g. a business error): let another probe try. */
  released(): void {
    this.probing = false;
  }

  private move(state: CircuitState): void {
    const previous = this.state;
    this.state = state;
    this.onChange(state, previous);
  }
}
