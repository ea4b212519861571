/**
 * The diagnostic model shared by the validator, its reporters, the runtime (which refuses an
 * invalid manifest with these) and the diagram tool. Its JSON shape is a public contract:
 * see docs/validator-json-format.md before changing a field.
 */

export type Severity = "error" | "warning" | "info";

export interface Diagnostic {
  severity: Severity;
  /** Stable rule id, e.g. `schema/unknown-property` or `pulse/closure-unknown-phase`. */
  rule: string;
  message: string;
  /** RFC 6901 JSON pointer to the offending node ("" is the document root). */
  pointer: string;
  /** 1-based line and column (UTF-16 code units) of the start of the offending key or value. */
  line: number;
  column: number;
  /** 1-based end position, exclusive (the character after the node), as SARIF defines it. */
  endLine: number;
  endColumn: number;
  /** A concrete fix, e.g. `did you mean "timeout_ms"?`. */
  suggestion?: string;
  /** Other places that explain this diagnostic (e.g. the manifest a connection points into). */
  related?: RelatedLocation[];
}

export interface RelatedLocation {
  file: string;
  line: number;
  column: number;
  message: string;
}

/** The outcome of validating one input (a file, or stdin under its `--stdin-filename`). */
export interface FileResult {
  file: string;
  /** True when no diagnostic of severity `error` remains. */
  valid: boolean;
  diagnostics: Diagnostic[];
  /** Source text, kept so reporters can print code frames. Never serialised. */
  text?: string;
}

export interface Summary {
  files: number;
  valid: number;
  invalid: number;
  errors: number;
  warnings: number;
  infos: number;
}

const severityRank: Record<Severity, number> = { error: 0, warning: 1, info: 2 };

export function compareDiagnostics(a: Diagnostic, b: Diagnostic): number {
  return (
    a.line - b.line ||
    a.column - b.column ||
    severityRank[a.severity] - severityRank[b.severity] ||
    (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0)
  );
}

export function summarize(results: readonly FileResult[]): Summary {
  const summary: Summary = { files: results.length, valid: 0, invalid: 0, errors: 0, warnings: 0, infos: 0 };
  for (const result of results) {
    if (result.valid) summary.valid++;
    else summary.invalid++;
    for (const d of result.diagnostics) {
      if (d.severity === "error") summary.errors++;
      else if (d.severity === "warning") summary.warnings++;
      else summary.infos++;
    }
  }
  return summary;
}
