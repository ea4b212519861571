/**
 * Substrate state is plain JSON: whatever an in-memory adapter stores must survive the HTTP
 * adapter byte for byte, so the two give the same answers. Values are copied on the way in
 * and out, so a caller mutating an object it passed or received cannot reach into the store.
 */

const MAX_DEPTH = 128;

export class NotJsonError extends Error {
  constructor(readonly path: string, what: string) {
    super(`${path} is ${what}, which is not plain JSON data`);
    this.name = "NotJsonError";
  }
}

/** Thrown inside the copy; the path is assembled only on the way out, off the hot path. */
class Refusal {
  readonly segments: string[] = [];
  constructor(readonly what: string) {}
}

/** A deep copy of a JSON value; throws NotJsonError for anything JSON cannot carry. */
export function cloneJson<T>(value: T, path = "$"): T {
  try {
    return copy(value, 0) as T;
  } catch (error) {
    if (error instanceof Refusal) throw new NotJsonError(path + error.segments.reverse().join(""), error.what);
    throw error;
  }
}

function copy(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case "string":
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
        for (let i = 0; i < value.length; i++) out[i] = within(i, value[i], depth);
        return out;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) throw new Refusal(`a ${proto?.constructor?.name ?? "non-plain object"}`);
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        const item = (value as Record<string, unknown>)[key];
        // JSON.stringify drops undefined members; dropping them here keeps both adapters equal.
        if (item === undefined) continue;
        const copied = within(key, item, depth);
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

/** Copies a member; on refusal, records where it was (built only then, off the hot path). */
function within(key: string | number, value: unknown, depth: number): unknown {
  try {
    return copy(value, depth + 1);
  } catch (error) {
    if (error instanceof Refusal) error.segments.push(typeof key === "number" ? `[${key}]` : `.${key}`);
    throw error;
  }
}

/** JSON with object keys sorted, so equal values give equal strings (grouping, duplicate checks). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const keys = Object.keys(value)
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(",")}}`;
}

export function jsonEqual(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
