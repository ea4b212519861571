/**
 * Counting results and judging a run: the verdict rule and exit codes of docs/conformance/report.md.
 * A warned test is a pass with a note, so it counts as passed for the verdict and the closing line.
 */
import { SPEC_TESTS, type Summary, type TestResult, type Verdict } from "./types.js";

/** What the verdict needs of a result; the attestation judges its predicate with the same rule. */
export type TestOutcome = Pick<TestResult, "number" | "name" | "status">;

/** Exit codes of pulse-conform; 0-2 follow the verdict, the rest are about the run itself. */
export const CONFORM_EXIT = {
  conformant: 0,
  nonconformant: 1,
  incomplete: 2,
  driver: 3,
  usage: 4,
  verification: 5,
} as const;

export function summarize(results: readonly TestOutcome[]): Summary {
  const summary: Summary = { total: results.length, passed: 0, failed: 0, warned: 0, errored: 0, not_tested: 0, flaky: 0 };
  for (const r of results) summary[r.status]++;
  return summary;
}

const isPass = (r: TestOutcome): boolean => r.status === "passed" || r.status === "warned";

/**
 * nonconformant as soon as one test failed, even in a partial run: a failure is evidence on its
 * own. conformant only when each of the twelve tests appears exactly once, under its own number
 * and name, and passed or warned. Anything else (errored, not_tested, flaky, missing, duplicated
 * or unknown tests) is incomplete: the run did not decide.
 */
export function verdictOf(summary: Summary, results: readonly TestOutcome[]): Verdict {
  if (summary.failed > 0 || results.some((r) => r.status === "failed")) return "nonconformant";
  if (results.length !== SPEC_TESTS.length) return "incomplete";
  const covered = SPEC_TESTS.every((t) => {
    const matching = results.filter((r) => r.number === t.number);
    return matching.length === 1 && matching[0]!.name === t.name && isPass(matching[0]!);
  });
  return covered ? "conformant" : "incomplete";
}

export function exitCodeOf(verdict: Verdict): 0 | 1 | 2 {
  return CONFORM_EXIT[verdict];
}

/** Tests that count as passed (passed + warned): the badge's and the closing line's numerator. */
export function passedCount(summary: Summary): number {
  return summary.passed + summary.warned;
}

/**
 * The last line CI reads. "failed" is every test that did not pass (failed, errored, not_tested,
 * flaky), so the two numbers add up to the tests run and "0 failed" never hides an undecided test.
 */
export function closingLine(summary: Summary): string {
  const passed = passedCount(summary);
  return `${passed} passed, ${summary.total - passed} failed`;
}
