/**
 * The gate's comparison: a rerun of the same failure compares equal whatever its line numbers,
 * durations, counts, ids and temporary paths; a new failure never does; a check that passed at the
 * baseline may not fail; one that failed may not gain a failure (a changed exit code alone is not one).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { baselineOf, compareToBaseline, describeVerdict, failuresOf, normaliseLine } from "../../src/coding/gate.js";

const run = (command: string, exit: number, output: string) => ({ command, exit, output, durationMs: 5 });

describe("the gate", () => {
  it("normalises what varies between runs of one failure, and keeps what names it", () => {
    fc.assert(
      fc.property(fc.nat(99_999), fc.nat(999), fc.nat(9_999), fc.stringMatching(/^[0-9a-f]{8,12}$/), (line, col, ms, hex) => {
        const a = normaliseLine(`FAIL src/parse.test.ts:${line}:${col} > parses dates (${ms} ms) [${hex}] in /tmp/pulse-${hex}/x`);
        expect(a).toBe(normaliseLine("FAIL src/parse.test.ts:1:1 > parses dates (3 ms) [deadbeef] in /tmp/pulse-abc/x"));
      }),
      { numRuns: 200 },
    );
    expect(normaliseLine("FAIL src/parse.test.ts:1 > parses dates")).not.toBe(normaliseLine("FAIL src/parse.test.ts:1 > parses times"));
  });

  it("reads failure lines, not passing summaries", () => {
    expect(failuresOf("✓ ok\nFAIL a.test.ts > x\nTests 3 passed, 0 failed\nError: boom at a.ts:3:1\n")).toEqual(["FAIL a.test.ts > x", "Error: boom at a.ts:N"]);
  });

  it("holds a passing check to passing, and an already failing one to no new failure", () => {
    const baseline = [baselineOf(run("npm test", 0, "all good")), baselineOf(run("npm run lint", 1, "error: x.ts:3:1 no-unused-vars"))];
    expect(compareToBaseline([run("npm test", 0, ""), run("npm run lint", 1, "error: x.ts:9:4 no-unused-vars")], baseline).passed).toBe(true);
    // A new exit code of a check that already failed is not a new failure by itself.
    expect(compareToBaseline([run("npm test", 0, ""), run("npm run lint", 2, "error: x.ts:9:4 no-unused-vars")], baseline).passed).toBe(true);
    const broken = compareToBaseline([run("npm test", 1, "FAIL b.test.ts > adds"), run("npm run lint", 1, "error: x.ts:3:1 no-unused-vars\nerror: y.ts:1:1 no-undef")], baseline);
    expect(broken.passed).toBe(false);
    expect(broken.checks.map((c) => c.newFailures)).toEqual([["FAIL b.test.ts > adds"], ["error: y.ts:N no-undef"]]);
    expect(describeVerdict(broken)).toBe("`npm test` (exit 1):\n  - FAIL b.test.ts > adds\n`npm run lint` (exit 1):\n  - error: y.ts:N no-undef");
    // A failing check with no failure lines still names its exit.
    expect(compareToBaseline([run("npm test", 3, "")], baseline).checks[0]!.newFailures).toEqual(["exit 3"]);
  });
});
