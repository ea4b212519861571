/**
 * The terminal format: each diagnostic with a code frame (the line before, the offending line,
 * a caret under the exact span) and its suggestion, then a one-line summary.
 */
import { summarize, type Diagnostic, type FileResult } from "../validator/diagnostic.js";
import { style, type Style } from "./ansi.js";
import type { ReportOptions } from "./report.js";

const TAB = 4;
const MAX_WIDTH = 160;

/** Expands tabs to tab stops; returns the display text and the display column of each character. */
function expandTabs(line: string): { text: string; at: (column: number) => number } {
  let text = "";
  const columns: number[] = [];
  for (const ch of line) {
    for (let i = 0; i < ch.length; i++) columns.push(text.length);
    text += ch === "\t" ? " ".repeat(TAB - (text.length % TAB)) : ch;
  }
  columns.push(text.length);
  return { text, at: (column) => columns[Math.min(Math.max(column - 1, 0), columns.length - 1)] as number };
}

function lineOf(text: string, line: number): string | undefined {
  let start = 0;
  for (let i = 1; i < line; i++) {
    const next = text.indexOf("\n", start);
    if (next < 0) return undefined;
    start = next + 1;
  }
  const end = text.indexOf("\n", start);
  return text.slice(start, end < 0 ? text.length : end).replace(/\r$/, "");
}

export function codeFrame(text: string, d: Diagnostic, s: Style): string[] {
  const line = lineOf(text, d.line);
  if (line === undefined) return [];
  const gutterWidth = String(d.line).length;
  const gutter = (n: number | "") => s.dim(`${String(n).padStart(gutterWidth)} |`);
  const out: string[] = [];
  const before = d.line > 1 ? lineOf(text, d.line - 1) : undefined;
  const current = expandTabs(line);
  const start = current.at(d.column);
  const end = d.endLine === d.line ? Math.max(current.at(d.endColumn), start + 1) : Math.max(current.text.length, start + 1);
  // Window long lines around the span so the caret stays on screen.
  const offset = current.text.length > MAX_WIDTH && start > MAX_WIDTH / 2 ? start - 40 : 0;
  const clip = (t: string) => {
    const body = t.slice(offset, offset + MAX_WIDTH);
    return (offset > 0 ? "…" : "") + body + (t.length > offset + MAX_WIDTH ? "…" : "");
  };
  if (before !== undefined && before.trim() !== "") out.push(`  ${gutter(d.line - 1)} ${clip(expandTabs(before).text)}`);
  out.push(`${s.bold(">")} ${gutter(d.line)} ${clip(current.text)}`);
  const pad = " ".repeat(start - offset + (offset > 0 ? 1 : 0));
  const width = Math.max(1, Math.min(end, offset + MAX_WIDTH) - start);
  const color = d.severity === "error" ? s.red : d.severity === "warning" ? s.yellow : s.cyan;
  out.push(`  ${gutter("")} ${pad}${color("^" + "~".repeat(width - 1))}`);
  return out;
}

function severityLabel(d: Diagnostic, s: Style): string {
  if (d.severity === "error") return s.red("error");
  if (d.severity === "warning") return s.yellow("warning");
  return s.cyan("info");
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

export function formatPretty(results: readonly FileResult[], options: ReportOptions): string {
  const s = style(options.color);
  const out: string[] = [];
  for (const r of results) {
    for (const d of r.diagnostics) {
      out.push(`${s.bold(`${r.file}:${d.line}:${d.column}`)}  ${severityLabel(d, s)}  ${d.message}  ${s.dim(`[${d.rule}]`)}`);
      if (r.text !== undefined && r.text !== "") out.push(...codeFrame(r.text, d, s));
      if (d.suggestion) out.push(`      ${s.green(d.suggestion)}`);
      for (const rel of d.related ?? []) out.push(`      ${s.dim(`${rel.file}:${rel.line}:${rel.column}: ${rel.message}`)}`);
      out.push("");
    }
  }
  const sum = summarize(results);
  const problems = [plural(sum.errors, "error"), plural(sum.warnings, "warning"), ...(sum.infos ? [plural(sum.infos, "info")] : [])].join(", ");
  if (sum.errors > 0) {
    out.push(s.red(`✖ ${problems} in ${plural(sum.files, "file")} (${sum.valid} valid)`));
  } else if (sum.warnings > 0 || sum.infos > 0) {
    out.push(s.yellow(`✔ ${plural(sum.files, "file")} valid, with ${problems}`));
  } else {
    out.push(s.green(`✔ ${plural(sum.files, "file")} valid`));
  }
  return out.join("\n") + "\n";
}
