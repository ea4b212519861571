/**
 * pulse-conform never waits forever: the suite passes when substrate calls answer on a later
 * macrotask (the load that once hung the selftest), a runtime that stops answering ends the run
 * as a driver failure naming the test and the step, and a test has a real-time bound.
 */
import { afterEach, describe, expect, it } from "vitest";
import { inMemorySubstrates } from "../../adapters/memory/index.js";
import { wrapSubstrates } from "../../adapters/testing/wrap.js";
import { DriverFailure } from "../../conformance/driver/driver.js";
import { InProcessDriver } from "../../conformance/driver/in-process-driver.js";
import { PROTOCOL_VERSION } from "../../conformance/driver/protocol.js";
import { RecordingSubstrate } from "../../conformance/harness/observer.js";
import { runTests, type RunOptions } from "../../conformance/runner.js";
import { SUITE } from "../../conformance/suite/index.js";
import type { ConformanceTest } from "../../conformance/suite/test.js";
import { standardLoop, WS } from "../../conformance/suite/manifests.js";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const thing of open.splice(0)) await thing.close().catch(() => undefined);
});

/** Substrates whose every call answers after a few ms of real time, as over a busy network. */
const slowSubstrates = () =>
  wrapSubstrates(inMemorySubstrates(), async (_slot, _operation, _args, _ctx, proceed) => {
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 25));
    return proceed();
  });

async function session(options: { callTimeoutMs?: number; slow?: boolean } = {}) {
  const driver = new InProcessDriver(undefined, options.callTimeoutMs === undefined ? {} : { callTimeoutMs: options.callTimeoutMs });
  const observer = await new RecordingSubstrate(options.slow ? slowSubstrates : inMemorySubstrates).start();
  open.push(observer, driver);
  const hello = await driver.call("hello", { protocol_version: PROTOCOL_VERSION });
  const base = { driver, observer, hello, timing: "virtual", repeats: 1, seed: 1, repro: () => "pulse-conform", runtimeDigest: "x" } satisfies RunOptions;
  return { driver, base };
}

describe("substrate calls that answer on a later macrotask", () => {
  // Tests 1, 7 and 11 sleep on loop time right after a substrate call: time must not pass while
  // the call is on the wire, or the sleep lands after the last clock.advance and never ends.
  it("the tests that sleep after a substrate call pass, and finish", async () => {
    const { base } = await session({ slow: true });
    const results = await runTests({ ...base, only: [1, 7, 11] });
    expect(results.map((r) => `${r.number} ${r.status}${r.reason ? ` ${r.reason}` : ""}`)).toEqual(["1 passed", "7 passed", "11 passed"]);
  }, 60_000);
});

/** A test that loads a loop whose phase sleeps on loop time, then invokes it without advancing. */
const stalls: ConformanceTest = {
  ...SUITE[0]!,
  async run(ctx) {
    await ctx.configure();
    const loopId = await ctx.load(standardLoop("conformance.stall"), { apply: { delay_ms: 1_000, output: { causal_parent_ids: [] } } });
    await ctx.driver.call("phase.invoke", { loop_id: loopId, workspace: WS, trace_id: "c0f00001000000000000000000000001", phase_id: "apply", input: {} });
  },
};

describe("a runtime that stops answering", () => {
  it("ends the run as a driver failure naming the method, the test and the step", async () => {
    const { base } = await session({ callTimeoutMs: 300 });
    const failure = await runTests({ ...base, suite: [stalls] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(DriverFailure);
    expect((failure as DriverFailure).message).toBe("pulse's runtime did not answer phase.invoke within 300 ms");
    expect((failure as DriverFailure).during).toBe("test 1 phase_atomicity_under_concurrency, at driver call 3 of the test: phase.invoke failed (last answered: manifest.load)");
  });

  it("a later call fails the same way at once, and a call that answers within the bound is a normal answer", async () => {
    const { driver } = await session({ callTimeoutMs: 300 });
    await driver.call("configure", { substrate_url: null, clock: "virtual" });
    expect(await driver.call("clock.advance", { ms: 5 })).toEqual({ now: Date.UTC(2026, 0, 1) + 5 });
    const { loop_id } = await driver.call("manifest.load", { manifest: standardLoop("conformance.stall"), scripts: { apply: { delay_ms: 1_000, output: {} } } });
    await expect(driver.call("phase.invoke", { loop_id, workspace: WS, trace_id: "c0f00001000000000000000000000002", phase_id: "apply", input: {} })).rejects.toThrow("did not answer phase.invoke within 300 ms");
    await expect(driver.call("status.get", { loop_id })).rejects.toThrow("did not answer phase.invoke within 300 ms");
  });

  it("a test that never finishes stops at the per-test bound", async () => {
    const { base } = await session();
    const forever: ConformanceTest = { ...SUITE[1]!, run: () => new Promise(() => undefined) };
    const failure = await runTests({ ...base, suite: [forever], testTimeoutMs: 200 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(DriverFailure);
    expect((failure as DriverFailure).message).toBe("test 2 feedback_path_cannot_be_skipped did not finish within 200 ms of real time");
    expect((failure as DriverFailure).during).toBe("test 2 feedback_path_cannot_be_skipped, before its first driver call");
  });
});
