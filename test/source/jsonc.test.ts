import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { parseJsonc, MAX_NESTING } from "../../src/source/jsonc.js";
import { LineIndex } from "../../src/source/line-index.js";
import { spanOf } from "../../src/source/source-node.js";

function at(text: string, offset: number): string {
  const p = new LineIndex(text).position(offset);
  return `${p.line}:${p.column}`;
}

describe("parseJsonc", () => {
  it("agrees with JSON.parse on every JSON document", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 4 }), (value, indent) => {
        const text = JSON.stringify(value, null, indent);
        const parsed = parseJsonc(text);
        expect(parsed.problems).toEqual([]);
        expect(parsed.value).toStrictEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it("accepts // and /* */ comments, as the spec's jsonc examples use", () => {
    const text = '{\n  // a comment\n  "a": 1, /* inline */ "b": [true, null] // trailing\n}';
    const parsed = parseJsonc(text);
    expect(parsed.problems).toEqual([]);
    expect(parsed.value).toEqual({ a: 1, b: [true, null] });
  });

  it("keeps the span of every key and value", () => {
    const text = '{\n  "phases": [\n    { "id": "x", "timeout_ms": 500 }\n  ]\n}';
    const { root } = parseJsonc(text);
    const value = spanOf(root!, "/phases/0/timeout_ms");
    expect(text.slice(value.start, value.end)).toBe("500");
    expect(at(text, value.start)).toBe("3:32");
    const key = spanOf(root!, "/phases/0/timeout_ms", true);
    expect(text.slice(key.start, key.end)).toBe('"timeout_ms"');
  });

  it("reports a syntax error at its position, never throws", () => {
    const text = '{\n  "a": 1\n  "b": 2\n}';
    const parsed = parseJsonc(text);
    expect(parsed.value).toBeUndefined();
    expect(parsed.problems).toHaveLength(1);
    const p = parsed.problems[0]!;
    expect(p.rule).toBe("json/syntax");
    expect(p.message).toBe('expected "," between properties');
    expect(at(text, p.start)).toBe("3:3");
  });

  it.each([
    ['{"a": 1', /expected "," or "}"/],
    ['{"a": tru}', /unexpected word "tru"/],
    ["{'a': 1}", /property name in double quotes/],
    ['{"a": "x\ny"}', /unterminated string/],
    ['{"a": 01}', /invalid number/],
    ['{"a": 1} x', /after the end of the document/],
    ['{"a": /* open', /unterminated block comment/],
    ['{"a": "\\q"}', /invalid escape/],
    ['{"a": True}', /JSON has true, false and null/],
    ["{a: 1}", /property names must be in double quotes: "a"/],
  ])("explains %j", (text, message) => {
    const parsed = parseJsonc(text);
    expect(parsed.problems.map((p) => p.message).join("\n")).toMatch(message);
    expect(parsed.value).toBeUndefined();
  });

  it("reports duplicate keys at the second key, keeping the later value", () => {
    const text = '{"a": 1, "a": 2}';
    const parsed = parseJsonc(text);
    expect(parsed.value).toEqual({ a: 2 });
    expect(parsed.problems).toEqual([expect.objectContaining({ rule: "input/duplicate-key", start: 9, end: 12 })]);
  });

  it("warns about trailing commas but parses", () => {
    const parsed = parseJsonc('{"a": [1, 2,],}');
    expect(parsed.value).toEqual({ a: [1, 2] });
    expect(parsed.problems.map((p) => [p.rule, p.severity])).toEqual([
      ["json/trailing-comma", "warning"],
      ["json/trailing-comma", "warning"],
    ]);
  });

  it("keeps __proto__ and constructor as plain data", () => {
    const parsed = parseJsonc('{"__proto__": {"polluted": true}, "constructor": 1}');
    const value = parsed.value as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(["__proto__", "constructor"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("bounds nesting instead of overflowing the stack", () => {
    const deep = "[".repeat(100_000) + "]".repeat(100_000);
    const parsed = parseJsonc(deep);
    expect(parsed.problems[0]?.rule).toBe("input/too-deep");
    const ok = "[".repeat(MAX_NESTING) + "]".repeat(MAX_NESTING);
    expect(parseJsonc(ok).problems).toEqual([]);
  });

  it("never throws on arbitrary text", () => {
    const alphabet = fc.constantFrom(..."{}[]\":,/*\\ \n\tatrufelsn0123-.eE'#");
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: alphabet, maxLength: 60 })), (text) => {
        const parsed = parseJsonc(text);
        expect(parsed.problems.length > 0 || parsed.value !== undefined).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
