/**
 * JUnit XML for CI test tabs: one suite, one case per test run. failed and flaky become
 * <failure> (flaky with message "flaky", so a dashboard can tell them apart), errored <error>,
 * not_tested <skipped>; warned passes with its note in <system-out>. Runtime output (checks,
 * stderr) can hold anything, so every string goes through the XML escapers.
 */
import { xmlAttribute, xmlText } from "../../src/format/junit.js";
import type { Check, ConformanceReport, TestResult } from "./types.js";

const SUITE = "pulse-conformance";
const CLASSNAME = "pulse.conformance";

/** A JSON value on one line, for expected/observed; undefined (never valid JSON) named plainly. */
function show(value: unknown): string {
  return value === undefined ? "(nothing)" : (JSON.stringify(value) ?? String(value));
}

export function checkLines(check: Check): string[] {
  const mark = { pass: "PASS", fail: "FAIL", warn: "WARN" }[check.outcome];
  if (check.outcome === "pass") return [`${mark} ${check.description}`];
  return [`${mark} ${check.description}`, `  expected: ${show(check.expected)}`, `  observed: ${show(check.observed)}`];
}

/** The checks that explain a status: the failing ones, or the warnings, or (if none) all. */
function explaining(r: TestResult): Check[] {
  const failing = r.checks.filter((c) => c.outcome === "fail");
  if (failing.length) return failing;
  const warning = r.checks.filter((c) => c.outcome === "warn");
  return warning.length ? warning : r.checks;
}

function body(r: TestResult): string {
  const lines: string[] = [];
  if (r.reason) lines.push(r.reason);
  lines.push(...explaining(r).flatMap(checkLines));
  if (r.repeats) lines.push(`repeats: ${r.repeats.join(", ")}`);
  for (const note of r.evidence?.notes ?? []) lines.push(`note: ${note}`);
  lines.push(`repro: ${r.repro}`);
  return lines.join("\n");
}

function failureMessage(r: TestResult): string {
  const failing = r.checks.filter((c) => c.outcome === "fail");
  if (failing.length === 0) return "failed";
  const first = failing[0]!.description;
  return failing.length === 1 ? first : `${first} (and ${failing.length - 1} more failing check${failing.length > 2 ? "s" : ""})`;
}

function outcomeElement(r: TestResult): string | undefined {
  const text = xmlText(body(r));
  switch (r.status) {
    case "passed":
      return undefined;
    case "warned":
      return `      <system-out>${text}</system-out>`;
    case "failed":
      return `      <failure message="${xmlAttribute(failureMessage(r))}" type="failed">${text}</failure>`;
    case "flaky":
      return `      <failure message="flaky" type="flaky">${text}</failure>`;
    case "errored":
      return `      <error message="${xmlAttribute(r.reason ?? "errored")}" type="errored">${text}</error>`;
    case "not_tested":
      return `      <skipped message="${xmlAttribute(r.reason ?? "the precondition was never exercised")}"/>`;
    case "not_applicable":
      return `      <skipped message="${xmlAttribute(`not applicable: ${r.reason ?? "the loop lacks what the test needs"}`)}"/>`;
  }
}

function testCase(r: TestResult): string[] {
  const attrs = `classname="${CLASSNAME}" name="${xmlAttribute(`${r.number} ${r.name}`)}" time="${(r.duration_ms / 1000).toFixed(3)}"`;
  const inner = [outcomeElement(r)].filter((line): line is string => line !== undefined);
  const stderr = r.evidence?.stderr_tail;
  if (stderr?.length && r.status !== "passed") inner.push(`      <system-err>${xmlText(stderr.join("\n"))}</system-err>`);
  if (inner.length === 0) return [`    <testcase ${attrs}/>`];
  return [`    <testcase ${attrs}>`, ...inner, "    </testcase>"];
}

export function formatJunit(report: ConformanceReport): string {
  const results = report.test_results;
  const count = (pred: (r: TestResult) => boolean): number => results.filter(pred).length;
  const failures = count((r) => r.status === "failed" || r.status === "flaky");
  const errors = count((r) => r.status === "errored");
  const skipped = count((r) => r.status === "not_tested" || r.status === "not_applicable");
  const seconds = (results.reduce((sum, r) => sum + r.duration_ms, 0) / 1000).toFixed(3);
  const counts = `tests="${results.length}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${seconds}"`;
  const properties = [
    ["runtime_name", report.runtime_name],
    ["runtime_version", report.runtime_version],
    ["runtime_digest", report.runtime_digest],
    ["pulse_version", report.pulse_version],
    ["suite_version", report.suite_version],
    ["seed", String(report.settings.seed)],
    ["verdict", report.verdict],
    ...(report.loop ? [["loop_id", report.loop.loop_id], ["loop_manifest", report.loop.manifest], ["loop_manifest_digest", report.loop.manifest_digest], ["loop_handlers", report.loop.handlers]] : []),
  ].map(([name, value]) => `      <property name="${name}" value="${xmlAttribute(value ?? "")}"/>`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="pulse-conform" ${counts}>`,
    `  <testsuite name="${SUITE}" ${counts} timestamp="${xmlAttribute(report.started_at)}">`,
    "    <properties>",
    ...properties,
    "    </properties>",
    ...results.flatMap(testCase),
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}
