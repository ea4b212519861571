import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { FORMAT_NAMES, formatReport, type FormatName } from "../../src/format/report.js";
import type { Diagnostic, FileResult } from "../../src/validator/diagnostic.js";
import { docResults, TRIAGE_YAML } from "./doc-example.js";
import { OPTIONS, results } from "./fixtures.js";
import { exampleBlock, fencedBlocks, readDoc } from "./markdown-blocks.js";
import { parseXml } from "./xml-check.js";

describe("formatReport", () => {
  it("offers the six formats; github has a step summary, and the others when asked for one", () => {
    expect([...FORMAT_NAMES]).toEqual(["pretty", "compact", "json", "sarif", "github", "junit"]);
    const github = formatReport("github", results(), OPTIONS).stepSummary;
    for (const format of FORMAT_NAMES) {
      const report = formatReport(format, results(), OPTIONS);
      expect(report.stdout.endsWith("\n"), format).toBe(true);
      expect(report.stepSummary !== undefined, format).toBe(format === "github");
      // Under GitHub Actions every format writes the same summary (`-f sarif -o x.sarif` too).
      expect(formatReport(format, results(), { ...OPTIONS, stepSummary: true }).stepSummary, format).toBe(github);
    }
    expect(() => formatReport("xml" as FormatName, results(), OPTIONS)).toThrow(/unknown report format "xml"/);
  });

  it("does not change the caller's results", () => {
    const input = results();
    const before = JSON.stringify(input);
    for (const format of FORMAT_NAMES) formatReport(format, input, { ...OPTIONS, quiet: true });
    expect(JSON.stringify(input)).toBe(before);
  });

  it("never throws, and keeps every format parseable, for any results (property)", () => {
    const text = fc.string({ unit: "binary", maxLength: 30 });
    const diagnostic: fc.Arbitrary<Diagnostic> = fc.record({
      severity: fc.constantFrom("error" as const, "warning" as const, "info" as const),
      rule: fc.oneof(fc.constantFrom("schema/enum", "yaml/syntax"), text),
      message: text,
      pointer: fc.constant(""),
      line: fc.integer({ min: 0, max: 6 }),
      column: fc.integer({ min: 0, max: 400 }),
      endLine: fc.integer({ min: 0, max: 6 }),
      endColumn: fc.integer({ min: 0, max: 400 }),
    });
    const result: fc.Arbitrary<FileResult> = fc.record(
      { file: fc.string({ unit: "binary", minLength: 1, maxLength: 20 }), valid: fc.boolean(), diagnostics: fc.array(diagnostic, { maxLength: 3 }), text: fc.string({ unit: "binary", maxLength: 400 }) },
      { requiredKeys: ["file", "valid", "diagnostics"] },
    );
    fc.assert(
      fc.property(fc.array(result, { maxLength: 3 }), fc.boolean(), fc.boolean(), (input, color, quiet) => {
        const options = { ...OPTIONS, color, quiet };
        const count = input.flatMap((r) => r.diagnostics).filter((d) => !quiet || d.severity === "error").length;
        expect(JSON.parse(formatReport("json", input, options).stdout).files).toHaveLength(input.length);
        expect(JSON.parse(formatReport("sarif", input, options).stdout).runs[0].results).toHaveLength(count);
        expect(parseXml(formatReport("junit", input, options).stdout).name).toBe("testsuites");
        const compact = formatReport("compact", input, options).stdout;
        expect(compact === "" ? 0 : compact.split("\n").length - 1).toBe(count);
        const pretty = formatReport("pretty", input, options).stdout;
        if (!color) expect(pretty).not.toMatch(/\u001b/);
        formatReport("github", input, options);
      }),
      { numRuns: 200 },
    );
  });
});

describe("docs/validator-formats.md", () => {
  const doc = readDoc("validator-formats.md");
  const used = new Set(docResults().flatMap((r) => r.diagnostics.map((d) => d.rule)));
  const abridged = { ...OPTIONS, rules: OPTIONS.rules.filter((r) => used.has(r.id)) };

  it("shows the manifest its examples come from", () => {
    expect(fencedBlocks(doc).find((b) => b.info === "yaml")!.body).toBe(TRIAGE_YAML);
  });

  it.each(["pretty", "compact", "json", "github", "junit"] as const)("shows real %s output", (format) => {
    expect(exampleBlock(doc, format)).toBe(formatReport(format, docResults(), OPTIONS).stdout);
  });

  it("shows the real step summary and SARIF log (rules[] abridged to the rules reported)", () => {
    expect(exampleBlock(doc, "github-summary")).toBe(formatReport("github", docResults(), OPTIONS).stepSummary);
    expect(exampleBlock(doc, "sarif")).toBe(formatReport("sarif", docResults(), abridged).stdout);
  });

  it("has a section for every format", () => {
    for (const format of FORMAT_NAMES) expect(doc).toContain(`\n## ${format}\n`);
  });
});
