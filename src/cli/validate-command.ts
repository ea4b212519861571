/**
 * `pulse-validate` / `pulse validate`: options, inputs, output and exit code. The command is a
 * function of its options and a CliIO, so tests run it in-process; the bins only wire it to
 * the real process.
 */
import { appendFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { Command } from "commander";
import { Option } from "commander";
import { summarize, type FileResult, type Severity, type Summary } from "../validator/diagnostic.js";
import { RULES, ruleInfo } from "../validator/rule-catalog.js";
import { closest, didYouMean } from "../grammar/suggest.js";
import { severityFor, validateSources, type SeverityOverride } from "../validator/validate.js";
import { DEFAULT_MAX_BYTES } from "../source/load.js";
import { parseCount, readManifestSources, writeAtomically, type ReadReport } from "./inputs.js";
import { EXIT, UsageError } from "./exit-codes.js";
import { useColor, type CliIO } from "./io.js";
import { loadRuleConfig } from "./rule-config.js";
import { FORMAT_NAMES, formatReport, type FormatName } from "../format/report.js";
import { plural } from "../format/text.js";
import { VERSION } from "../version.js";

export interface ValidateCliOptions {
  format?: string;
  strict?: boolean;
  failOn?: string;
  quiet?: boolean;
  maxWarnings?: string;
  color?: boolean;
  config?: string;
  explain?: string;
  listRules?: boolean;
  stdinFilename?: string;
  output?: string;
  maxFileSize?: string;
  verbose?: boolean;
}

export const VALIDATE_DESCRIPTION = "Validate PULSE loop manifests (JSON, JSONC or YAML) against the v0.1 schema and the semantic rules the schema cannot express.";

export const VALIDATE_HELP = `
Operands:
  files, directories (searched recursively for .json, .jsonc, .yaml, .yml), quoted globs
  ('manifests/**/*.yaml'), or - for stdin. Manifests given together are also checked against
  each other: connections, signal sources and nesting. A directory search skips JSON/YAML
  files that name neither loop_id nor pulse_protocol_version (package.json, reports) and says
  how many (--verbose lists them; --strict reports each as a warning); a file named on the
  command line is always validated.

Exit codes:
  0  no problems at the --fail-on level       2  usage error: bad flag, no file matched, unreadable file
  1  problems found (syntax errors included)  3  internal error

Examples:
  pulse-validate manifests/
  pulse-validate --format sarif -o results.sarif 'loops/**/*.yaml'
  cat loop.yaml | pulse-validate - --stdin-filename loop.yaml
  pulse-validate --explain pulse/closure-not-grounded`;

export function addValidateOptions(cmd: Command): Command {
  return cmd
    .argument("[paths...]", "files, directories, globs, or - for stdin")
    .addOption(new Option("-f, --format <format>", "output format (default: pretty on a terminal, github under GitHub Actions, compact otherwise; with -o, from the file's extension)").choices([...FORMAT_NAMES]))
    .option("--strict", "treat the §3.2 structure rules (missing retrieve/act, ungrounded closure) as errors")
    .addOption(new Option("--fail-on <level>", "exit 1 when a diagnostic of this severity or worse is found").choices(["error", "warning", "never"]).default("error"))
    .option("-q, --quiet", "report errors only")
    .option("--max-warnings <n>", "exit 1 when there are more than n warnings (even with --fail-on never)")
    .option("--color", "force colour output")
    .option("--no-color", "disable colour output (NO_COLOR is honoured too)")
    .option("-c, --config <file>", 'rule severities, JSON or YAML: {"rules": {"pulse/missing-act": "error", "pulse/connection-external": "off"}}')
    .option("--explain <rule>", "explain a rule and exit")
    .option("--list-rules", "list every rule with its default severity and exit")
    .option("--stdin-filename <name>", "name (and format, by extension) of the manifest read from stdin")
    .option("-o, --output <file>", "write the report to a file instead of stdout (.sarif → sarif, .json → json, .xml → junit, else compact, unless --format says)")
    .option("--max-file-size <bytes>", `refuse manifests larger than this (default ${DEFAULT_MAX_BYTES})`)
    .option("--verbose", "list the files a directory search skipped, and why");
}

export function explainRule(id: string): string {
  const info = ruleInfo(id);
  if (!info) {
    const suggestion = didYouMean(closest(id, RULES.map((r) => r.id)));
    throw new UsageError(`unknown rule "${id}"${suggestion ? `; ${suggestion}` : ""} (pulse-validate --list-rules shows them all)`);
  }
  const severity = info.strictSeverity ? `${info.severity}; ${info.strictSeverity} with --strict` : info.severity;
  return `${info.id} (${severity}${info.configurable ? "" : ", cannot be turned off"})\n${info.summary}\n\n${wrap(info.explanation, 88)}\n`;
}

function wrap(text: string, width: number): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + word.length + 1 > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.join("\n");
}

