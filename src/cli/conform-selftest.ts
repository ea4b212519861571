/**
 * `pulse-conform selftest`: proves the suite can fail. The unmodified runtime must pass all
 * twelve tests, and each named mutant (src/runtime/mutants.ts) must fail exactly its target
 * test, with every other test still passing. Runs in process unless --driver/--attach name an
 * adapter whose hello lists the mutants.
 */
import { DriverFailure } from "../../conformance/driver/driver.js";
import { shellJoin, shellQuote } from "../../conformance/driver/shell.js";
import { runTests } from "../../conformance/runner.js";
import { SPEC_TESTS, type TestResult } from "../../conformance/report/types.js";
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

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

export async function runSelftest(opts: ConformCliOptions, io: CliIO): Promise<number> {
  const color = useColor(io, opts.color === false ? false : undefined);
  const paint = (ok: boolean | undefined, text: string) => (color ? `\x1b[${ok === undefined ? 33 : ok ? 32 : 31}m${text}\x1b[0m` : text);
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
  let caught = 0;
  let missed = 0;
  let cleanOk = false;
  const known = Object.entries(MUTANTS).filter(([mutant]) => offered.has(mutant));
  try {
    const clean = await run(undefined);
    cleanOk = clean.length === 12 && clean.every((r) => r.status === "passed");
    io.stdout(`${paint(cleanOk, cleanOk ? "✓" : "✗")} unmodified runtime: ${clean.filter((r) => r.status === "passed").length}/12 passed${cleanOk ? "" : " (it must pass all twelve before a mutant can show anything)"}\n`);
    if (!cleanOk) for (const r of clean.filter((r) => r.status !== "passed")) io.stdout(progressLine(r, color));
    if (cleanOk) {
      for (const [mutant, description] of Object.entries(MUTANTS)) {
        const target = targetOf(description);
        const name = SPEC_TESTS[target - 1]!.name;
        if (!offered.has(mutant)) {
          io.stdout(`${paint(undefined, "-")} ${mutant.padEnd(26)} not offered by the adapter (not applicable)\n`);
          continue;
        }
        const results = await run(mutant);
        const hit = results.find((r) => r.number === target);
        const collateral = results.filter((r) => r.number !== target && r.status !== "passed");
        const ok = hit?.status === "failed" && collateral.length === 0;
        const failing = hit?.checks.find((c) => c.outcome === "fail");
        const verdict =
          hit?.status === "failed"
            ? `caught by test ${target} ${name}: its check "${failing?.description ?? "?"}" did not hold`
            : `NOT caught: test ${target} ${name} was ${hit?.status ?? "missing"}, and it must fail against this mutant`;
        io.stdout(`${paint(ok, ok ? "✓" : "✗")} ${mutant.padEnd(26)} ${verdict}\n`);
        if (collateral.length > 0) io.stdout(`    but other tests did not pass either (each mutant must fail its own test only): ${collateral.map((r: TestResult) => `${r.number} ${r.name} (${r.status})`).join(", ")}\n`);
        ok ? caught++ : missed++;
      }
    }
  } catch (e) {
    if (e instanceof DriverFailure) return driverFailed(e, session.driver, io, "pulse-conform selftest");
    throw e;
  } finally {
    await session.observer.close();
    await session.driver.close().catch(() => undefined);
  }
  const notOffered = Object.keys(MUTANTS).length - known.length;
  let summary: string;
  if (!cleanOk) summary = "the unmodified runtime did not pass 12/12, so no mutant was run";
  else if (known.length === 0) {
    summary = `mutants: not applicable: the adapter offers none of the ${Object.keys(MUTANTS).length} (hello.capabilities.mutants). Mutants are optional for a runtime other than pulse's; the unmodified run above is what counts for it`;
  } else {
    const all = missed === 0 ? (notOffered === 0 ? "the suite can fail: " : "") : "the suite did not catch every mutant as it must: ";
    summary = `${all}${plural(known.length, "mutant")}, ${caught} caught${missed === 0 ? ", each by its own test and no other" : `, ${missed} not`}${notOffered > 0 ? `; ${notOffered} not offered (not applicable)` : ""}`;
  }
  // The closing line counts mutants (caught: passed); the unmodified run counts only when it failed.
  io.stdout(`\n${summary}\n${caught} passed, ${missed + (cleanOk ? 0 : 1)} failed\n`);
  return cleanOk && missed === 0 ? 0 : 1;
}
