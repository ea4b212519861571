/**
 * Substrate state is plain JSON: whatever an in-memory adapter stores must survive the HTTP
 * adapter byte for byte, so the two give the same answers. Values are copied on the way in
 * and out, so a caller mutating an object it passed or received cannot reach into the store.
 */

import { canonicalJson, hasLoneSurrogate } from "../../src/json/canonical-json.js";

const MAX_DEPTH = 128;

export class NotJsonError extends Error {
  constructor(readonly path: string, what: string) {
    super(`${path} is ${what}, which is not plain JSON data`);
    this.name = "NotJsonError";
  }
}

/** Thrown inside the copy; where it happened is worked out only after a refusal. */
class Refusal {
  constructor(readonly what: string) {}
}

/** A deep copy of a JSON value; throws NotJsonError for anything JSON cannot carry. */
export function cloneJson<T>(value: T, path = "$"): T {
  try {
    return copy(value, 0) as T;
  } catch (error) {
    if (error instanceof Refusal) {
      const where = locate(value, 0, path);
      throw new NotJsonError(where?.path ?? path, where?.what ?? error.what);
    }
    throw error;
  }
}

/** The path of the first member the copy refuses, and why (the slow path, after a refusal). */
function locate(value: unknown, depth: number, path: string): { path: string; what: string } | undefined {
  try {
    copy(value, depth, true);
    return undefined;
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    if (value === null || typeof value !== "object" || depth >= MAX_DEPTH) return { path, what: error.what };
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const found = locate(value[i], depth + 1, `${path}[${i}]`);
        if (found) return found;
      }
    } else if (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null) {
      for (const key of Object.keys(value)) {
        const item = (value as Record<string, unknown>)[key];
        if (item === undefined) continue;
        const found = locate(item, depth + 1, `${path}.${key}`);
        if (found) return found;
      }
    }
    return { path, what: error.what };
  }
}

const LONE = "a string with a lone surrogate (half of a UTF-16 pair)";

/** The copy itself; with `shallow`, only `value` is checked, not its members. */
function copy(value: unknown, depth: number, shallow = false): unknown {
  switch (typeof value) {
    case "string":
      if (hasLoneSurrogate(value)) throw new Refusal(LONE);
      return value;
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) throw new Refusal(String(value));
      return value;
    case "object": {
      if (value === null) return null;
      if (depth >= MAX_DEPTH) throw new Refusal(`nested deeper than ${MAX_DEPTH} levels (a cycle?)`);
      if (Array.isArray(value)) {
        const out = new Array<unknown>(value.length);
        if (shallow) return out;
        for (let i = 0; i < value.length; i++) out[i] = copy(value[i], depth + 1);
        return out;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) throw new Refusal(`a ${proto?.constructor?.name ?? "non-plain object"}`);
      const out: Record<string, unknown> = {};
      if (shallow) return out;
      for (const key of Object.keys(value)) {
        const item = (value as Record<string, unknown>)[key];
        // JSON.stringify drops undefined members; dropping them here keeps both adapters equal.
        if (item === undefined) continue;
        if (hasLoneSurrogate(key)) throw new Refusal("an object with a key holding a lone surrogate (half of a UTF-16 pair)");
        const copied = copy(item, depth + 1);
        // A "__proto__" key must stay a key, as JSON.parse makes it, not replace the prototype.
        if (key === "__proto__") Object.defineProperty(out, key, { value: copied, enumerable: true, writable: true, configurable: true });
        else out[key] = copied;
      }
      return out;
    }
    default:
      throw new Refusal(value === undefined ? "undefined" : `a ${typeof value}`);
  }
}

/** JSON with object keys sorted (RFC 8785), so equal values give equal strings. */
export { canonicalJson };

export function jsonEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
