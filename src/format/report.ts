/**
 * The output formats of pulse-validate: pure functions from results to text. Every format sees
 * the same view of the results: files by path, diagnostics by position, and under --quiet the
 * errors only (the summary then counts what is shown).
 */
import type { FileResult, Severity } from "../validator/diagnostic.js";
import { formatCompact } from "./compact.js";
import { formatGithub } from "./github.js";
import { formatJson } from "./json.js";
import { formatJunit } from "./junit.js";
import { formatPretty } from "./pretty.js";
import { formatSarif } from "./sarif.js";
import { ordered } from "./text.js";

export type FormatName = "pretty" | "compact" | "json" | "sarif" | "github" | "junit";
export const FORMAT_NAMES: readonly FormatName[] = ["pretty", "compact", "json", "sarif", "github", "junit"];

export interface RuleHelp {
  id: string;
  summary: string;
  explanation: string;
  defaultSeverity: Severity;
}

export interface ReportOptions {
  /** ANSI colours (pretty only); false under NO_COLOR, --no-color, or when stdout is not a terminal. */
  color: boolean;
  toolVersion: string;
  /** The rule catalogue, for SARIF's rules[] and help text. */
  rules: readonly RuleHelp[];
  /** --quiet: warnings and infos are dropped from the report. */
  quiet?: boolean;
}

export interface Report {
  stdout: string;
  /** Markdown for $GITHUB_STEP_SUMMARY (github format only). */
  stepSummary?: string;
}

/** What the report shows: every diagnostic, or under quiet only the errors. */
function visible(results: readonly FileResult[], quiet: boolean | undefined): FileResult[] {
  const sorted = ordered(results);
  if (!quiet) return sorted;
  return sorted.map((r) => ({ ...r, diagnostics: r.diagnostics.filter((d) => d.severity === "error") }));
}

export function formatReport(format: FormatName, results: readonly FileResult[], options: ReportOptions): Report {
  const shown = visible(results, options.quiet);
  switch (format) {
    case "pretty":
      return { stdout: formatPretty(shown, { color: options.color, quiet: options.quiet === true }) };
    case "compact":
      return { stdout: formatCompact(shown) };
    case "json":
      return { stdout: formatJson(shown) };
    case "sarif":
      return { stdout: formatSarif(shown, options) };
    case "github":
      return formatGithub(shown);
    case "junit":
      return { stdout: formatJunit(shown) };
    default:
      throw new Error(`unknown report format "${String(format satisfies never)}"`);
  }
}
