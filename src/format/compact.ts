/**
 * `file:line:col: severity: message [rule]`, one diagnostic per line and nothing else: the shape
 * editors' problem matchers, grep and `cut -d:` expect (gcc, eslint's unix format, actionlint).
 */
import type { Diagnostic, FileResult } from "../validator/diagnostic.js";

export function compactLine(file: string, d: Diagnostic): string {
  const suggestion = d.suggestion ? ` (${d.suggestion})` : "";
  return `${file}:${d.line}:${d.column}: ${d.severity}: ${oneLine(d.message)}${oneLine(suggestion)} [${d.rule}]`;
}

export function oneLine(text: string): string {
  return text.replace(/\r?\n/g, " ");
}

export function formatCompact(results: readonly FileResult[]): string {
  const lines: string[] = [];
  for (const r of results) for (const d of r.diagnostics) lines.push(compactLine(r.file, d));
  return lines.length ? lines.join("\n") + "\n" : "";
}
