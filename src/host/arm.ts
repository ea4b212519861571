/**
 * The triggers a loop's cadence and its fallbacks arm in a host (all together, §3.3): timed and
 * streaming cadences become drivers, event cadences a list of triggers with their filters, a
 * manual cadence's rate_limit a limiter. cross_loop_signal cadences need nothing armed: the host
 * matches arriving signals against them.
 */
import { parseExpression, type Expr } from "../grammar/expression/index.js";
import type { Manifest } from "../manifest/types.js";
import type { Loop } from "../runtime/loop.js";
import type { CadenceContext, CadenceDriver } from "./cadence/driver.js";
import { IdleCadence, type ActivityTracker } from "./cadence/idle.js";
import { PeriodicCadence } from "./cadence/periodic.js";
import { RateLimiter } from "./cadence/rate-limit.js";
import { StreamingCadence } from "./cadence/streaming.js";

export interface ArmedCadences {
  drivers: CadenceDriver[];
  events: { trigger: string; filter: Expr | undefined }[];
  limiter: RateLimiter | undefined;
  /** What only the outside can trigger, in words: events, signals, manual triggers. */
  outside: string[];
}

export function armCadences(loop: Loop, ctx: (type: string) => CadenceContext, activity: ActivityTracker, streams: Record<string, AsyncIterable<unknown>> | undefined): ArmedCadences {
  const armed: ArmedCadences = { drivers: [], events: [], limiter: undefined, outside: [] };
  for (let cadence: Manifest["cadence"] | undefined = loop.compiled.manifest.cadence; cadence; cadence = cadence.fallback) {
    const params = (cadence.params ?? {}) as Record<string, unknown>;
    switch (cadence.type) {
      case "periodic":
        armed.drivers.push(new PeriodicCadence(params, ctx("periodic")));
        break;
      case "idle":
        armed.drivers.push(new IdleCadence(params, ctx("idle"), activity));
        break;
      case "streaming":
        armed.drivers.push(new StreamingCadence(params, ctx("streaming"), streams?.[String(params.stream)]));
        break;
      case "event": {
        const filter = typeof params.filter === "string" ? parseExpression(params.filter) : undefined;
        armed.events.push({ trigger: String(params.trigger), filter: filter?.ok ? filter.value : undefined });
        armed.outside.push(`event "${String(params.trigger)}"`);
        break;
      }
      case "manual":
        if (typeof params.rate_limit === "string" && !armed.limiter) armed.limiter = new RateLimiter(loop.id, params.rate_limit);
        armed.outside.push("a manual trigger");
        break;
      case "cross_loop_signal":
        armed.outside.push(`a signal from ${String(params.from_loop)}${params.from_phase ? `/${String(params.from_phase)}` : ""}`);
        break;
    }
  }
  return armed;
}