export function listRules(): string {
  const width = Math.max(...RULES.map((r) => r.id.length));
  return RULES.map((r) => `${r.id.padEnd(width)}  ${r.severity.padEnd(7)}  ${r.summary}`).join("\n") + "\n";
}

/** Report formats a file name implies; any other file gets compact (no colours, no workflow commands). */
const FORMAT_BY_EXTENSION: readonly [RegExp, FormatName][] = [
  [/\.sarif(\.json)?$/i, "sarif"],
  [/\.json$/i, "json"],
  [/\.xml$/i, "junit"],
];

function chooseFormat(requested: string | undefined, io: Pick<CliIO, "env" | "stdoutIsTTY">, output?: string): FormatName {
  if (requested) return requested as FormatName;
  // Annotations and code frames are for a reader of the log, never for a file.
  if (output) return FORMAT_BY_EXTENSION.find(([re]) => re.test(output))?.[1] ?? "compact";
  if (io.env.GITHUB_ACTIONS === "true") return "github";
  return io.stdoutIsTTY ? "pretty" : "compact";
}

export async function runValidate(operands: readonly string[], opts: ValidateCliOptions, io: CliIO): Promise<number> {
  if (opts.explain !== undefined) {
    io.stdout(explainRule(opts.explain));
    return EXIT.ok;
  }
  if (opts.listRules) {
    io.stdout(listRules());
    return EXIT.ok;
  }
  const maxWarnings = parseCount("--max-warnings", opts.maxWarnings);
  const maxBytes = parseCount("--max-file-size", opts.maxFileSize) ?? DEFAULT_MAX_BYTES;
  const severities: Record<string, SeverityOverride> = opts.config ? await loadRuleConfig(opts.config, io.cwd) : {};
  const read: ReadReport = { skipped: [] };
  const sources = await readManifestSources(operands, opts.stdinFilename, io, maxBytes, read);

  const results: FileResult[] = validateSources(sources, { strict: opts.strict === true, severities });
  if (opts.strict) results.push(...read.skipped.map(skippedResult));
  else if (!opts.quiet) reportSkipped(read.skipped, opts.verbose === true, io);
  const failOn = opts.failOn ?? "error";
  const summary = summarize(results);
  const gate = warningGate(summary, failOn, maxWarnings);
  const format = chooseFormat(opts.format, io, opts.output);
  const summaryFile = io.env.GITHUB_STEP_SUMMARY;
  const report = formatReport(format, results, {
    color: opts.output ? false : useColor(io, opts.color),
    toolVersion: VERSION,
    rules: RULES.map((r) => ({ id: r.id, summary: r.summary, explanation: r.explanation, defaultSeverity: r.severity })),
    quiet: opts.quiet === true,
    // A clean compact run says so in one line on a terminal; piped, it stays silent (the exit code says it).
    summaryLine: io.stdoutIsTTY && !opts.output,
    ...(gate ? { failure: gate.verdict } : {}),
    // `-f sarif -o results.sarif` is the usual Actions setup: its run deserves a summary too.
    stepSummary: io.env.GITHUB_ACTIONS === "true" && summaryFile !== undefined && summaryFile !== "",
  });
  if (opts.output) await writeAtomically(resolve(io.cwd, opts.output), opts.output, report.stdout);
  else io.stdout(report.stdout);
  if (report.stepSummary && summaryFile) {
    // The summary is a courtesy: failing to write it must not hide the validation result.
    await appendFile(summaryFile, report.stepSummary).catch((e: unknown) => {
      io.stderr(`${NAME}: cannot write the step summary to ${summaryFile}: ${fileErrorReason(e)}\n`);
    });
  }
  // Warnings never show as failures in the report's own lines, and not at all under --quiet.
  if (gate) io.stderr(`${NAME}: ${gate.stderr}\n`);
  return exitCode(summary, failOn, maxWarnings);
}

