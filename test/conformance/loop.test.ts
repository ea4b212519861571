/**
 * Certifying a loop (conformance/loop): the tests apply to what the loop has, each one that
 * applies can fail (against the runtime mutants of the self-test), and `when` conditions are made
 * to hold only where they can be.
 */
import { describe, expect, it } from "vitest";
import { ROOT } from "../cli/run-bin.js";
import { runLoopTests } from "../../conformance/loop/runner.js";
import { patchOutput, satisfy, holdsOn, triggerOf } from "../../conformance/loop/satisfy.js";
import { readSubject } from "../../src/cli/conform-loop.js";
import { MUTANTS, type MutantName } from "../../src/runtime/mutants.js";
import { targetOf } from "../../src/cli/conform-selftest.js";
import type { CliIO } from "../../src/cli/io.js";

const io: CliIO = { cwd: ROOT, stdout: () => undefined, stderr: () => undefined, readStdin: async () => new Uint8Array(), env: {}, stdoutIsTTY: false };

describe("each test that applies to a loop can fail", () => {
  // graphonomous.continual_learning has eleven of the twelve structures (no quorum); the
  // AgenTroMatic loop has the quorum its elect phase guards. A mutant that breaks what a loop
  // lacks (retries, idempotent phases) cannot show on it: AgenTroMatic's 6 and 10 are such.
  it.each([
    ["manifests/graphonomous.continual_learning.yaml", [1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12], [1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12]],
    ["manifests/agentromatic.deliberation.yaml", [1, 2, 5, 6, 8, 9, 10, 11, 12], [1, 2, 5, 8, 9, 11, 12]],
  ])("%s: the unmodified runtime passes every applicable test, and each one fails against its mutant", async (file, applicable, targets) => {
    const subject = await readSubject({ loop: file }, io);
    const clean = await runLoopTests({ subject, repeats: 1, seed: 1, repro: () => "" });
    expect(clean.results.filter((r) => r.status !== "passed" && r.status !== "not_applicable")).toEqual([]);
    expect(clean.results.filter((r) => r.status === "passed").map((r) => r.number)).toEqual(applicable);
    const caught: number[] = [];
    for (const [mutant, description] of Object.entries(MUTANTS)) {
      const target = targetOf(description);
      if (!targets.includes(target)) continue;
      const { results } = await runLoopTests({ subject, repeats: 1, seed: 1, only: [target], repro: () => "", mutant: mutant as MutantName });
      expect(results[0]?.status, `${mutant} → test ${target}`).toBe("failed");
      caught.push(target);
    }
    expect(caught).toEqual(targets);
  }, 120_000);
});

describe("making a when condition hold", () => {
  it.each([
    ["kappa > 0", { fields: [], kappa: 0 + 1 }],
    ["status in ['success','failure']", { fields: [{ path: ["status"], value: "success" }] }],
    ["registered_system == 'graphonomous'", { fields: [{ path: ["registered_system"], value: "graphonomous" }] }],
    ["convergence_status == 'stable' and output.score >= 0.8", { fields: [{ path: ["convergence_status"], value: "stable" }, { path: ["score"], value: 0.8 }] }],
    ["not (status == 'failure')", { fields: [{ path: ["status"], value: "failure_not" }] }],
    ["retries < 3 or urgent", { fields: [{ path: ["retries"], value: 2 }] }],
    ["0.5 < confidence", { fields: [{ path: ["confidence"], value: 1 }] }],
    ["ready", { fields: [{ path: ["ready"], value: true }] }],
  ])("%s", (condition, bend) => {
    const solved = satisfy(condition);
    expect(solved).toEqual({ ok: true, bend });
    if (solved.ok) expect(holdsOn(condition, patchOutput({ status: "failure", confidence: 0.1 }, solved.bend), solved.bend.kappa)).toBe(true);
  });

  it.each([
    ["input.kind == 'x'", /reads input\.kind, which the harness does not control/],
    ["tokens.DeliberationResult.confidence > 0.5", /reads tokens\./],
    ["a == b", /compares two fields/],
    ["x in []", /empty list/],
    ["false", /constantly false/],
    ["status ==", /does not parse/],
  ])("%s cannot be made to hold, and says why", (condition, reason) => {
    const solved = satisfy(condition);
    expect(solved.ok).toBe(false);
    if (!solved.ok) expect(solved.reason).toMatch(reason);
  });

  it("reads a trigger's phase and condition", () => {
    expect(triggerOf("phase:route_topology when kappa > 0")).toEqual({ phase: "route_topology", condition: "kappa > 0" });
    expect(triggerOf("phase:interact")).toEqual({ phase: "interact" });
    expect(triggerOf("route_topology")).toBeUndefined();
  });

  it("patches a copy, making objects of what is not one", () => {
    const original = { a: { b: 1 }, keep: true };
    expect(patchOutput(original, { fields: [{ path: ["a", "c"], value: 2 }] })).toEqual({ a: { b: 1, c: 2 }, keep: true });
    expect(original).toEqual({ a: { b: 1 }, keep: true });
    expect(patchOutput("text", { fields: [{ path: ["x"], value: 1 }] })).toEqual({ x: 1 });
    expect(patchOutput("text", { fields: [] })).toBe("text");
  });
});
