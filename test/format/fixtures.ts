/**
 * Realistic validator results for the reporter tests: a clean file, a YAML manifest with errors,
 * warnings and an info (a tab and CJK text in the source, a multi-line span, suggestions, a
 * related location), a JSON file whose name needs escaping everywhere, a file-level problem
 * with no source text, and an empty file. Given out of path order on purpose.
 */
import type { FileResult } from "../../src/validator/diagnostic.js";
import type { ReportOptions } from "../../src/format/report.js";
import { RULES } from "../../src/validator/rule-catalog.js";

export const BAD_YAML = [
  'pulse_protocol_version: "0.1"',
  "loop_id: demo.bad",
  "phases:",
  "  - id: fetch",
  '    kind:\t"retreive"',
  "    timeout: 500",
  "  - id: 判断",
  "    kind: act",
  "closure: { from_phase: fetch, to_phase: nowhere }",
  "connections:",
  "  - { id: c1, emit_phase: fetch, token: OutcomeSignal, to_loop: ops.audit }",
  "",
].join("\n");

export const ODD_JSON = '{\n  "loop_id": "x.y"\n  "phases": []\n}\n';

export function results(): FileResult[] {
  return [
    {
      file: "loops/dir with space/bad,loop.yaml",
      valid: false,
      text: BAD_YAML,
      diagnostics: [
        {
          severity: "error",
          rule: "schema/enum",
          message: 'phases[0].kind must be one of retrieve, route, act, learn, consolidate, custom; found the string "retreive"',
          pointer: "/phases/0/kind",
          line: 5,
          column: 11,
          endLine: 5,
          endColumn: 21,
          suggestion: 'did you mean "retrieve"?',
        },
        {
          severity: "warning",
          rule: "pulse/missing-retrieve",
          message: 'the loop has no phase of kind "retrieve" (§3.2: every loop must read context from a substrate)',
          pointer: "/phases",
          line: 4,
          column: 3,
          endLine: 8,
          endColumn: 14,
        },
        {
          severity: "error",
          rule: "schema/unknown-property",
          message: 'unknown property "timeout" in phases[0]',
          pointer: "/phases/0/timeout",
          line: 6,
          column: 5,
          endLine: 6,
          endColumn: 12,
          suggestion: 'did you mean "timeout_ms"?',
        },
        {
          severity: "error",
          rule: "schema/pattern",
          message: 'phases[1].id must match ^[a-z0-9_]+$; found "判断"',
          pointer: "/phases/1/id",
          line: 7,
          column: 9,
          endLine: 7,
          endColumn: 11,
        },
        {
          severity: "error",
          rule: "pulse/closure-unknown-phase",
          message: 'closure.to_phase "nowhere" is not a phase: <fetch> & <判断> exist, 100% sure\nfix the `to_phase` | or add the phase',
          pointer: "/closure/to_phase",
          line: 9,
          column: 41,
          endLine: 9,
          endColumn: 48,
        },
        {
          severity: "info",
          rule: "pulse/connection-external",
          message: 'connection c1 targets loop "ops.audit", which was not given: not checked',
          pointer: "/connections/0/to_loop",
          line: 11,
          column: 65,
          endLine: 11,
          endColumn: 74,
          related: [{ file: "loops/ops.yaml", line: 0, column: 0, message: "loop ops.audit" }],
        },
      ],
    },
    { file: "manifests/ok.yaml", valid: true, diagnostics: [], text: "loop_id: ok.loop\n" },
    {
      file: "odd:name%.json",
      valid: false,
      text: ODD_JSON,
      diagnostics: [
        {
          severity: "error",
          rule: "json/syntax",
          message: "expected ',' or '}' after a property value, found '\"'",
          pointer: "",
          line: 3,
          column: 3,
          endLine: 3,
          endColumn: 4,
        },
      ],
    },
    {
      file: "unreadable.yaml",
      valid: false,
      diagnostics: [{ severity: "error", rule: "input/encoding", message: "the file is not valid UTF-8 text", pointer: "", line: 0, column: 0, endLine: 0, endColumn: 0 }],
    },
    {
      file: "empty.yaml",
      valid: false,
      text: "",
      diagnostics: [{ severity: "error", rule: "input/empty", message: "the file is empty", pointer: "", line: 1, column: 1, endLine: 1, endColumn: 2 }],
    },
  ];
}

export const OPTIONS: ReportOptions = {
  color: false,
  toolVersion: "0.1.0",
  rules: RULES.map((r) => ({ id: r.id, summary: r.summary, explanation: r.explanation, defaultSeverity: r.severity })),
};
