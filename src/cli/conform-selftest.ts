/**
 * `pulse-conform selftest`: proves the suite can fail. The unmodified runtime must pass all
 * twelve tests, and each named mutant (src/runtime/mutants.ts) must fail exactly its target
 * test, with every other test still passing. Runs in process unless --driver/--attach name an
 * adapter whose hello lists the mutants.
 */
import { DriverFailure } from "../../conformance/driver/driver.js";
import { shellJoin, shellQuote } from "../../conformance/driver/shell.js";
import { runTests } from "../../conformance/runner.js";
import type { TestResult } from "../../conformance/report/types.js";
import { MUTANTS } from "../runtime/mutants.js";
import { driverFailed, openSession, progressLine, reproLine, type ConformCliOptions } from "./conform-command.js";
import { useColor, type CliIO } from "./io.js";

export function targetOf(description: string): number {
  const match = /\(test (\d+),/.exec(description);
  if (!match) throw new Error(`mutant description names no test: ${description}`);
  return Number(match[1]);
}

function selftestTarget(opts: ConformCliOptions): string {
  if (opts.driver !== undefined) return ` --driver ${shellQuote(opts.driver)}`;
  if (opts.attach !== undefined) return ` --attach ${shellQuote(opts.attach)}`;
  return opts.adapter !== undefined ? ` -- ${shellJoin(opts.adapter)}` : "";
}

export async function runSelftest(opts: ConformCliOptions, io: CliIO): Promise<number> {
  const color = useColor(io, opts.color === false ? false : undefined);
  const paint = (ok: boolean, text: string) => (color ? `\x1b[${ok ? 32 : 31}m${text}\x1b[0m` : text);
  let session;
  try {
    session = await openSession(opts, io);
  } catch (e) {
    if (e instanceof DriverFailure) return driverFailed(e, undefined, io, "pulse-conform selftest");
    throw e;
  }
  const offered = new Set(session.hello.capabilities.mutants ?? []);
  const run = (mutant: string | undefined) =>
    runTests({
      driver: session.driver,
      observer: session.observer,
      hello: session.hello,
      timing: session.timing,
      repeats: 1,
      seed: 1,
      ...(mutant ? { mutant } : {}),
      // Mutants are reached only through selftest; the unmodified runtime reruns like any run.
      repro: (t) => (mutant ? `pulse-conform selftest${selftestTarget(opts)}` : reproLine(opts, t, 1)),
      runtimeDigest: session.runtimeDigest,
    });
  let good = 0;
  let bad = 0;
  try {
    const clean = await run(undefined);
    const cleanOk = clean.length === 12 && clean.every((r) => r.status === "passed");
    io.stdout(`${paint(cleanOk, cleanOk ? "✓" : "✗")} unmodified runtime: ${clean.filter((r) => r.status === "passed").length}/12 passed\n`);
    if (!cleanOk) for (const r of clean.filter((r) => r.status !== "passed")) io.stdout(progressLine(r, color));
    cleanOk ? good++ : bad++;
    for (const [mutant, description] of Object.entries(MUTANTS)) {
      const target = targetOf(description);
      if (!offered.has(mutant)) {
        io.stdout(`${paint(false, "✗")} ${mutant}: the adapter does not offer this mutant\n`);
        bad++;
        continue;
      }
      const results = await run(mutant);
      const hit = results.find((r) => r.number === target);
      const collateral = results.filter((r) => r.number !== target && r.status !== "passed");
      const ok = hit?.status === "failed" && collateral.length === 0;
      const failing = hit?.checks.find((c) => c.outcome === "fail");
      io.stdout(`${paint(ok, ok ? "✓" : "✗")} ${mutant.padEnd(26)} → test ${String(target).padStart(2)} ${hit?.name ?? "?"}: ${hit?.status ?? "missing"}${failing ? ` (${failing.description})` : ""}\n`);
      if (collateral.length > 0) io.stdout(`    also not passed: ${collateral.map((r: TestResult) => `${r.number} ${r.name} (${r.status})`).join(", ")}\n`);
      ok ? good++ : bad++;
    }
  } catch (e) {
    if (e instanceof DriverFailure) return driverFailed(e, session.driver, io, "pulse-conform selftest");
    throw e;
  } finally {
    await session.observer.close();
    await session.driver.close().catch(() => undefined);
  }
  io.stdout(`\nthe suite ${bad === 0 ? "can fail: every mutant is caught by its own test and no other" : "did not catch every mutant as expected"}\n${good} passed, ${bad} failed\n`);
  return bad === 0 ? 0 : 1;
}
