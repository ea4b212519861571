/**
 * A YAML syntax error is reported once, at the line that is wrong, in words that say what to
 * change: the `yaml` package reports one mis-indented line as a cascade of errors, positioned at
 * the line before and at column 1.
 */
import fc from "fast-check";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parseSourceText } from "../../src/source/parse-text.js";
import { findMisindentedLine } from "../../src/source/yaml-indentation.js";

const HELLO = readFileSync("manifests/examples/hello.loop.yaml", "utf8");
/** hello.loop.yaml with line `n` (1-based) re-indented by `delta` spaces. */
function reindent(n: number, delta: number): string {
  const lines = HELLO.split("\n");
  const line = lines[n - 1]!;
  lines[n - 1] = delta > 0 ? " ".repeat(delta) + line : line.slice(-delta);
  return lines.join("\n");
}
function problems(text: string) {
  const source = parseSourceText("loop.yaml", text);
  return source.problems.map((p) => ({ rule: p.rule, ...source.lines.position(p.start), message: p.message }));
}
const lineOf = (text: string) => HELLO.split("\n").findIndex((l) => l.includes(text)) + 1;

describe("a mis-indented YAML line", () => {
  it("a key indented under a key that has a value: one error, at that line, naming the column to use", () => {
    const n = lineOf("kind: route");
    const found = problems(reindent(n, 2));
    expect(found).toEqual([
      { rule: "yaml/syntax", line: n, column: 7, message: `line ${n} is indented more than the key above it ("id" on line ${n - 1}), which already has a value: indent "kind" to column 5 like "id"` },
    ]);
  });

  it("a top-level key indented by one, after a blank line (the package points two lines up)", () => {
    const n = lineOf("phases:");
    const [only, ...rest] = problems(reindent(n, 1));
    expect(rest).toEqual([]);
    expect(only).toMatchObject({ line: n, column: 2 });
    expect(only!.message).toContain(`line ${n} is indented more than the key above it ("workspace_scope" on line ${n - 2})`);
  });

  it("a key that lines up with nothing: the columns it could mean, nearest first", () => {
    const n = lineOf("description: Read what");
    const found = problems(reindent(n, -2));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ line: n, column: 3 });
    expect(found[0]!.message).toBe(`line ${n} is indented to column 3, which lines up with no key above it: indent "description" to column 5 like "kind" on line ${n - 1}, or to column 1 like "phases" on line ${lineOf("phases:")}`);
  });

  it("the near miss: the same lines correctly indented, a plain scalar continued on a deeper line, a block scalar, a sequence at its key's column", () => {
    expect(problems(HELLO)).toEqual([]);
    const valid = ["a: one two", "  three four", "b: |", "    text: not a key", "      deeper: still text", "c:", "- x", "- y: 1", "  z: 2", "d:", "e: 1", ""].join("\n");
    expect(problems(valid)).toEqual([]);
    expect(findMisindentedLine(valid)).toBeUndefined();
  });

  it("never blames a line of a valid block document (property over generated documents)", () => {
    const key = fc.stringMatching(/^[a-z_][a-z0-9_ ]{0,8}$/);
    const leaf = fc.oneof(fc.string({ maxLength: 30 }), fc.integer(), fc.boolean(), fc.constant(null));
    const value = fc.letrec<{ node: unknown }>((tie) => ({
      node: fc.oneof({ depthSize: "small", withCrossShrink: true }, leaf, fc.array(tie("node"), { maxLength: 3 }), fc.dictionary(key, tie("node"), { maxKeys: 4 })),
    })).node;
    fc.assert(
      fc.property(fc.dictionary(key, value, { minKeys: 1, maxKeys: 4 }), fc.constantFrom(2, 3, 4), fc.boolean(), (doc, indent, indentSeq) => {
        const text = stringify(doc, { indent, indentSeq });
        expect(findMisindentedLine(text), text).toBeUndefined();
      }),
      { numRuns: 1500 },
    );
  });
});

describe("other YAML syntax errors: the first one, reworded", () => {
  it.each([
    ["a: [1, 2\nb: 3\n", 1, 4, 'this list is never closed: end it with "]"'],
    ['a: "x\nb: 3\n', 1, 4, 'this quoted string is never closed: add the closing "'],
    ["a:\n\tb: 1\n", 2, 1, "line 2 is indented with a tab: YAML indentation is spaces only"],
    ["a: b: c\n", 1, 4, 'a value on the same line as its key cannot be another "key: value"'],
    ["a: @x\n", 1, 4, "a plain value cannot start with @: quote the value"],
  ])("%j", (text, line, column, message) => {
    const found = problems(text);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ rule: "yaml/syntax", line, column });
    expect(found[0]!.message).toContain(message);
  });
});