const NAME = "pulse-validate";
const SKIP_REASON = "names neither loop_id nor pulse_protocol_version";

/** One line on standard error (a report on stdout stays machine-readable); the list under --verbose. */
function reportSkipped(skipped: readonly string[], verbose: boolean, io: CliIO): void {
  if (skipped.length === 0) return;
  const files = skipped.length === 1 ? "1 JSON/YAML file" : `${skipped.length} JSON/YAML files`;
  io.stderr(`${NAME}: skipped ${files} found in a directory that ${skipped.length === 1 ? "names" : "name"} neither loop_id nor pulse_protocol_version${verbose ? ":" : " (--verbose lists them)"}\n`);
  if (verbose) for (const file of skipped) io.stderr(`  ${file}: ${SKIP_REASON}\n`);
}

/** --strict: a skipped file is a warning in the report, so a manifest that lost its keys cannot pass unseen. */
function skippedResult(file: string): FileResult {
  return {
    file,
    valid: true,
    diagnostics: [
      {
        severity: severityFor("input/not-a-manifest", { strict: true }) as Severity,
        rule: "input/not-a-manifest",
        message: `skipped: found in a directory, this file ${SKIP_REASON}, so it was not validated as a manifest (name the file on the command line to validate it anyway)`,
        pointer: "",
        line: 1,
        column: 1,
        endLine: 1,
        endColumn: 1,
      },
    ],
  };
}

/**
 * The gates that fail a run on its warnings: --max-warnings (an explicit budget, so it holds
 * even under --fail-on never) and --fail-on warning. Undefined when neither fails the run, or
 * when errors alone already explain the failure.
 */
function warningGate(summary: Summary, failOn: string, maxWarnings: number | undefined): { verdict: string; stderr: string } | undefined {
  const warnings = plural(summary.warnings, "warning");
  if (maxWarnings !== undefined && summary.warnings > maxWarnings) {
    return { verdict: `more than --max-warnings ${maxWarnings}`, stderr: `${warnings}, more than --max-warnings ${maxWarnings}` };
  }
  if (failOn === "warning" && summary.errors === 0 && summary.warnings > 0) {
    return { verdict: "--fail-on warning", stderr: `${warnings}, failing the run under --fail-on warning` };
  }
  return undefined;
}

function exitCode(summary: Summary, failOn: string, maxWarnings: number | undefined): number {
  if (maxWarnings !== undefined && summary.warnings > maxWarnings) return EXIT.problems;
  if (failOn === "never") return EXIT.ok;
  if (summary.errors > 0) return EXIT.problems;
  if (failOn === "warning" && summary.warnings > 0) return EXIT.problems;
  return EXIT.ok;
}

function fileErrorReason(e: unknown): string {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code === "ENOENT") return "no such directory";
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EISDIR") return "it is a directory";
  if (code === "ENOSPC") return "no space left on the device";
  return code ?? (e instanceof Error ? e.message : String(e));
}
