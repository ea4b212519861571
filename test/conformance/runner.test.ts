/** How the runner turns repeated runs of one test into its result (--repeat). */
import { describe, expect, it } from "vitest";
import type { Driver } from "../../conformance/driver/driver.js";
import type { Observer } from "../../conformance/harness/observer.js";
import { runTests, type RunOptions } from "../../conformance/runner.js";
import type { ConformanceTest } from "../../conformance/suite/test.js";

/** A test whose n-th run passes or fails as `outcomes` says (its runtime is never called). */
function scripted(outcomes: boolean[]): ConformanceTest {
  let run = 0;
  return {
    number: 1,
    name: "phase_atomicity_under_concurrency",
    summary: "scripted",
    run: async (ctx) => {
      const holds = outcomes[run++ % outcomes.length] as boolean;
      ctx.check("the scripted outcome holds", holds, true, holds);
    },
  };
}

async function resultOf(test: ConformanceTest, repeats: number, observed: { tail?: string[]; calls?: unknown[] } = {}) {
  const driver = { stderrTail: () => observed.tail ?? ["adapter: a stderr line"] } as unknown as Driver;
  const observer = { evidenceClass: "recording-substrate", calls: async () => observed.calls ?? [] } as unknown as Observer;
  const options = { driver, observer, hello: {} as RunOptions["hello"], timing: "virtual", repeats, seed: 1, repro: () => "pulse-conform --only 1", runtimeDigest: "x", suite: [test] } satisfies RunOptions;
  const [result] = await runTests(options);
  return result!;
}

describe("--repeat", () => {
  it("repeats that disagree make the test flaky, every run's status recorded, the failing run shown", async () => {
    const result = await resultOf(scripted([true, false, true]), 3);
    expect(result.status).toBe("flaky");
    expect(result.repeats).toEqual(["passed", "failed", "passed"]);
    expect(result.checks).toEqual([expect.objectContaining({ outcome: "fail" })]);
    expect(result.evidence?.stderr_tail).toEqual(["adapter: a stderr line"]);
  });

  it("repeats that agree keep their status: all passed is passed, all failed is failed", async () => {
    const passed = await resultOf(scripted([true]), 3);
    expect(passed).toMatchObject({ status: "passed", repeats: ["passed", "passed", "passed"] });
    expect(passed.evidence).toBeUndefined();
    expect((await resultOf(scripted([false]), 2)).status).toBe("failed");
  });

  it("one run records no repeats list", async () => {
    expect((await resultOf(scripted([true, false]), 1)).repeats).toBeUndefined();
  });
});

describe("evidence of a failed test", () => {
  it("shows the substrate calls and audit events of its run when the test attached none", async () => {
    const event = { event_id: "e1", event_type: "phase.completed" };
    const calls = [
      { slot: "memory", operation: "store_node", args: {}, context: { trace_id: "t", workspace_id: "w" }, at: 1 },
      { slot: "audit", operation: "append_event", args: { event }, context: { trace_id: "t", workspace_id: "w" }, at: 2 },
    ];
    const result = await resultOf(scripted([false]), 1, { tail: [], calls });
    expect(result.evidence).toMatchObject({ substrate_calls: calls, audit_events: [event] });
  });

  it("is never an empty object: with nothing observed it says so", async () => {
    const result = await resultOf(scripted([false]), 1, { tail: [], calls: [] });
    expect(result.evidence?.notes).toEqual([expect.stringMatching(/^nothing to show: no substrate call or audit event was observed/)]);
    // The near miss: a passed test carries no evidence at all.
    expect((await resultOf(scripted([true]), 1, { tail: [], calls: [] })).evidence).toBeUndefined();
  });
});
