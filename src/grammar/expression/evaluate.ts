/**
 * Semantics of the PULSE expression language (user-facing version: docs/expressions.md).
 *
 * - A path reads own properties only, starting at the scope: `a.b` is `scope.a.b` when `scope`
 *   and `scope.a` are non-array objects that own those keys. Anything else (a missing key, a
 *   key inherited from a prototype such as `constructor` or `toString`, a step into a string,
 *   number, array or null) makes the path undefined. Arrays have no fields (`items.length` is
 *   undefined).
 * - `==` is deep structural equality of JSON values with no coercion: `1 == '1'` is false,
 *   `[1, {a: 2}] == [1, {a: 2}]` is true, object key order is irrelevant, `0 == -0` is true.
 *   A missing path equals `null` (JSON has no undefined), so `error != null` means "error is set".
 *   Values that are not JSON (class instances, functions, Dates) equal only themselves.
 * - `!=` is exactly `not (a == b)`.
 * - `< <= > >=` compare two numbers, or two strings by UTF-16 code units; any other pair
 *   (missing, null, boolean, mixed types) is false.
 * - `a in b`: when b is an array, whether some element equals a (by `==`); when both are
 *   strings, whether a is a substring of b; otherwise false. `a not in b` is `not (a in b)`.
 * - A value *holds* only when it is exactly `true`. `and`, `or` and `not` work on whether their
 *   operands hold and always yield a boolean: `not 'yes'` is true, `1 and true` is false.
 *   `and`/`or` short-circuit.
 * - `evaluate` yields the value of the expression (a comparison or connective yields a boolean);
 *   `holds` yields whether it is exactly `true`. Neither throws, whatever the scope holds: a
 *   getter or proxy that throws makes `evaluate` yield undefined and `holds` yield false.
 *
 * The interpreter walks the AST directly; a list on the right of `in` is scanned in place, so
 * `status in ['success', 'failure']` allocates nothing. An AST must not be mutated while in use.
 */
import type { CompareExpr, Expr } from "./ast.js";

const hasOwn = Object.prototype.hasOwnProperty;

/** Deeper values are compared as unequal: a cyclic object graph must not overflow the stack. */
const MAX_EQUALITY_DEPTH = 1000;

export function evaluate(expr: Expr, scope: unknown): unknown {
  try {
    return valueOf(expr, scope);
  } catch {
    return undefined;
  }
}

export function holds(expr: Expr, scope: unknown): boolean {
  try {
    return truth(expr, scope);
  } catch {
    return false;
  }
}

function valueOf(expr: Expr, scope: unknown): unknown {
  switch (expr.type) {
    case "literal":
      return expr.value;
    case "path":
      return lookup(scope, expr.path);
    case "list": {
      const items = expr.items;
      const out = new Array<unknown>(items.length);
      for (let i = 0; i < items.length; i++) out[i] = valueOf(items[i] as Expr, scope);
      return out;
    }
    default:
      return truth(expr, scope);
  }
}

function truth(expr: Expr, scope: unknown): boolean {
  switch (expr.type) {
    case "logical":
      return expr.op === "and" ? truth(expr.left, scope) && truth(expr.right, scope) : truth(expr.left, scope) || truth(expr.right, scope);
    case "not":
      return !truth(expr.operand, scope);
    case "compare":
      return compare(expr, scope);
    default:
      return valueOf(expr, scope) === true;
  }
}

function compare(expr: CompareExpr, scope: unknown): boolean {
  switch (expr.op) {
    case "in":
      return member(expr, scope);
    case "not in":
      return !member(expr, scope);
    case "==":
      return equal(valueOf(expr.left, scope), valueOf(expr.right, scope), 0);
    case "!=":
      return !equal(valueOf(expr.left, scope), valueOf(expr.right, scope), 0);
    default:
      return order(expr.op, valueOf(expr.left, scope), valueOf(expr.right, scope));
  }
}

function order(op: "<" | "<=" | ">" | ">=", a: unknown, b: unknown): boolean {
  if (!((typeof a === "number" && typeof b === "number") || (typeof a === "string" && typeof b === "string"))) return false;
  switch (op) {
    case "<":
      return a < b;
    case "<=":
      return a <= b;
    case ">":
      return a > b;
    case ">=":
      return a >= b;
  }
}

function member(expr: CompareExpr, scope: unknown): boolean {
  const needle = valueOf(expr.left, scope);
  const haystack = expr.right;
  if (haystack.type === "list") {
    const items = haystack.items;
    for (let i = 0; i < items.length; i++) {
      if (equal(needle, valueOf(items[i] as Expr, scope), 0)) return true;
    }
    return false;
  }
  const value = valueOf(haystack, scope);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (equal(needle, value[i], 0)) return true;
    }
    return false;
  }
  return typeof value === "string" && typeof needle === "string" && value.includes(needle);
}

function lookup(scope: unknown, path: readonly string[]): unknown {
  let current = scope;
  for (let i = 0; i < path.length; i++) {
    if (current === null || typeof current !== "object" || Array.isArray(current)) return undefined;
    const key = path[i] as string;
    if (!hasOwn.call(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** Structural equality of JSON values; undefined (a missing path) is treated as null. */
function equal(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (a === undefined || a === null) return b === undefined || b === null;
  if (typeof a !== "object" || typeof b !== "object" || b === null) return false;
  if (depth >= MAX_EQUALITY_DEPTH) return false;
  const isArray = Array.isArray(a);
  if (isArray !== Array.isArray(b)) return false;
  if (isArray) {
    const x = a as unknown[];
    const y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!equal(x[i], y[i], depth + 1)) return false;
    return true;
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!hasOwn.call(b, key)) return false;
    if (!equal((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
