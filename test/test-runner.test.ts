/**
 * The closing lines of `npm test` (scripts/test-summary.mjs) and its build-once check
 * (scripts/build-inputs.mjs): lost and silently skipped tests fail the run, and the last line
 * stays exactly `N passed, N failed` for CI.
 */
import { cpSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error plain JavaScript build scripts, without declarations
import { summarizeResults } from "../scripts/test-summary.mjs";
// @ts-expect-error plain JavaScript build scripts, without declarations
import { buildInputsDigest } from "../scripts/build-inputs.mjs";

const test = (title: string, status: string, ancestors: string[] = ["suite"]) => ({ title, status, ancestorTitles: ancestors, fullName: [...ancestors, title].join(" ") });
const results = (tests: ReturnType<typeof test>[], extra: object = {}) => ({
  numPassedTests: tests.filter((t) => t.status === "passed").length,
  numFailedTests: tests.filter((t) => t.status === "failed").length,
  testResults: [{ name: "a.test.ts", status: "passed", assertionResults: tests }],
  ...extra,
});
type Summary = { lines: string[]; passed: number; failed: number };
const summarize = (r: object, o: object): Summary => summarizeResults(r, o) as Summary;

describe("the test run's closing lines", () => {
  it("print skipped and todo counts with each skip's reason, and end with exactly `N passed, N failed`", () => {
    const s = summarize(results([test("a", "passed"), test("b (skipped: python3)", "skipped"), test("c", "todo")]), { declaredMinimum: 1 });
    expect(s.lines.slice(-5)).toEqual(["", "1 skipped, 1 todo:", "  skipped: suite b (skipped: python3)", "  todo: suite c", "1 passed, 0 failed"]);
    expect(s.failed).toBe(0);
  });

  it("fail a skip that does not say why, and accept the reason in a describe title", () => {
    const silent = summarize(results([test("a", "passed"), test("b", "skipped")]), { declaredMinimum: 1 });
    expect(silent.failed).toBe(1);
    expect(silent.lines).toContain(`a skipped test must say why in its title, "(skipped: …)": suite b`);
    expect(silent.lines.at(-1)).toBe("1 passed, 1 failed");
    expect(summarize(results([test("a", "passed"), test("b", "skipped", ["pipes (skipped: POSIX named pipes)"])]), { declaredMinimum: 1 }).failed).toBe(0);
  });

  it("fail when fewer tests ran than declared; the near miss (exactly as many) passes", () => {
    const tests = [test("a", "passed"), test("b", "failed"), test("c (skipped: chromium)", "skipped")];
    expect(summarize(results(tests), { declaredMinimum: 3 }).lines).toContain("only 2 tests ran, fewer than the 3 that test/declared-tests.json declares: tests were lost (a file no longer collected, a skip too many)");
    expect(summarize(results(tests), { declaredMinimum: 2 }).failed).toBe(1); // the failed test only
  });

  it("under a filter, checks neither reasons nor the declared minimum", () => {
    expect(summarize(results([test("a", "passed"), test("b", "skipped")]), { declaredMinimum: 100, filtered: true }).failed).toBe(0);
  });

  it("count a suite that failed to load, and failed build steps", () => {
    const r = results([], { testResults: [{ name: "broken.test.ts", status: "failed", message: "SyntaxError: x\nmore", assertionResults: [] }] });
    const s = summarize(r, { declaredMinimum: 0, failedSteps: 1 });
    expect(s.lines).toContain("suite failed to load: broken.test.ts: SyntaxError: x");
    expect(s.lines.at(-1)).toBe("0 passed, 2 failed");
  });
});

describe("build once", () => {
  it("the build-inputs digest changes when a source changes, and only then", () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-build-inputs-"));
    const root = resolve(import.meta.dirname, "..");
    for (const f of ["src/version.ts", "package.json", "tsconfig.json"]) cpSync(join(root, f), join(dir, f), { recursive: true });
    const before = buildInputsDigest(dir);
    expect(buildInputsDigest(dir)).toBe(before);
    writeFileSync(join(dir, "src", "generated-note.txt"), "x");
    expect(buildInputsDigest(dir)).not.toBe(before);
  });
});
