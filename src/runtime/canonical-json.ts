/**
 * RFC 8785 JSON Canonicalization Scheme: object keys sorted by UTF-16 code units, numbers in
 * ECMAScript shortest form, strings escaped as JSON.stringify does, no whitespace. Written here
 * rather than taken from `canonicalize` because signatures are on every phase's hot path (this is
 * several times faster) and because non-JSON input must be refused, not silently coerced. A
 * property test checks it byte for byte against the `canonicalize` package.
 */
export class CanonicalJsonError extends Error {
  readonly code = "NOT_JSON";
}

export const MAX_CANONICAL_DEPTH = 128;

/** Thrown inside the writer; the path is assembled only while a refusal unwinds. */
class Refusal {
  readonly segments: string[] = [];
  constructor(readonly what: string) {}
}

export function canonicalJson(value: unknown): string {
  try {
    return write(value, 0);
  } catch (error) {
    if (error instanceof Refusal) throw new CanonicalJsonError(`$${error.segments.reverse().join("")} ${error.what}`);
    throw error;
  }
}

function within(segment: string, value: unknown, depth: number): string {
  try {
    return write(value, depth);
  } catch (error) {
    if (error instanceof Refusal) error.segments.push(segment);
    throw error;
  }
}

function write(value: unknown, depth: number): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      if (!Number.isFinite(value)) throw new Refusal(`is ${value}, which JSON cannot represent`);
      return JSON.stringify(value);
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (value === null) return "null";
      if (depth >= MAX_CANONICAL_DEPTH) throw new Refusal(`nests deeper than ${MAX_CANONICAL_DEPTH} levels (a cycle?)`);
      if (Array.isArray(value)) {
        let out = "[";
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ",";
          const item = value[i];
          if (item === undefined || typeof item === "function" || typeof item === "symbol") {
            const refusal = new Refusal(`is ${item === undefined ? "undefined" : `a ${typeof item}`}, which JSON cannot represent`);
            refusal.segments.push(`[${i}]`);
            throw refusal;
          }
          out += within(`[${i}]`, item, depth + 1);
        }
        return out + "]";
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        const toJSON = (value as { toJSON?: unknown }).toJSON;
        if (typeof toJSON === "function") return write(toJSON.call(value), depth + 1);
        throw new Refusal(`is a ${proto?.constructor?.name ?? "non-plain object"}, not plain JSON data`);
      }
      const keys = Object.keys(value).sort();
      let out = "{";
      let first = true;
      for (const key of keys) {
        const item = (value as Record<string, unknown>)[key];
        // As JSON.stringify does: a property whose value is undefined is absent.
        if (item === undefined) continue;
        if (typeof item === "function" || typeof item === "symbol") {
          const refusal = new Refusal(`is a ${typeof item}, which JSON cannot represent`);
          refusal.segments.push(`.${key}`);
          throw refusal;
        }
        out += (first ? "" : ",") + JSON.stringify(key) + ":" + within(`.${key}`, item, depth + 1);
        first = false;
      }
      return out + "}";
    }
    case "undefined":
      throw new Refusal("is undefined, which JSON cannot represent");
    default:
      throw new Refusal(`is a ${typeof value}, which JSON cannot represent`);
  }
}
