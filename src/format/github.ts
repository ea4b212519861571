/**
 * GitHub Actions: one workflow-command annotation per diagnostic, then the compact lines (GitHub
 * shows only about ten annotations of each kind per step, so they can never be the only
 * output). The Markdown step summary that goes with it is step-summary.ts.
 */
import type { Diagnostic, FileResult } from "../validator/diagnostic.js";
import { formatCompact } from "./compact.js";
import { messageWithSuggestion, printable } from "./text.js";

const COMMAND = { error: "error", warning: "warning", info: "notice" } as const;

/** Workflow-command data (the text after `::`). */
export function escapeData(s: string): string {
  return s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

/** Workflow-command property values, where `,` separates properties and `:` ends them. */
export function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

/**
 * The position properties in the documented order. The runner drops columns unless the span
 * stays on one line, so a multi-line span gives lines only; a file-level diagnostic (line 0)
 * gives no position at all and annotates the file.
 */
function position(d: Diagnostic): string[] {
  if (d.line < 1) return [];
  const endLine = Math.max(d.endLine, d.line);
  if (endLine !== d.line || d.column < 1) return [`line=${d.line}`, `endLine=${endLine}`];
  return [`line=${d.line}`, `col=${d.column}`, `endLine=${endLine}`, `endColumn=${Math.max(d.endColumn, d.column + 1)}`];
}

export function annotation(file: string, d: Diagnostic): string {
  const props = [`file=${escapeProperty(printable(file))}`, ...position(d), `title=${escapeProperty(printable(d.rule))}`];
  return `::${COMMAND[d.severity]} ${props.join(",")}::${escapeData(printable(messageWithSuggestion(d)))}`;
}

export function formatGithub(results: readonly FileResult[]): string {
  const annotations = results.flatMap((r) => r.diagnostics.map((d) => annotation(r.file, d)));
  return (annotations.length ? annotations.join("\n") + "\n" : "") + formatCompact(results);
}
