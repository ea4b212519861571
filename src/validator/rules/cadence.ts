/**
 * §3.3, §8: `cadence.params` is free-form in the schema, so its per-type parameters are checked
 * here: required ones present, values in their grammar (durations, rates, expressions), unknown
 * ones flagged with the nearest known name. Fallback cadences are checked the same way.
 */
import { parseDurationCached as parseDuration, parseRateCached as parseRate, parseExpressionCached as parseExpression } from "../../grammar/cached.js";
import { TOKEN_NAMES } from "../../manifest/types.js";
import { asObject, type Json } from "../access.js";
import { getOwn } from "../../source/own-property.js";
import { childPath, type Path } from "../../source/source-node.js";
import type { Finding, Report } from "../finding.js";
import type { LoopModel } from "../resolver.js";
import { closest, didYouMean } from "../../grammar/suggest.js";

type Problem = Pick<Finding, "message" | "offset" | "length" | "suggestion">;
type Check = (value: unknown, params: Json) => Problem | undefined;

interface ParamSpec {
  required?: boolean;
  check: Check;
}

const LOOP_ID = /^[a-z0-9_]+(\.[a-z0-9_]+)+$/;
const PHASE_ID = /^[a-z0-9_]+$/;

const nonEmptyString: Check = (v) => (typeof v === "string" && v.trim() !== "" ? undefined : { message: "must be a non-empty string" });

const integerAtLeast =
  (min: number, hint: string): Check =>
  (v) => {
    if (typeof v === "number" && Number.isInteger(v) && v >= min) return undefined;
    if (typeof v === "string") return { message: `must be an integer ${hint}, not a string`, suggestion: /^\d+$/.test(v) ? `write ${v} without quotes` : undefined };
    return { message: `must be an integer ${hint}` };
  };

function durationMs(v: unknown): { ms?: number; problem?: Problem } {
  if (typeof v === "number") return { problem: { message: `${v} has no unit`, suggestion: `write "${v}ms" or "${v}s"` } };
  if (typeof v !== "string") return { problem: { message: "must be a duration such as \"30s\", \"1h\", \"PT1H\" or \"daily\"" } };
  const parsed = parseDuration(v);
  if (!parsed.ok) return { problem: { message: parsed.error.message, offset: parsed.error.offset, length: Math.max(1, parsed.error.length) } };
  return { ms: parsed.value };
}

const duration =
  (positive: boolean): Check =>
  (v) => {
    const { ms, problem } = durationMs(v);
    if (problem) return problem;
    if (positive && ms === 0) return { message: "must be longer than zero" };
    return undefined;
  };

const phaseOffset: Check = (v, params) => {
  const own = durationMs(v);
  if (own.problem) return own.problem;
  const interval = durationMs(params.interval).ms;
  if (interval !== undefined && own.ms !== undefined && own.ms >= interval) {
    return { message: `phase_offset (${String(v)}) must be shorter than the interval (${String(params.interval)})` };
  }
  return undefined;
};

const rate: Check = (v) => {
  if (typeof v !== "string") return { message: "must be a rate such as \"10/min\", \"5/s\" or \"100/h\"" };
  const parsed = parseRate(v);
  return parsed.ok ? undefined : { message: parsed.error.message, offset: parsed.error.offset, length: Math.max(1, parsed.error.length) };
};

const expression: Check = (v) => {
  if (typeof v !== "string") return { message: "must be an expression string such as \"priority >= 3\"" };
  const parsed = parseExpression(v);
  return parsed.ok ? undefined : { message: parsed.error.message, offset: parsed.error.offset, length: Math.max(1, parsed.error.length) };
};

const pattern =
  (re: RegExp, what: string): Check =>
  (v) =>
    typeof v === "string" && re.test(v) ? undefined : { message: `must be ${what}` };

const token: Check = (v) => {
  if (typeof v === "string" && (TOKEN_NAMES as readonly string[]).includes(v)) return undefined;
  const s = typeof v === "string" ? closest(v, TOKEN_NAMES) : undefined;
  return { message: `must be a canonical token (${TOKEN_NAMES.join(", ")})`, suggestion: didYouMean(s) };
};

