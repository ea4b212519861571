/** The output formats of pulse-validate: pure functions from results to text. */
import type { FileResult, Severity } from "../validator/diagnostic.js";
import { formatCompact } from "./compact.js";
import { formatGithub } from "./github.js";
import { formatJson } from "./json.js";
import { formatJunit } from "./junit.js";
import { formatPretty } from "./pretty.js";
import { formatSarif } from "./sarif.js";

export type FormatName = "pretty" | "compact" | "json" | "sarif" | "github" | "junit";
export const FORMAT_NAMES: readonly FormatName[] = ["pretty", "compact", "json", "sarif", "github", "junit"];

export interface RuleHelp {
  id: string;
  summary: string;
  explanation: string;
  defaultSeverity: Severity;
}

export interface ReportOptions {
  /** ANSI colours (pretty only). */
  color: boolean;
  toolVersion: string;
  rules: readonly RuleHelp[];
  /** Errors only: warnings and infos are dropped from the output. */
  quiet?: boolean;
}

export interface Report {
  stdout: string;
  /** Markdown for $GITHUB_STEP_SUMMARY (github format only). */
  stepSummary?: string;
}

export function visible(results: readonly FileResult[], quiet: boolean | undefined): FileResult[] {
  if (!quiet) return [...results];
  return results.map((r) => ({ ...r, diagnostics: r.diagnostics.filter((d) => d.severity === "error") }));
}

export function formatReport(format: FormatName, results: readonly FileResult[], options: ReportOptions): Report {
  const shown = visible(results, options.quiet);
  switch (format) {
    case "pretty":
      return { stdout: formatPretty(shown, options) };
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
  }
}
