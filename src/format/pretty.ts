/**
 * The terminal format: each diagnostic with a code frame (the line before, the offending line,
 * a caret under the exact span) and its suggestion, then a one-line verdict. Clean files print
 * nothing of their own: they only count in the verdict.
 */
import { summarize, type Diagnostic, type FileResult } from "../validator/diagnostic.js";
import { LineIndex } from "../source/line-index.js";
import { style, type Style } from "./ansi.js";
import { codeFrame } from "./code-frame.js";
import { location, printable, singleLine, verdict } from "./text.js";

export interface PrettyOptions {
  color: boolean;
  /** Under --quiet a run without errors prints nothing at all, not even the verdict. */
  quiet?: boolean;
  /** Why the run fails beyond its errors (see ReportOptions.failure). */
  failure?: string;
}

function severityLabel(d: Diagnostic, s: Style): string {
  if (d.severity === "error") return s.bold(s.red("error"));
  if (d.severity === "warning") return s.bold(s.yellow("warning"));
  return s.bold(s.cyan("info"));
}

function diagnosticBlock(result: FileResult, lines: LineIndex | undefined, d: Diagnostic, s: Style): string[] {
  const where = s.bold(location(singleLine(result.file), d.line, d.column));
  // A multi-line message keeps the rule on the header line; the rest follows, indented.
  const [first = "", ...rest] = printable(d.message).split(/\r\n|[\r\n\u2028\u2029]/);
  const out = [`${where}  ${severityLabel(d, s)}  ${first}  ${s.dim(`[${singleLine(d.rule)}]`)}`, ...rest.map((l) => `    ${l}`)];
  if (lines) out.push(...codeFrame(lines, d, s));
  if (d.suggestion) out.push(`  ${s.green(singleLine(d.suggestion))}`);
  for (const r of d.related ?? []) {
    out.push(`  ${s.dim(`note: ${singleLine(r.message)} at ${location(singleLine(r.file), r.line, r.column)}`)}`);
  }
  return out;
}

export function formatPretty(results: readonly FileResult[], options: PrettyOptions): string {
  const s = style(options.color);
  const out: string[] = [];
  for (const r of results) {
    if (r.diagnostics.length === 0) continue;
    const lines = r.text ? new LineIndex(r.text) : undefined;
    for (const d of r.diagnostics) out.push(...diagnosticBlock(r, lines, d, s), "");
  }
  const summary = summarize(results);
  if (options.quiet && summary.errors === 0) return "";
  const line = verdict(summary, options.failure);
  out.push(summary.errors > 0 || options.failure ? s.red(line) : summary.warnings > 0 ? s.yellow(line) : s.green(line));
  return out.join("\n") + "\n";
}
