/**
 * The json format, a public contract (docs/validator-json-format.md): keys in a fixed order,
 * optional keys omitted rather than null, the source text never serialised. Changes within
 * version 1 are additive only.
 */
import { summarize, type Diagnostic, type FileResult, type RelatedLocation, type Summary } from "../validator/diagnostic.js";

export const JSON_FORMAT_VERSION = 1;

export interface JsonDiagnostic {
  severity: Diagnostic["severity"];
  rule: string;
  message: string;
  pointer: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  suggestion?: string;
  related?: RelatedLocation[];
}

export interface JsonReport {
  version: typeof JSON_FORMAT_VERSION;
  files: { file: string; valid: boolean; diagnostics: JsonDiagnostic[] }[];
  summary: Summary;
}

/** Built key by key, never spread, so the order is the documented one whatever the input holds. */
function diagnostic(d: Diagnostic): JsonDiagnostic {
  const out: JsonDiagnostic = {
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

export function jsonReport(results: readonly FileResult[]): JsonReport {
  const s = summarize(results);
  return {
    version: JSON_FORMAT_VERSION,
    files: results.map((r) => ({ file: r.file, valid: r.valid, diagnostics: r.diagnostics.map(diagnostic) })),
    summary: { files: s.files, valid: s.valid, invalid: s.invalid, errors: s.errors, warnings: s.warnings, infos: s.infos },
  };
}

export function formatJson(results: readonly FileResult[]): string {
  return JSON.stringify(jsonReport(results), null, 2) + "\n";
}
