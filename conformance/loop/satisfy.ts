/**
 * Making a `when` hold. A loop's inner-loop triggers (`phase:route_topology when kappa > 0`) and
 * connections' emit conditions (`status in ['success','failure']`) decide whether the structure a
 * test exercises runs at all; with the loop's own handlers they may never hold. So the harness
 * finds values that make the condition hold and bends the run to them: fields of the phase's
 * output (patched after its handler ran), and `kappa` through the memory substrate (a
 * TopologyContext with that max_kappa, as a real memory would report it). Comparisons with
 * literals, `in`, `not`, `and` and `or` are solved; a condition on the phase's input or on other
 * tokens is not (the test then says why it could not be exercised).
 */
import { holds, parseExpression, type Expr, type Literal } from "../../src/grammar/expression/index.js";
import { parseTrigger } from "../../src/grammar/trigger.js";

export interface Bend {
  /** Output fields to set, by path. */
  fields: { path: string[]; value: unknown }[];
  /** max_kappa the memory substrate should report. */
  kappa?: number;
}

type Solved = { ok: true; bend: Bend } | { ok: false; reason: string };

const none = (): Bend => ({ fields: [] });
const merge = (a: Bend, b: Bend): Bend => ({ fields: [...a.fields, ...b.fields], ...(a.kappa !== undefined || b.kappa !== undefined ? { kappa: b.kappa ?? a.kappa } : {}) });

/** The output path a scope path names: `x.y` and `output.x.y` are output fields; `kappa` is κ. */
function target(path: readonly string[]): { kappa: true } | { path: string[] } | { reason: string } {
  if (path.length === 1 && path[0] === "kappa") return { kappa: true };
  if (path[0] === "output") return path.length > 1 ? { path: path.slice(1) } : { reason: "it compares the whole output" };
  if (path[0] === "input" || path[0] === "tokens") return { reason: `it reads ${path.join(".")}, which the harness does not control` };
  return { path: [...path] };
}

function different(value: Literal): Literal {
  if (typeof value === "number") return value + 1;
  if (typeof value === "boolean") return !value;
  if (typeof value === "string") return `${value}_not`;
  return "not_null";
}

function assign(path: readonly string[], value: unknown): Solved {
  const t = target(path);
  if ("reason" in t) return { ok: false, reason: t.reason };
  if ("kappa" in t) return typeof value === "number" ? { ok: true, bend: { fields: [], kappa: value } } : { ok: false, reason: "kappa is a number" };
  return { ok: true, bend: { fields: [{ path: t.path, value }] } };
}

function compare(op: string, path: readonly string[], value: Literal | Literal[]): Solved {
  if (Array.isArray(value)) {
    if (op === "in") return value.length > 0 ? assign(path, value[0]) : { ok: false, reason: "it asks for membership of an empty list" };
    const used = new Set(value.map(String));
    let pick = "pulse_conform_other";
    while (used.has(pick)) pick += "_";
    return assign(path, pick);
  }
  switch (op) {
    case "==":
      return assign(path, value);
    case "!=":
      return assign(path, different(value));
    case ">":
      return typeof value === "number" ? assign(path, value > 0 ? value * 2 : value + 1) : { ok: false, reason: "it orders a non-number" };
    case ">=":
    case "<=":
      return typeof value === "number" ? assign(path, value) : { ok: false, reason: "it orders a non-number" };
    case "<":
      return typeof value === "number" ? assign(path, value - 1) : { ok: false, reason: "it orders a non-number" };
  }
  return { ok: false, reason: `it uses ${op}` };
}

const FLIP: Record<string, string> = { "==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">", in: "not in", "not in": "in" };
const MIRROR: Record<string, string> = { "<": ">", ">": "<", "<=": ">=", ">=": "<=" };

function literalOf(e: Expr): Literal | Literal[] | undefined {
  if (e.type === "literal") return e.value;
  if (e.type === "list" && e.items.every((i) => i.type === "literal")) return e.items.map((i) => (i as { value: Literal }).value);
  return undefined;
}

function solve(e: Expr, negated = false): Solved {
  switch (e.type) {
    case "literal":
      return Boolean(e.value) !== negated ? { ok: true, bend: none() } : { ok: false, reason: "it is constantly false" };
    case "path":
      return assign(e.path, !negated);
    case "not":
      return solve(e.operand, !negated);
    case "logical": {
      // not (a and b) = not a or not b; not (a or b) = not a and not b.
      const both = (e.op === "and") !== negated;
      const left = solve(e.left, negated);
      const right = solve(e.right, negated);
      if (both) return left.ok && right.ok ? { ok: true, bend: merge(left.bend, right.bend) } : !left.ok ? left : right;
      return left.ok ? left : right;
    }
    case "compare": {
      const op = negated ? FLIP[e.op]! : e.op;
      const rightLit = literalOf(e.right);
      if (e.left.type === "path" && rightLit !== undefined) return compare(op, e.left.path, rightLit);
      const leftLit = literalOf(e.left);
      if (e.right.type === "path" && leftLit !== undefined && !Array.isArray(leftLit) && op !== "in" && op !== "not in") return compare(MIRROR[op] ?? op, e.right.path, leftLit);
      return { ok: false, reason: "it compares two fields, or a field with something other than a literal" };
    }
    case "list":
      return { ok: false, reason: "it is a list, not a condition" };
  }
}

/** Values that make `condition` hold, or why none can be chosen. */
export function satisfy(condition: string): Solved {
  const parsed = parseExpression(condition);
  if (!parsed.ok) return { ok: false, reason: `it does not parse (${parsed.error.message})` };
  return solve(parsed.value);
}

/** The `when` of an inner-loop trigger (undefined when it has none) and its phase. */
export function triggerOf(trigger: string): { phase: string; condition?: string } | undefined {
  const parsed = parseTrigger(trigger);
  if (!parsed.ok) return undefined;
  const { phase, condition, conditionOffset } = parsed.value;
  return { phase, ...(condition && conditionOffset !== undefined ? { condition: trigger.slice(conditionOffset).trim() } : {}) };
}

/** Applies a bend's fields to an output (a copy; a non-object output becomes an object). */
export function patchOutput(output: unknown, bend: Bend): unknown {
  if (bend.fields.length === 0) return output;
  const copy: Record<string, unknown> = output !== null && typeof output === "object" && !Array.isArray(output) ? structuredClone(output as Record<string, unknown>) : {};
  for (const { path, value } of bend.fields) {
    let at = copy;
    for (const key of path.slice(0, -1)) {
      if (at[key] === null || typeof at[key] !== "object" || Array.isArray(at[key])) at[key] = {};
      at = at[key] as Record<string, unknown>;
    }
    at[path.at(-1)!] = value;
  }
  return copy;
}

/** Whether the condition holds on an output alone (the harness's own check of its bend). */
export function holdsOn(condition: string, output: unknown, kappa?: number): boolean {
  const parsed = parseExpression(condition);
  if (!parsed.ok) return false;
  const fields = output !== null && typeof output === "object" && !Array.isArray(output) ? (output as Record<string, unknown>) : {};
  return holds(parsed.value, { ...fields, ...(kappa !== undefined ? { kappa } : {}), output });
}
