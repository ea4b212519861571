/**
 * The output formats of pulse-validate: pure functions from results to text. Every format sees
 * the same view of the results: files by path, diagnostics by position, and under --quiet the
 * errors only (the summary then counts what is shown).
 */
import type { FileResult } from "../validator/diagnostic.js";
import { formatCompact } from "./compact.js";
import { formatGithub } from "./github.js";
import { formatJson } from "./json.js";
import { formatJunit } from "./junit.js";
import { formatPretty } from "./pretty.js";
import { formatSarif } from "./sarif.js";
import { stepSummary } from "./step-summary.js";
import { ordered } from "./text.js";
import type { RuleHelp } from "./rule-help.js";

export type FormatName = "pretty" | "compact" | "json" | "sarif" | "github" | "junit";
export const FORMAT_NAMES: readonly FormatName[] = ["pretty", "compact", "json", "sarif", "github", "junit"];

export type { RuleHelp } from "./rule-help.js";

export interface ReportOptions {
  /** ANSI colours (pretty only); false under NO_COLOR, --no-color, or when stdout is not a terminal. */
  color: boolean;
  toolVersion: string;
  /** The rule catalogue, for SARIF's rules[] and help text. */
  rules: readonly RuleHelp[];
  /** --quiet: warnings and infos are dropped from the report. */
  quiet?: boolean;
  /**
   * Why the run fails beyond its errors, e.g. `more than --max-warnings 4`: the verdicts then
   * say ✖ and why, instead of claiming success for a run that exits 1.
   */
  failure?: string;
  /** Compact output ends with a one-line verdict (for a terminal; piped output stays one line per diagnostic). */
  summaryLine?: boolean;
  /** Also write the step summary in formats other than github (every format under GitHub Actions). */
  stepSummary?: boolean;
}

export interface Report {
  stdout: string;
  /** Markdown for $GITHUB_STEP_SUMMARY: always with github, with the others when asked for. */
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
  const stdout = formatStdout(format, shown, options);
  if (format !== "github" && !options.stepSummary) return { stdout };
  return { stdout, stepSummary: stepSummary(shown, options.failure) };
}

function formatStdout(format: FormatName, shown: readonly FileResult[], options: ReportOptions): string {
  switch (format) {
    case "pretty":
      return formatPretty(shown, { color: options.color, quiet: options.quiet === true, ...(options.failure ? { failure: options.failure } : {}) });
    case "compact":
      return formatCompact(shown, options.summaryLine ? { quiet: options.quiet === true, ...(options.failure ? { failure: options.failure } : {}) } : undefined);
    case "json":
      return formatJson(shown);
    case "sarif":
      return formatSarif(shown, options);
    case "github":
      return formatGithub(shown);
    case "junit":
      return formatJunit(shown);
    default:
      throw new Error(`unknown report format "${String(format satisfies never)}"`);
  }
}
