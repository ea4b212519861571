import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { parseYaml, MAX_EXPANDED_NODES } from "../../src/source/yaml-source.js";
import { LineIndex } from "../../src/source/line-index.js";
import { spanOf } from "../../src/source/source-node.js";

const pos = (text: string, offset: number): string => {
  const p = new LineIndex(text).position(offset);
  return `${p.line}:${p.column}`;
};

describe("parseYaml", () => {
  it("builds the value and positions for keys and values", () => {
    const text = "loop_id: a.b\nphases:\n  - id: fetch\n    timeout_ms: 500\n";
    const parsed = parseYaml(text);
    expect(parsed.problems).toEqual([]);
    expect(parsed.value).toEqual({ loop_id: "a.b", phases: [{ id: "fetch", timeout_ms: 500 }] });
    const value = spanOf(parsed.root!, "/phases/0/timeout_ms");
    expect(text.slice(value.start, value.end)).toBe("500");
    expect(pos(text, value.start)).toBe("4:17");
    const key = spanOf(parsed.root!, "/phases/0/timeout_ms", true);
    expect(pos(text, key.start)).toBe("4:5");
  });

  it("stops at syntax errors with their position", () => {
    const text = "a: 1\nb: [1, 2\nc: 3\n";
    const parsed = parseYaml(text);
    expect(parsed.value).toBeUndefined();
    expect(parsed.problems.length).toBeGreaterThan(0);
    expect(parsed.problems.every((p) => p.rule === "yaml/syntax")).toBe(true);
    expect(parsed.problems[0]!.message).not.toMatch(/at line/);
  });

  it("refuses alias bombs within a bounded budget", () => {
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 10; i++) {
      const prev = String.fromCharCode(96 + i);
      const next = String.fromCharCode(97 + i);
      levels.push(`${next}: &${next} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`);
    }
    const started = performance.now();
    const parsed = parseYaml(levels.join("\n"));
    expect(performance.now() - started).toBeLessThan(5000);
    expect(parsed.value).toBeUndefined();
    expect(parsed.problems).toEqual([expect.objectContaining({ rule: "input/too-complex" })]);
    expect(parsed.problems[0]!.message).toContain(String(MAX_EXPANDED_NODES));
  });

  it("expands ordinary aliases and merge keys, explicit keys winning", () => {
    const text = "base: &base { timeout_ms: 500, on_failure: retry }\nphase:\n  <<: *base\n  on_failure: skip\n";
    const parsed = parseYaml(text);
    expect(parsed.problems).toEqual([]);
    expect((parsed.value as { phase: unknown }).phase).toEqual({ timeout_ms: 500, on_failure: "skip" });
  });

  it("refuses recursive aliases", () => {
    const parsed = parseYaml("a: &a\n  b: *a\n");
    expect(parsed.problems.map((p) => p.rule)).toEqual(["yaml/recursive-alias"]);
  });

  it("reports duplicate keys (with positions) and not merged ones", () => {
    const text = "a: 1\nb: 2\na: 3\n";
    const parsed = parseYaml(text);
    expect(parsed.problems).toHaveLength(1);
    expect(parsed.problems[0]).toMatchObject({ rule: "input/duplicate-key", severity: "error" });
    expect(pos(text, parsed.problems[0]!.start)).toBe("3:1");
    expect(parseYaml("x: &x {a: 1}\ny:\n  <<: *x\n  a: 2\n").problems).toEqual([]);
  });

  it("keeps __proto__ as an own key and never pollutes prototypes", () => {
    const parsed = parseYaml("__proto__:\n  polluted: true\nconstructor: 1\n");
    const value = parsed.value as object;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(["__proto__", "constructor"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("refuses values JSON cannot hold, accepts the near miss", () => {
    expect(parseYaml("a: !!binary aGVsbG8=\n").problems.map((p) => p.rule)).toEqual(["yaml/non-json-value"]);
    // Infinity is a number the published schema accepts (the validator warns: pulse/number-not-finite).
    expect(parseYaml("a: .inf\nb: 1e400\n")).toMatchObject({ problems: [], value: { a: Infinity, b: Infinity } });
    expect(parseYaml("a: 1e308\n").problems).toEqual([]);
    expect(parseYaml("? [a, b]\n: 1\n").problems.map((p) => p.rule)).toEqual(["yaml/complex-key"]);
    // An explicit key is fine as long as it is a plain string.
    expect(parseYaml("? a\n: 1\n")).toMatchObject({ problems: [], value: { a: 1 } });
  });

  it("bounds nesting at 256 levels, however deep the document goes", () => {
    const flow = (n: number) => "a: " + "[".repeat(n) + "]".repeat(n) + "\n";
    const block = (n: number) => "- ".repeat(n) + "x\n";
    expect(parseYaml(flow(255)).problems).toEqual([]);
    expect(parseYaml(block(256)).problems).toEqual([]);
    // Deep enough to exhaust the YAML package's stack, too: still input/too-deep, not a stack message.
    for (const text of [flow(257), flow(400), flow(5000), block(257), block(5000), "a: " + "{a: ".repeat(5000) + "1" + "}".repeat(5000)]) {
      const parsed = parseYaml(text);
      expect(parsed.value).toBeUndefined();
      expect(parsed.problems.map((p) => [p.rule, p.message])).toEqual([["input/too-deep", "nesting deeper than 256 levels"]]);
    }
  });

  it("refuses a second document, pointing at where it starts", () => {
    const text = "loop_id: a\n---\nloop_id: b\n";
    const parsed = parseYaml(text);
    expect(parsed.value).toBeUndefined();
    expect(parsed.problems).toEqual([
      { rule: "yaml/syntax", message: `a manifest is one YAML document, but a second one starts at line 2 with "---"`, start: 11, end: 14, severity: "error" },
    ]);
    expect(parseYaml("a: 1\n...\nb: 2\n").problems.map((p) => [p.message, pos("a: 1\n...\nb: 2\n", p.start)])).toEqual([
      [`a manifest is one YAML document, but a second one starts at line 3 after "..."`, "3:1"],
    ]);
    // A leading "---" and a closing "..." frame the one document.
    expect(parseYaml("---\nloop_id: a\n...\n")).toMatchObject({ problems: [], value: { loop_id: "a" } });
  });

  it("never throws on arbitrary text", () => {
    const alphabet = fc.constantFrom(..."ab:-*&!<>|[]{}?#'\",. \n\t0");
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: alphabet, maxLength: 80 })), (text) => {
        parseYaml(text);
      }),
      { numRuns: 1500 },
    );
  });
});

describe("YAML parser warnings", () => {
  it("passes unknown tags through as yaml/warning, plain values without", () => {
    expect(parseYaml("a: !foo bar\n").problems.map((p) => [p.rule, p.severity])).toEqual([["yaml/warning", "warning"]]);
    expect(parseYaml("a: bar\n").problems).toEqual([]);
  });
});
