/**
 * YAML nesting is bounded while parsing: a deep document is refused before the `yaml` package
 * builds it (1 MiB of `[[[[` cost it seconds and hundreds of megabytes), and the pre-scan never
 * refuses a document whose real nesting is within the limit.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseDocument, stringify } from "yaml";
import { MAX_NESTING, parseJsonc } from "../../src/source/jsonc.js";
import { excessiveYamlNesting } from "../../src/source/yaml-depth.js";
import { parseYaml } from "../../src/source/yaml-source.js";

const KiB = 1024;
const time = (fn: () => void) => {
  const t = performance.now();
  fn();
  return performance.now() - t;
};

describe("deep YAML", () => {
  it.each([
    ["flow sequences", (n: number) => "a: " + "[".repeat(n) + "]".repeat(n)],
    ["flow mappings", (n: number) => "a: " + "{a: ".repeat(n) + "}".repeat(n)],
    ["compact block sequences", (n: number) => "- ".repeat(n) + "x\n"],
    ["unclosed brackets", (n: number) => "a: " + "[".repeat(n)],
  ])("%s: 256 KiB are refused as input/too-deep at a tenth of the time the yaml package alone takes", (_, make) => {
    const text = make(128 * KiB);
    let problems: { rule: string; start: number }[] = [];
    const ours = time(() => (problems = parseYaml(text).problems));
    expect(problems).toHaveLength(1);
    expect(problems[0]!.rule).toBe("input/too-deep");
    // Positioned at the bracket or dash that goes one level too deep, near the start.
    expect(problems[0]!.start).toBeLessThan(1100);
    const library = time(() => parseDocument(text));
    expect(ours).toBeLessThan(library / 10);
  });

  it("refuses as fast as the JSON parser does on the same nesting (measured in the same run)", () => {
    const n = 512 * KiB;
    const json = time(() => parseJsonc("[".repeat(n) + "]".repeat(n)));
    const yaml = time(() => parseYaml("[".repeat(n) + "]".repeat(n)));
    expect(yaml).toBeLessThan(Math.max(json * 20, 50));
  });

  it("the near miss: 256 levels of flow or compact nesting are accepted", () => {
    expect(parseYaml("a: " + "[".repeat(255) + "]".repeat(255) + "\n").problems).toEqual([]);
    expect(parseYaml("- ".repeat(256) + "x\n").problems).toEqual([]);
  });

  it("does not count brackets inside quotes, comments, block scalars or plain scalars", () => {
    const many = "[".repeat(400);
    for (const text of [`a: "${many}"\n`, `a: '${many}'\n`, `a: x # ${many}\n`, `a: |\n  ${many}\n  ${many}\nb: 1\n`, `a: x${many}\n`, `a: >-\n\n   ${many}\n`]) {
      expect(excessiveYamlNesting(text), text.slice(0, 20)).toBe(-1);
    }
  });

  it("never refuses what the walker accepts: any document within the limit, in any style (property)", () => {
    const text = fc.string({ unit: fc.constantFrom("[", "]", "{", "}", "#", "'", '"', "\n", ":", " ", "-", "|", ">", "&", "!", "a", ",", "\\") , maxLength: 12 });
    const leaf = fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null));
    const value = fc.letrec<{ node: unknown }>((tie) => ({
      node: fc.oneof({ depthSize: "small", withCrossShrink: true }, leaf, fc.array(tie("node"), { maxLength: 3 }), fc.dictionary(text, tie("node"), { maxKeys: 3 })),
    })).node;
    fc.assert(
      fc.property(value, fc.constantFrom<"any" | "block" | "flow">("any", "block", "flow"), fc.constantFrom<"PLAIN" | "QUOTE_DOUBLE" | "QUOTE_SINGLE" | "BLOCK_LITERAL">("PLAIN", "QUOTE_DOUBLE", "QUOTE_SINGLE", "BLOCK_LITERAL"), (v, collectionStyle, defaultStringType) => {
        const doc = stringify({ v }, { collectionStyle, defaultStringType });
        // The scan is a lower bound: a document no deeper than 3 is never refused at a limit of 3.
        if (depthOf({ v }) <= 3) expect(excessiveYamlNesting(doc, 3)).toBe(-1);
        // At the real limit, anything the walker accepts passes the pre-scan.
        if (parseYaml(doc).problems.every((p) => p.rule !== "input/too-deep")) expect(excessiveYamlNesting(doc)).toBe(-1);
      }),
      { numRuns: Number(process.env.YAML_RUNS ?? 1500) },
    );
  });

  it("a colon that starts a plain scalar in flow context opens no quote (found by the property)", () => {
    // `:'` is a plain key, so the quote after it opens nothing and `'"['` is a quoted key.
    expect(excessiveYamlNesting(`{ v: { "": { :': "", '"[': null } } }\n`, 3)).toBe(-1);
    // The near miss: after a quoted key, `:` is a value indicator even without a space.
    expect(excessiveYamlNesting(`{ "a":'[[[[' }\n`, 3)).toBe(-1);
    expect(excessiveYamlNesting(`{ "a":[[[[]]]] }\n`, 3)).toBeGreaterThan(0);
  });

  it("finds deep nesting hidden after quotes and comments", () => {
    const deep = "[".repeat(MAX_NESTING + 1);
    expect(excessiveYamlNesting(`a: "q[" # [[\nb: ${deep}`)).toBeGreaterThan(0);
    expect(excessiveYamlNesting(`a: |\n  text\nb: ${deep}`)).toBeGreaterThan(0);
  });
});

function depthOf(v: unknown): number {
  if (v === null || typeof v !== "object") return 0;
  const children = Array.isArray(v) ? v : Object.values(v as object);
  return 1 + Math.max(0, ...children.map(depthOf));
}
