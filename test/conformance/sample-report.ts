/** A conformance report to test the reporters and the attestation with: all twelve passed. */
import { summarize, verdictOf } from "../../conformance/report/summary.js";
import { SPEC_TESTS, type ConformanceReport, type TestResult, type TestStatus } from "../../conformance/report/types.js";

export const DIGEST = `sha256:${"ab".repeat(32)}`;

export function result(number: number, status: TestStatus = "passed"): TestResult {
  const spec = SPEC_TESTS[number - 1]!;
  const fail = status === "failed" || status === "flaky";
  const r: TestResult = {
    number,
    name: spec.name,
    status,
    duration_ms: 10 * number,
    checks: [
      { description: `${spec.name} holds`, outcome: fail ? "fail" : status === "warned" ? "warn" : "pass", expected: { ok: true }, observed: { ok: !fail } },
    ],
    repro: `pulse-conform --only ${number} --seed 42 -- node adapter.js`,
  };
  if (status !== "passed") r.evidence = { notes: [`test ${number} was ${status}`] };
  if (status === "not_tested" || status === "errored") r.reason = `the adapter never reached test ${number}'s precondition`;
  return r;
}

/** A report whose summary and verdict follow from the results (statuses by test number). */
export function sampleReport(statuses: Partial<Record<number, TestStatus>> = {}, numbers: readonly number[] = SPEC_TESTS.map((t) => t.number)): ConformanceReport {
  const test_results = numbers.map((n) => result(n, statuses[n]));
  const summary = summarize(test_results);
  return {
    report_version: 1,
    pulse_version: "0.1",
    runtime_name: "pulse-reference",
    runtime_version: "0.1.0",
    runtime_digest: DIGEST,
    runtime_language: "typescript",
    suite_version: "0.1.0",
    suite_digest: `sha256:${"cd".repeat(32)}`,
    started_at: "2025-03-01T12:00:00.000Z",
    finished_at: "2025-03-01T12:00:04.210Z",
    settings: { seed: 42, timing: "virtual", repeats: 1, evidence_class: "recording-substrate" },
    test_results,
    summary,
    verdict: verdictOf(summary, test_results),
    certification: numbers.length === SPEC_TESTS.length,
  };
}

export function reportBytes(report: ConformanceReport): Buffer {
  return Buffer.from(JSON.stringify(report, null, 2) + "\n", "utf8");
}
