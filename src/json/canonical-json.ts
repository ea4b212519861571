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

/** Thrown inside the writer; where it happened is worked out only after a refusal. */
class Refusal {
  constructor(readonly what: string) {}
}

export function canonicalJson(value: unknown): string {
  try {
    return write(value, 0);
  } catch (error) {
    if (error instanceof Refusal) throw new CanonicalJsonError(`${locate(value, 0, "$") ?? "$"} ${error.what}`);
    throw error;
  }
}

/** The path of the first value the writer refuses (the slow path, after a refusal). */
function locate(value: unknown, depth: number, path: string): string | undefined {
  if (value === undefined || typeof value === "function" || typeof value === "symbol" || typeof value === "bigint") return path;
  if (typeof value === "number") return Number.isFinite(value) ? undefined : path;
  if (typeof value === "string") return LONE_SURROGATE.test(value) ? path : undefined;
  if (value === null || typeof value !== "object") return undefined;
  if (depth >= MAX_CANONICAL_DEPTH) return path;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = locate(value[i], depth + 1, `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    return typeof toJSON === "function" ? locate(toJSON.call(value), depth + 1, path) : path;
  }
  for (const key of Object.keys(value).sort()) {
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined) continue;
    if (LONE_SURROGATE.test(key)) return `${path} key ${JSON.stringify(key)}`;
    const found = locate(item, depth + 1, `${path}.${key}`);
    if (found) return found;
  }
  return undefined;
}

/** Strings with nothing to escape (the usual case) are quoted without JSON.stringify's work. */
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/**
 * RFC 8785 canonicalises I-JSON, whose strings are well-formed Unicode: a lone surrogate (half
 * of a character, as cutting an emoji in two leaves) is refused rather than signed in a form
 * implementations in other languages would write differently or refuse themselves.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const ANY_SURROGATE = /[\ud800-\udfff]/;

/** True when the string holds half of a UTF-16 pair: not I-JSON, and not JSON our adapters keep. */
export function hasLoneSurrogate(s: string): boolean {
  return ANY_SURROGATE.test(s) && LONE_SURROGATE.test(s);
}

/** Whether a short string has nothing to escape: a scan of its code units beats the regex there. */
function plainShort(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

function quote(s: string): string {
  if (s.length <= 32 ? plainShort(s) : PLAIN.test(s)) return `"${s}"`;
  if (LONE_SURROGATE.test(s)) throw new Refusal("contains a lone surrogate (half of a UTF-16 pair), which RFC 8785 canonical JSON does not allow");
  return JSON.stringify(s);
}

/** Keys quoted before: objects of one shape come back again and again (every phase's inputs). */
const quotedKeys = new Map<string, string>();
/** Keys remembered at once; beyond it the cache starts over (it only saves work). */
const QUOTED_KEYS = 4096;

function quoteKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = quote(key);
    if (quotedKeys.size >= QUOTED_KEYS) quotedKeys.clear();
    quotedKeys.set(key, quoted);
  }
  return quoted;
}

function write(value: unknown, depth: number): string {
  switch (typeof value) {
    case "string":
      return quote(value);
    case "number":
      if (!Number.isFinite(value)) throw new Refusal(`is ${value}, which JSON cannot represent`);
      // For finite numbers String() is the ECMAScript shortest form JSON.stringify writes.
      return String(value);
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
            throw new Refusal(`is ${item === undefined ? "undefined" : `a ${typeof item}`}, which JSON cannot represent`);
          }
          out += write(item, depth + 1);
        }
        return out + "]";
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) {
        const toJSON = (value as { toJSON?: unknown }).toJSON;
        if (typeof toJSON === "function") return write(toJSON.call(value), depth + 1);
        throw new Refusal(`is a ${proto?.constructor?.name ?? "non-plain object"}, not plain JSON data`);
      }
      const keys = Object.keys(value);
      sortKeys(keys);
      let out = "{";
      let first = true;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i] as string;
        const item = (value as Record<string, unknown>)[key];
        // As JSON.stringify does: a property whose value is undefined is absent.
        if (item === undefined) continue;
        if (typeof item === "function" || typeof item === "symbol") throw new Refusal(`is a ${typeof item}, which JSON cannot represent`);
        out += (first ? "" : ",") + quoteKey(key) + ":" + write(item, depth + 1);
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

/**
 * Sorts keys by UTF-16 code units (RFC 8785 §3.2.3), as `Array.prototype.sort()` does, in place.
 * Objects have a few keys: an insertion sort orders them without the scratch copies the
 * built-in sort allocates on every call (it was most of the garbage a signature made).
 */
function sortKeys(keys: string[]): void {
  if (keys.length > 16) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    for (; j >= 0 && (keys[j] as string) > key; j--) keys[j + 1] = keys[j] as string;
    keys[j + 1] = key;
  }
}
