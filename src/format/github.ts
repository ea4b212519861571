/**
 * GitHub Actions: workflow-command annotations, then the compact lines (GitHub shows only about
 * ten annotations of each kind per step, so they can never be the only output), and a Markdown
 * summary for $GITHUB_STEP_SUMMARY.
 */
import { summarize, type Diagnostic, type FileResult } from "../validator/diagnostic.js";
import { formatCompact } from "./compact.js";
import type { Report } from "./report.js";

const COMMAND = { error: "error", warning: "warning", info: "notice" } as const;

export function escapeData(s: string): string {
  return s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

export function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

function annotation(file: string, d: Diagnostic): string {
  const props = [`file=${escapeProperty(file)}`, `line=${d.line}`, `col=${d.column}`, `endLine=${d.endLine}`, `endColumn=${d.endColumn}`, `title=${escapeProperty(d.rule)}`];
  const message = d.suggestion ? `${d.message} (${d.suggestion})` : d.message;
  return `::${COMMAND[d.severity]} ${props.join(",")}::${escapeData(message)}`;
}

function markdownCell(s: string): string {
  return s
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/\|/g, "\\|")
    .replace(/`/g, "\\`")
    .replace(/\r?\n/g, " ");
}

function stepSummary(results: readonly FileResult[]): string {
  const sum = summarize(results);
  const lines = [
    "### pulse-validate",
    "",
    sum.errors > 0 ? `**${sum.errors} error(s)**, ${sum.warnings} warning(s) in ${sum.files} file(s)` : `${sum.files} file(s) valid, ${sum.warnings} warning(s)`,
    "",
    "| file | valid | errors | warnings | infos |",
    "| --- | --- | --- | --- | --- |",
  ];
  for (const r of results) {
    const count = (s: string) => r.diagnostics.filter((d) => d.severity === s).length;
    lines.push(`| ${markdownCell(r.file)} | ${r.valid ? "yes" : "**no**"} | ${count("error")} | ${count("warning")} | ${count("info")} |`);
  }
  const all = results.flatMap((r) => r.diagnostics.map((d) => ({ file: r.file, d })));
  if (all.length) {
    lines.push("", "| location | severity | rule | message |", "| --- | --- | --- | --- |");
    for (const { file, d } of all) {
      const msg = d.suggestion ? `${d.message} (${d.suggestion})` : d.message;
      lines.push(`| ${markdownCell(`${file}:${d.line}:${d.column}`)} | ${d.severity} | ${markdownCell(d.rule)} | ${markdownCell(msg)} |`);
    }
  }
  return lines.join("\n") + "\n";
}

export function formatGithub(results: readonly FileResult[]): Report {
  const annotations = results.flatMap((r) => r.diagnostics.map((d) => annotation(r.file, d)));
  const stdout = (annotations.length ? annotations.join("\n") + "\n" : "") + formatCompact(results);
  return { stdout, stepSummary: stepSummary(results) };
}
