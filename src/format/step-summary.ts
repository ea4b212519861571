/**
 * The Markdown GitHub shows on the run's summary page: the verdict, a table of files with their
 * counts, then every diagnostic as a list item. Manifest content reaches the messages, so all
 * text is escaped: HTML as entities, Markdown punctuation with backslashes, pipes for tables.
 */
import { summarize, type FileResult } from "../validator/diagnostic.js";
import { ruleHelpUri } from "./links.js";
import { countBySeverity, location, messageWithSuggestion, plural, singleLine, verdict } from "./text.js";

/** GitHub refuses step summaries over 1 MiB; stay well below it and say what was left out. */
export const SUMMARY_BUDGET_BYTES = 900_000;

const ENTITY: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };

/** Inline Markdown that renders as exactly this text. */
export function markdownText(s: string): string {
  return singleLine(s).replace(/[\\`*_[\]~|<>&]/g, (ch) => ENTITY[ch] ?? `\\${ch}`);
}

/** A code span that survives backticks in its content; pipes escaped when it sits in a table. */
export function codeSpan(s: string, inTable = false): string {
  const text = singleLine(s);
  const longest = Math.max(0, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  const pad = text.startsWith("`") || text.endsWith("`") || (text.startsWith(" ") && text.endsWith(" ")) ? " " : "";
  return `${fence}${pad}${inTable ? text.replace(/\|/g, "\\|") : text}${pad}${fence}`;
}

/** Appends lines while they fit in the budget; returns how many did not. */
function fill(out: string[], lines: readonly string[], budget: { bytes: number }): number {
  for (let i = 0; i < lines.length; i++) {
    const size = Buffer.byteLength(lines[i] as string, "utf8") + 1;
    if (size > budget.bytes) return lines.length - i;
    budget.bytes -= size;
    out.push(lines[i] as string);
  }
  return 0;
}

export function stepSummary(results: readonly FileResult[], failure?: string): string {
  const budget = { bytes: SUMMARY_BUDGET_BYTES };
  const out: string[] = [];
  fill(out, ["### pulse-validate", "", markdownText(verdict(summarize(results), failure)), ""], budget);
  if (results.length === 0) return out.join("\n") + "\n";

  fill(out, ["| File | Result | Errors | Warnings | Infos |", "| :--- | :--- | ---: | ---: | ---: |"], budget);
  const rows = results.map((r) => {
    const c = countBySeverity(r.diagnostics);
    return `| ${codeSpan(r.file, true)} | ${r.valid ? "✅ valid" : "❌ invalid"} | ${c.errors} | ${c.warnings} | ${c.infos} |`;
  });
  const filesLeft = fill(out, rows, budget);
  if (filesLeft) out.push("", `… and ${plural(filesLeft, "more file")}.`);

  const items = results.flatMap((r) =>
    r.diagnostics.map(
      (d) => `- ${codeSpan(location(r.file, d.line, d.column))} **${d.severity}** [${codeSpan(d.rule)}](${ruleHelpUri(d.rule)}): ${markdownText(messageWithSuggestion(d))}`,
    ),
  );
  if (items.length === 0) return out.join("\n") + "\n";
  fill(out, ["", "#### Diagnostics", ""], budget);
  const itemsLeft = filesLeft ? items.length : fill(out, items, budget);
  if (itemsLeft) out.push("", `… and ${plural(itemsLeft, "more diagnostic")}: the job log lists every one.`);
  return out.join("\n") + "\n";
}