export const CADENCE_PARAMS: Record<string, Record<string, ParamSpec>> = {
  event: { trigger: { required: true, check: nonEmptyString }, filter: { check: expression } },
  periodic: { interval: { required: true, check: duration(true) }, phase_offset: { check: phaseOffset } },
  streaming: { stream: { required: true, check: nonEmptyString }, batch_size: { check: integerAtLeast(1, "of at least 1") } },
  idle: {
    min_idle_ms: { required: true, check: integerAtLeast(0, "of milliseconds (e.g. 60000)") },
    max_iteration_per_idle: { check: integerAtLeast(1, "of at least 1") },
  },
  cross_loop_signal: {
    from_loop: { required: true, check: pattern(LOOP_ID, "a dotted lowercase loop id such as \"org.loop\"") },
    from_phase: { check: pattern(PHASE_ID, "a phase id (lowercase letters, digits, _)") },
    token: { check: token },
  },
  manual: { interface: { check: nonEmptyString }, rate_limit: { check: rate } },
};

/** CADENCE_PARAMS as maps: names read from a manifest are looked up, never used as property keys. */
interface CadenceSpec {
  params: Map<string, ParamSpec>;
  required: string[];
  known: string[];
}

const CADENCES = new Map<string, CadenceSpec>(
  Object.entries(CADENCE_PARAMS).map(([type, specs]) => {
    const known = Object.keys(specs);
    return [type, { params: new Map(Object.entries(specs)), required: known.filter((name) => specs[name]?.required), known }];
  }),
);

export function checkCadence(model: LoopModel, report: Report): void {
  const seenTypes: string[] = [];
  for (const { cadence, path } of model.cadences) {
    const type = cadence.type;
    const spec = typeof type === "string" ? CADENCES.get(type) : undefined;
    if (spec === undefined) continue;
    checkParams(type as string, spec, cadence, path, report);
    if (seenTypes.includes(type as string)) {
      report({ rule: "pulse/cadence-fallback-redundant", path: childPath(path, "type"), message: `this fallback has the same type ("${String(type)}") as a cadence it falls back from` });
    }
    seenTypes.push(type as string);
  }
}

function checkParams(type: string, cadenceSpec: CadenceSpec, cadence: Json, path: Path, report: Report): void {
  const specs = cadenceSpec.params;
  const raw = cadence.params;
  const params = asObject(raw) ?? {};
  if (raw !== undefined && !asObject(raw)) return; // the schema reports a non-object params
  for (const name of cadenceSpec.required) {
    if (getOwn(params, name) === undefined) {
      report({
        rule: "pulse/cadence-param-missing",
        path: childPath(path, raw === undefined ? "type" : "params"),
        key: raw !== undefined,
        message: `${article(type)} ${type} cadence needs params.${name} (§8)`,
      });
    }
  }
  for (const name of Object.keys(params)) {
    const value = params[name];
    const spec = specs.get(name);
    if (!spec) {
      const suggestion = didYouMean(closest(name, cadenceSpec.known));
      const known = cadenceSpec.known.join(", ");
      const f: Finding = { rule: "pulse/cadence-param-unknown", path: childPath(path, "params", name), key: true, message: `"${name}" is not a parameter of ${article(type)} ${type} cadence (known: ${known})` };
      report(suggestion ? { ...f, suggestion } : f);
      continue;
    }
    const problem = spec.check(value, params);
    if (problem) {
      const f: Finding = { rule: "pulse/cadence-param-invalid", path: childPath(path, "params", name), message: `params.${name} ${problem.message.startsWith("must") ? "" : "is invalid: "}${problem.message}` };
      if (problem.offset !== undefined) Object.assign(f, { offset: problem.offset, length: problem.length });
      if (problem.suggestion) f.suggestion = problem.suggestion;
      report(f);
    }
  }
}

/** "an idle cadence", "an event cadence", "a periodic cadence". */
function article(word: string): string {
  return /^[aeiou]/i.test(word) ? "an" : "a";
}
