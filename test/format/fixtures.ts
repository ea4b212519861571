import type { FileResult } from "../../src/validator/diagnostic.js";

export const TEXT = 'phases:\n  - id: fetch\n\tkind: "retreive"\n    timeout: 500\n';

/** Realistic results: a valid file, one with errors and warnings, one without source text. */
export function results(): FileResult[] {
  return [
    { file: "ok.yaml", valid: true, diagnostics: [], text: "a: 1\n" },
    {
      file: "dir with space/bad,one.yaml",
      valid: false,
      text: TEXT,
      diagnostics: [
        {
          severity: "error",
          rule: "schema/enum",
          message: 'phases[0].kind must be one of retrieve, act; found the string "retreive"',
          pointer: "/phases/0/kind",
          line: 3,
          column: 8,
          endLine: 3,
          endColumn: 18,
          suggestion: 'did you mean "retrieve"?',
        },
        {
          severity: "warning",
          rule: "pulse/missing-act",
          message: "50% <done> & more: a, b\nsecond line",
          pointer: "/phases",
          line: 1,
          column: 1,
          endLine: 4,
          endColumn: 17,
        },
        { severity: "info", rule: "pulse/connection-external", message: "κ-routing target ✓", pointer: "/x", line: 4, column: 5, endLine: 4, endColumn: 12 },
      ],
    },
    { file: "empty.json", valid: false, diagnostics: [{ severity: "error", rule: "input/empty", message: "the file is empty", pointer: "", line: 1, column: 1, endLine: 1, endColumn: 2 }] },
  ];
}
