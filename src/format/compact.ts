/**
 * `file:line:col: severity: message [rule]`, one diagnostic per line and nothing else: the shape
 * gcc, eslint's unix format and actionlint print, which editors' problem matchers, grep and
 * `cut -d:` already understand. No summary line when piped: the exit code carries the verdict,
 * and a count would be one more line every consumer has to skip. On a terminal a person reads
 * it, and a clean run that printed nothing would look like a run that did nothing: one verdict
 * line ends it there.
 */
import type { Diagnostic, FileResult } from "../validator/diagnostic.js";
import { summarize } from "../validator/diagnostic.js";
import { messageWithSuggestion, singleLine, verdict } from "./text.js";

export function compactLine(file: string, d: Diagnostic): string {
  return `${singleLine(file)}:${d.line}:${d.column}: ${d.severity}: ${singleLine(messageWithSuggestion(d))} [${singleLine(d.rule)}]`;
}

/** Every diagnostic, one per line, in the order given (formatReport sorts by file, then position). */
export function formatCompact(results: readonly FileResult[], summaryLine?: { quiet: boolean; failure?: string }): string {
  const lines = results.flatMap((r) => r.diagnostics.map((d) => compactLine(r.file, d)));
  if (summaryLine) {
    const summary = summarize(results);
    if (!summaryLine.quiet || summary.errors > 0) lines.push(verdict(summary, summaryLine.failure));
  }
  return lines.length ? lines.join("\n") + "\n" : "";
}
