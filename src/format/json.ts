/**
 * The json format: a public contract (docs/validator-json-format.md). Keys are written in a
 * fixed order; optional keys are omitted, never null; `text` is never serialised.
 */
import { summarize, type Diagnostic, type FileResult } from "../validator/diagnostic.js";

export const JSON_FORMAT_VERSION = 1;

function diagnostic(d: Diagnostic): Record<string, unknown> {
  const out: Record<string, unknown> = {
    severity: d.severity,
    rule: d.rule,
    message: d.message,
    pointer: d.pointer,
    line: d.line,
    column: d.column,
    endLine: d.endLine,
    endColumn: d.endColumn,
  };
  if (d.suggestion !== undefined) out.suggestion = d.suggestion;
  if (d.related?.length) out.related = d.related.map((r) => ({ file: r.file, line: r.line, column: r.column, message: r.message }));
  return out;
}

export function jsonReport(results: readonly FileResult[]): unknown {
  return {
    version: JSON_FORMAT_VERSION,
    files: results.map((r) => ({ file: r.file, valid: r.valid, diagnostics: r.diagnostics.map(diagnostic) })),
    summary: summarize(results),
  };
}

export function formatJson(results: readonly FileResult[]): string {
  return JSON.stringify(jsonReport(results), null, 2) + "\n";
}
