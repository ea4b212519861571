/**
 * The report as Markdown, for a pull request comment or a CI step summary: who was judged and
 * the verdict, a table of the tests, then one section per test that did not simply pass, with
 * its checks and the line that reruns it. Runtime names, checks and stderr are untrusted text:
 * inline text is escaped, and code blocks get a fence longer than any backtick run inside.
 */
import { codeSpan, markdownText } from "../../src/format/step-summary.js";
import { printable, wellFormed } from "../../src/format/text.js";
import { checkLines } from "./junit.js";
import { closingLine, resultsLine } from "./summary.js";
import { ARTIFACT_DIGEST_SOURCES, SPEC_TESTS, type ConformanceReport, type TestResult } from "./types.js";

function codeBlock(raw: string, info = ""): string[] {
  const text = printable(wellFormed(raw));
  const longest = Math.max(2, ...Array.from(text.matchAll(/`+/g), (m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return [`${fence}${info}`, ...text.split(/\r\n|\r|\n/), fence];
}

function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function header(report: ConformanceReport): string[] {
  const language = report.runtime_language ? ` (${markdownText(report.runtime_language)})` : "";
  const s = report.settings;
  const only = s.only ? `, only tests ${s.only.join(", ")}` : "";
  // A reader must not take the harness's stand-in for the artifact's digest.
  const source = report.runtime_digest_source;
  const standIn = source !== undefined && !ARTIFACT_DIGEST_SOURCES.includes(source) ? ` (not the runtime artifact's digest: a stand-in, ${source})` : "";
  const loop = report.loop;
  const list = (items: readonly string[]) => (items.length === 0 ? "none" : items.map((i) => codeSpan(i)).join(", "));
  const loopLines = loop
    ? [
        `- Loop: ${codeSpan(loop.loop_id)} ${markdownText(loop.version)} from ${codeSpan(loop.manifest)}, ${codeSpan(loop.manifest_digest)}`,
        `- Handlers: ${loop.handlers === "recording" ? "pulse's recording handlers" : codeSpan(loop.handlers)}${loop.handlers !== "recording" && loop.recording_phases.length > 0 ? ` (recording handlers for ${list(loop.recording_phases)})` : ""}`,
        `- Loops it names: ${list(loop.companions)}; played by stand-ins: ${list(loop.stand_ins)}`,
        `- Tests that apply: ${loop.applied.join(", ") || "none"}`,
      ]
    : [];
  return [
    loop ? `# PULSE conformance: loop ${markdownText(loop.loop_id)} ${markdownText(loop.version)}` : `# PULSE conformance: ${markdownText(report.runtime_name)} ${markdownText(report.runtime_version)}`,
    "",
    `**Verdict: ${report.verdict}** (${closingLine(report.summary)}${loop ? "; a loop report, judged on the tests that apply" : report.certification ? "" : "; not a certification run"})`,
    "",
    markdownText(resultsLine(report.summary)),
    "",
    ...loopLines,
    `- Runtime: ${markdownText(report.runtime_name)} ${markdownText(report.runtime_version)}${language}, ${codeSpan(report.runtime_digest)}${standIn}`,
    `- PULSE version: ${markdownText(report.pulse_version)}`,
    `- Suite: pulse-conform ${markdownText(report.suite_version)}, ${codeSpan(report.suite_digest)}`,
    `- Settings: seed ${s.seed}, ${s.timing} time, ${s.repeats} repeat${s.repeats === 1 ? "" : "s"}, evidence ${s.evidence_class}${only}`,
    `- Run: ${markdownText(report.started_at)} to ${markdownText(report.finished_at)}`,
  ];
}

function table(results: readonly TestResult[]): string[] {
  return [
    "| # | test | status | time |",
    "| ---: | --- | --- | ---: |",
    ...results.map((r) => `| ${r.number} | ${codeSpan(r.name, true)} | ${r.status === "not_applicable" ? `not applicable: ${markdownText(r.reason ?? "")}` : r.status} | ${r.status === "not_applicable" ? "" : duration(r.duration_ms)} |`),
  ];
}

function section(r: TestResult): string[] {
  const out = ["", `## ${r.number} ${markdownText(r.name)}: ${r.status}`, ""];
  if (r.reason) out.push(markdownText(r.reason), "");
  if (r.repeats) out.push(`Repeats: ${r.repeats.join(", ")}`, "");
  if (r.checks.length) out.push("Checks:", "", ...codeBlock(r.checks.flatMap(checkLines).join("\n"), "text"), "");
  const e = r.evidence;
  if (e?.notes?.length) out.push("Notes:", "", ...e.notes.map((n) => `- ${markdownText(n)}`), "");
  if (e?.stderr_tail?.length) out.push("Adapter stderr (last lines):", "", ...codeBlock(e.stderr_tail.join("\n"), "text"), "");
  if (e?.audit_events?.length) out.push("Audit events:", "", ...codeBlock(JSON.stringify(e.audit_events, null, 2), "json"), "");
  if (e?.substrate_calls?.length) out.push("Substrate calls:", "", ...codeBlock(JSON.stringify(e.substrate_calls, null, 2), "json"), "");
  out.push("Rerun it alone:", "", ...codeBlock(r.repro, "sh"));
  return out;
}

export function formatMarkdown(report: ConformanceReport): string {
  const ran = new Set(report.test_results.map((r) => r.number));
  const missing = SPEC_TESTS.filter((t) => !ran.has(t.number));
  const out = [...header(report), "", ...table(report.test_results)];
  if (missing.length) out.push("", `Not run: ${missing.map((t) => `${t.number} ${codeSpan(t.name)}`).join(", ")}.`);
  for (const r of report.test_results) if (r.status !== "passed" && r.status !== "not_applicable") out.push(...section(r));
  return out.join("\n") + "\n";
}
