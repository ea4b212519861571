/**
 * Tests that need something of the machine (Chromium, python3, openssl, a device file) say why
 * they do not run, in their title, which the test runner prints and checks (scripts/run-tests.mjs
 * fails on a skipped test whose title gives no reason). Under CI=true, where .ci/run installs
 * everything, a missing requirement fails the test instead of skipping it.
 */
import { describe, it } from "vitest";

const CI = process.env.CI === "true";

/** `it` when `ok`; otherwise a skip titled with `why` (a failure under CI=true, unless `onCi` is "skip"). */
export function itWhen(ok: boolean, why: string, onCi: "fail" | "skip" = "fail"): typeof it {
  if (ok) return it;
  if (CI && onCi === "fail") {
    return ((name: string, ..._rest: unknown[]) => it(`${name} (requires: ${why})`, () => {
      throw new Error(`${why}: CI must have it (.ci/run installs it)`);
    })) as unknown as typeof it;
  }
  return ((name: string, ...rest: unknown[]) => (it.skip as (...a: unknown[]) => void)(`${name} (skipped: ${why})`, ...rest)) as unknown as typeof it;
}

/** The same for a whole describe block. */
export function describeWhen(ok: boolean, why: string, onCi: "fail" | "skip" = "fail"): typeof describe {
  if (ok) return describe;
  if (CI && onCi === "fail") {
    return ((name: string) => describe(name, () => it(`requires: ${why}`, () => {
      throw new Error(`${why}: CI must have it (.ci/run installs it)`);
    }))) as unknown as typeof describe;
  }
  return ((name: string, ...rest: unknown[]) => (describe.skip as (...a: unknown[]) => void)(`${name} (skipped: ${why})`, ...rest)) as unknown as typeof describe;
}
