import { describe, expect, it } from "vitest";
import fc from "fast-check";
import canonicalize from "canonicalize";
import { canonicalJson } from "../../src/json/canonical-json.js";

describe("canonicalJson (RFC 8785)", () => {
  it("is byte-identical to the canonicalize package on arbitrary JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        expect(canonicalJson(value)).toBe((canonicalize as (v: unknown) => string)(value));
      }),
      { numRuns: 1000 },
    );
  });

  it("orders any keys (astral, BMP, digits) like the canonicalize package, in small and large objects", () => {
    // canonicalize refuses lone surrogates, so keys here are well-formed (astral pairs included).
    const key = fc.oneof(fc.string({ unit: "binary", maxLength: 4 }), fc.string({ unit: "grapheme", maxLength: 3 }), fc.constantFrom("1", "10", "2", "a", "B", "\ud83d\ude00", "\uffff", "\u20ac"));
    fc.assert(
      fc.property(fc.dictionary(key, fc.integer(), { maxKeys: 40 }), (value) => {
        expect(canonicalJson(value)).toBe((canonicalize as (v: unknown) => string)(value));
      }),
      { numRuns: 500 },
    );
  });

  it("sorts keys by UTF-16 code units and writes numbers in ECMAScript shortest form", () => {
    expect(canonicalJson({ "\u20ac": 1, "\r": 2, "\ud83d\ude00": 3, a: 4, B: 5 })).toBe('{"\\r":2,"B":5,"a":4,"€":1,"😀":3}');
    expect(canonicalJson([1e21, 1e-7, -0, 0.1 + 0.2, 100, 4.5])).toBe("[1e+21,1e-7,0,0.30000000000000004,100,4.5]");
  });

  it("round-trips: parsing canonical JSON and canonicalising again is the identity", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const once = canonicalJson(value);
        expect(canonicalJson(JSON.parse(once))).toBe(once);
      }),
      { numRuns: 500 },
    );
  });

  it("refuses a lone surrogate in a value or a key, naming where; a whole surrogate pair is fine", () => {
    expect(() => canonicalJson({ a: ["ok", "cut \ud83d"] })).toThrow(/\$\.a\[1\] contains a lone surrogate/);
    expect(() => canonicalJson({ ["k\udc00"]: 1 })).toThrow(/key "k\\udc00" contains a lone surrogate/);
    expect(() => canonicalJson("\udc00\ud83d")).toThrow(/lone surrogate/);
    expect(canonicalJson({ ["\ud83d\ude00"]: "\ud83d\ude00 \u20ac\n" })).toBe('{"\ud83d\ude00":"\ud83d\ude00 \u20ac\\n"}');
    // Keys are quoted once and remembered: a refused key is refused again, an escaped one stays escaped.
    expect(() => canonicalJson({ ["k\udc00"]: 2 })).toThrow(/lone surrogate/);
    expect(canonicalJson({ ['q"\n']: 1 })).toBe('{"q\\"\\n":1}');
    expect(canonicalJson({ ['q"\n']: 2 })).toBe('{"q\\"\\n":2}');
  });

  it("drops undefined properties like JSON.stringify, honours toJSON, refuses other objects", () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(canonicalJson({ at: new Date(0) })).toBe('{"at":"1970-01-01T00:00:00.000Z"}');
    expect(() => canonicalJson({ s: new Set([1]) })).toThrow(/Set/);
    expect(canonicalJson(Object.assign(Object.create(null), { z: 1, a: 2 }))).toBe('{"a":2,"z":1}');
  });
});
