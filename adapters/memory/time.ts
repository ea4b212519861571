/**
 * In-memory §9.5 time substrate. `at_timescale` reports the clock at a named timescale.
 * `forecast` returns an empty forecast: this adapter has no model of any stream, and an empty
 * answer is honest where an invented one would mislead a loop. Hosts with TickTickClock or
 * another forecaster bind it instead.
 */
import type { CallContext, TimeSubstrate } from "../../src/substrates/contracts.js";
import { TIMESCALES } from "../../src/tokens/types.js";
import { badRequest, checkContext, describe, requireArgs, requireString } from "../shared/validate.js";

const SLOT = "time";

export class InMemoryTime implements TimeSubstrate {
  constructor(private readonly clock: () => Date = () => new Date()) {}

  async at_timescale(args: { timescale: string }, ctx: CallContext): Promise<Record<string, unknown>> {
    checkContext(SLOT, ctx);
    const timescale = requireArgs(SLOT, "at_timescale", args).timescale;
    if (!(TIMESCALES as readonly unknown[]).includes(timescale)) throw badRequest(SLOT, `at_timescale: timescale must be one of ${TIMESCALES.join(", ")}, got ${describe(timescale)}`);
    return { timescale, now: this.clock().toISOString() };
  }

  async forecast(args: { stream: string; horizon: string }, ctx: CallContext): Promise<Record<string, unknown>> {
    checkContext(SLOT, ctx);
    const a = requireArgs(SLOT, "forecast", args);
    return { stream: requireString(SLOT, "forecast", a, "stream"), horizon: requireString(SLOT, "forecast", a, "horizon"), points: [] };
  }
}
