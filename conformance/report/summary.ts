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

/** A runtime report (the twelve tests against a runtime) or a loop report (`pulse-conform --loop`). */
export type ReportKind = "runtime" | "loop";

export function summarize(results: readonly TestOutcome[], kind: ReportKind = "runtime"): Summary {
  const summary: Summary = { total: results.length, passed: 0, failed: 0, warned: 0, errored: 0, not_tested: 0, flaky: 0, ...(kind === "loop" ? { not_applicable: 0 } : {}) };
  for (const r of results) summary[r.status] = (summary[r.status] ?? 0) + 1;
  return summary;
}

const isPass = (r: TestOutcome): boolean => r.status === "passed" || r.status === "warned";

/**
 * nonconformant as soon as one test failed, even in a partial run: a failure is evidence on its
 * own. conformant only when each of the twelve tests appears exactly once, under its own number
 * and name, and passed or warned; in a loop report a test may instead be not_applicable, as long
 * as at least one applied. Anything else (errored, not_tested, flaky, missing, duplicated or
 * unknown tests, not_applicable in a runtime report) is incomplete: the run did not decide.
 */
export function verdictOf(summary: Summary, results: readonly TestOutcome[], kind: ReportKind = "runtime"): Verdict {
  if (summary.failed > 0 || results.some((r) => r.status === "failed")) return "nonconformant";
  if (results.length !== SPEC_TESTS.length) return "incomplete";
  const settles = (r: TestOutcome) => isPass(r) || (kind === "loop" && r.status === "not_applicable");
  const covered = SPEC_TESTS.every((t) => {
    const matching = results.filter((r) => r.number === t.number);
    return matching.length === 1 && matching[0]!.name === t.name && settles(matching[0]!);
  });
  return covered && results.some(isPass) ? "conformant" : "incomplete";
}

export function exitCodeOf(verdict: Verdict): 0 | 1 | 2 {
  return CONFORM_EXIT[verdict];
}

/** Tests that count as passed (passed + warned): the badge's and the closing line's numerator. */
export function passedCount(summary: Summary): number {
  return summary.passed + summary.warned;
}

/**
 * The last line CI reads. "failed" is every test run that did not pass (failed, errored,
 * not_tested, flaky), so the two numbers add up to the tests judged and "0 failed" never hides
 * an undecided test; not_applicable tests were not judged and are in neither number.
 * resultsLine, printed just before it, says which statuses those numbers hold.
 */
export function closingLine(summary: Summary): string {
  const passed = passedCount(summary);
  return `${passed} passed, ${summary.total - passed - (summary.not_applicable ?? 0)} failed`;
}

const SHOWN: readonly [keyof Summary, string][] = [
  ["passed", "passed"],
  ["warned", "warned"],
  ["failed", "failed"],
  ["errored", "errored"],
  ["not_tested", "not tested"],
  ["flaky", "flaky"],
  ["not_applicable", "not applicable"],
];

/**
 * Every status count that is not zero, and how the closing line below counts the ones that are
 * not simply passed or failed: "results: 3 failed, 6 errored, 3 not tested (errored and not
 * tested count as failed below)".
 */
export function resultsLine(summary: Summary): string {
  const shown = SHOWN.filter(([key]) => (summary[key] ?? 0) > 0);
  if (shown.length === 0) return "results: no test ran";
  const names = (keys: (keyof Summary)[]) => {
    const present = shown.filter(([key]) => keys.includes(key)).map(([, name]) => name);
    return present.length <= 1 ? present.join("") : `${present.slice(0, -1).join(", ")} and ${present.at(-1)}`;
  };
  const notes: string[] = [];
  if (summary.warned > 0) notes.push("warned counts as passed below");
  const undecided = names(["errored", "not_tested", "flaky"]);
  if (undecided) notes.push(`${undecided} ${undecided.includes(" and ") ? "count" : "counts"} as failed below`);
  if ((summary.not_applicable ?? 0) > 0) notes.push("not applicable is in neither number");
  return `results: ${shown.map(([key, name]) => `${summary[key]} ${name}`).join(", ")}${notes.length > 0 ? ` (${notes.join("; ")})` : ""}`;
}
