import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Ajv2020 } from "ajv/dist/2020.js";
import { formatReport } from "../../src/format/report.js";
import type { Diagnostic, FileResult } from "../../src/validator/diagnostic.js";
import { docResults } from "./doc-example.js";
import { OPTIONS, results } from "./fixtures.js";
import { fencedBlocks, readDoc } from "./markdown-blocks.js";

const json = (r: readonly FileResult[], quiet = false) => formatReport("json", r, { ...OPTIONS, quiet }).stdout;

const doc = readDoc("validator-json-format.md");
const jsonBlocks = fencedBlocks(doc).filter((b) => b.info === "json");
const schemaBlock = jsonBlocks.find((b) => b.body.includes('"$schema"'));
const validate = new Ajv2020({ strict: true, allErrors: true }).compile(JSON.parse(schemaBlock!.body));

function expectValid(doc: unknown): void {
  const ok = validate(doc);
  expect(validate.errors ?? [], JSON.stringify(validate.errors)).toEqual([]);
  expect(ok).toBe(true);
}

describe("json", () => {
  it("prints the documented document: fixed key order, 2-space indent, trailing newline", () => {
    expect(json(docResults())).toBe(`{
  "version": 1,
  "files": [
    {
      "file": "loops/escalation.yaml",
      "valid": true,
      "diagnostics": []
    },
    {
      "file": "loops/triage.yaml",
      "valid": false,
      "diagnostics": [
        {
          "severity": "warning",
          "rule": "pulse/missing-retrieve",
          "message": "the loop has no phase of kind \\"retrieve\\" (§3.2: every loop must read context from a substrate)",
          "pointer": "/phases",
          "line": 4,
          "column": 1,
          "endLine": 4,
          "endColumn": 7
        },
        {
          "severity": "error",
          "rule": "schema/enum",
          "message": "phases[0].kind must be one of retrieve, route, act, learn, consolidate, custom; found the string \\"retreive\\"",
          "pointer": "/phases/0/kind",
          "line": 6,
          "column": 11,
          "endLine": 6,
          "endColumn": 19,
          "suggestion": "did you mean \\"retrieve\\"?"
        },
        {
          "severity": "error",
          "rule": "schema/unknown-property",
          "message": "unknown property \\"timeout\\" in phases[0]",
          "pointer": "/phases/0/timeout",
          "line": 7,
          "column": 5,
          "endLine": 7,
          "endColumn": 12,
          "suggestion": "did you mean \\"timeout_ms\\"?"
        },
        {
          "severity": "error",
          "rule": "pulse/closure-unknown-phase",
          "message": "closure.to_phase names phase \\"gathr\\", which this loop does not declare (phases: gather, answer, learn)",
          "pointer": "/closure/to_phase",
          "line": 12,
          "column": 41,
          "endLine": 12,
          "endColumn": 46,
          "suggestion": "did you mean \\"gather\\"?"
        },
        {
          "severity": "info",
          "rule": "pulse/connection-external",
          "message": "connection refers to loop \\"support.escalation\\", which is not among the validated manifests (treated as external)",
          "pointer": "/connections/0/to_loop",
          "line": 17,
          "column": 72,
          "endLine": 17,
          "endColumn": 90
        }
      ]
    }
  ],
  "summary": {
    "files": 2,
    "valid": 1,
    "invalid": 1,
    "errors": 3,
    "warnings": 1,
    "infos": 1
  }
}
`);
  });

  it("includes related only when present, after suggestion, and never the source text", () => {
    const out = json(results());
    expect(out).not.toContain('"text"');
    expect(out).not.toContain("pulse_protocol_version");
    const parsed = JSON.parse(out);
    const bad = parsed.files.find((f: { file: string }) => f.file.startsWith("loops/"));
    const external = bad.diagnostics.find((d: Diagnostic) => d.rule === "pulse/connection-external");
    expect(Object.keys(external)).toEqual(["severity", "rule", "message", "pointer", "line", "column", "endLine", "endColumn", "related"]);
    expect(external.related).toEqual([{ file: "loops/ops.yaml", line: 0, column: 0, message: "loop ops.audit" }]);
    const withBoth = json([{ file: "a.yaml", valid: false, diagnostics: [{ ...external, suggestion: "did you mean x?" }] }]);
    expect(Object.keys(JSON.parse(withBoth).files[0].diagnostics[0]).slice(-2)).toEqual(["suggestion", "related"]);
    // The near miss: an empty related list is as good as none.
    const empty = JSON.parse(json([{ file: "a.yaml", valid: false, diagnostics: [{ ...external, related: [] }] }]));
    expect(empty.files[0].diagnostics[0]).not.toHaveProperty("related");
  });

  it("drops warnings and infos under quiet, and the summary counts what is shown", () => {
    const parsed = JSON.parse(json(results(), true));
    expect(parsed.summary).toEqual({ files: 5, valid: 1, invalid: 4, errors: 7, warnings: 0, infos: 0 });
    expect(parsed.files.flatMap((f: { diagnostics: Diagnostic[] }) => f.diagnostics.map((d) => d.severity))).toEqual(Array(7).fill("error"));
    expect(JSON.parse(json(results())).summary).toEqual({ files: 5, valid: 1, invalid: 4, errors: 7, warnings: 1, infos: 1 });
  });

  it("validates against the JSON Schema published in docs/validator-json-format.md", () => {
    expectValid(JSON.parse(json(results())));
    expectValid(JSON.parse(json(docResults())));
    expectValid(JSON.parse(json([])));
    for (const block of jsonBlocks.filter((b) => b !== schemaBlock && b.body.includes('"version": 1'))) expectValid(JSON.parse(block.body));
    // The schema has teeth: a null suggestion or an unknown severity is refused.
    const broken = JSON.parse(json(docResults()));
    broken.files[1].diagnostics[0].suggestion = null;
    expect(validate(broken)).toBe(false);
    broken.files[1].diagnostics[0] = { ...broken.files[1].diagnostics[1], severity: "fatal" };
    expect(validate(broken)).toBe(false);
  });

  it("round-trips any diagnostics exactly, except the source text (property)", () => {
    const diagnostic = fc.record(
      {
        severity: fc.constantFrom("error", "warning", "info"),
        rule: fc.constantFrom("schema/enum", "pulse/missing-act", "yaml/syntax"),
        message: fc.string({ unit: "binary" }),
        pointer: fc.array(fc.string().map((s) => "/" + s.replace(/~/g, "~0").replace(/\//g, "~1")), { maxLength: 3 }).map((p) => p.join("")),
        line: fc.nat(10_000),
        column: fc.nat(500),
        endLine: fc.nat(10_000),
        endColumn: fc.nat(500),
        suggestion: fc.string({ unit: "binary" }),
      },
      { requiredKeys: ["severity", "rule", "message", "pointer", "line", "column", "endLine", "endColumn"] },
    ) as fc.Arbitrary<Diagnostic>;
    const result = fc.record({ file: fc.string({ minLength: 1 }), valid: fc.boolean(), diagnostics: fc.array(diagnostic, { maxLength: 4 }), text: fc.string() });
    fc.assert(
      fc.property(fc.array(result, { maxLength: 4 }), (input) => {
        const parsed = JSON.parse(json(input));
        expectValid(parsed);
        const files = parsed.files as { file: string; diagnostics: Diagnostic[] }[];
        expect(files.map((f) => f.file).sort()).toEqual(input.map((r) => r.file).sort());
        const flat = (ds: readonly Diagnostic[]) => ds.map((d) => JSON.stringify(d, Object.keys(d).sort())).sort();
        expect(flat(files.flatMap((f) => f.diagnostics))).toEqual(flat(input.flatMap((r) => r.diagnostics)));
      }),
    );
  });
});
