/**
 * The workflow's pure parts: reading a plan (Markdown, JSON), judging a pulse turn (accept,
 * reject with reasons, escape hatch, extension, nudges, limits), failures that still stand, the
 * gate's pattern baselines; and its SQLite records surviving a reopen.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SqliteWorkflowRecords } from "../../adapters/sqlite/workflow-records.js";
import { compareToBaseline, excuseKnown } from "../../src/coding/gate.js";
import { completionOf, judgeTurn, standingFailures, type TurnFacts } from "../../src/coding/workflow/decide.js";
import { parsePlan, PlanError } from "../../src/coding/workflow/plan.js";

describe("parsePlan", () => {
  it("reads one pulse per top-level Markdown item, with the indented lines under it as its description", () => {
    const plan = parsePlan("# Math\n\nIntro paragraph.\n\n- Fix add\n  so that 2 + 2 is 4\n\n  (really)\n1. Add mul\n* Document\n\n## Notes\nnot a pulse\n", "plan.md");
    expect(plan.title).toBe("Math");
    expect(plan.pulses.map((p) => p.title)).toEqual(["Fix add", "Add mul", "Document"]);
    expect(plan.pulses[0]!.description).toBe("Fix add\nso that 2 + 2 is 4\n\n(really)");
  });

  it("reads JSON plans, objects or a bare list, and names the wrong field", () => {
    expect(parsePlan('{"title": "T", "pulses": [{"id": "p1", "title": "A", "description": "do A"}, "B"]}', "plan.json")).toEqual({ title: "T", pulses: [{ id: "p1", title: "A", description: "do A" }, { title: "B", description: "B" }] });
    expect(parsePlan('["only"]', "plan.json").pulses).toHaveLength(1);
    expect(() => parsePlan('{"pulses": [{"title": "A", "owner": "me"}]}', "plan.json")).toThrow("plan.json: pulses[0].owner: unknown field");
    expect(() => parsePlan('{"pulses": []}', "plan.json")).toThrow(PlanError);
    expect(() => parsePlan("{nope", "plan.json")).toThrow(/plan\.json: not valid JSON/);
    expect(() => parsePlan("Some prose, no list.\n", "plan.md")).toThrow(/plan\.md: no pulses/);
  });

  it("gives back exactly the titles of any list it is given (property)", () => {
    const title = fc.string({ minLength: 1, maxLength: 40 }).map((s) => s.replace(/[\r\n\u2028\u2029]/g, " ").trim()).filter((s) => s.length > 0 && !/^([-*+#]|\d+[.)])/.test(s) && !s.includes("```") && !s.includes("~~~"));
    fc.assert(
      fc.property(fc.array(title, { minLength: 1, maxLength: 12 }), fc.constantFrom("- ", "* ", "1. "), (titles, marker) => {
        expect(parsePlan(titles.map((t) => `${marker}${t}`).join("\n"), "p.md").pulses.map((p) => p.title)).toEqual(titles);
      }),
    );
  });
});

const LIMITS = { maxTurnsPerPulse: 5, maxNudges: 2, maxRejections: 1, autoExtension: true };
const facts = (o: Partial<TurnFacts>): TurnFacts => ({ status: "ok", aborted: false, failures: [], gate: null, turns: 1, rejections: 0, nudges: 0, limits: LIMITS, ...o });
const FAILING = { passed: false, checks: [{ command: "node --test", exit: 1, newFailures: ["not ok N - adds"], durationMs: 5 }] };

describe("judgeTurn", () => {
  it("accepts a pulse_done with a summary, no standing failure and a gate that holds", () => {
    expect(judgeTurn(facts({ completion: { summary: "feat: x", unresolvedIssues: [] }, gate: { passed: true, checks: [] } }))).toMatchObject({ decision: "accept", summary: "feat: x", unresolvedIssues: [] });
  });

  it("rejects a completion with the reasons, and opens the escape hatch only after maxRejections", () => {
    const issue = { issue: "flaky", reason: "pre-existing" };
    const first = judgeTurn(facts({ completion: { summary: "feat: x", unresolvedIssues: [issue] }, gate: FAILING, failures: ["edit_file a.ts failed: no match"] }));
    expect(first).toMatchObject({ decision: "reject", rejections: 1 });
    expect(first.feedback).toContain("not ok N - adds");
    expect(first.feedback).toContain("edit_file a.ts failed");
    expect(first.feedback).toContain("unresolvedIssues");
    // Revealed now: the same completion with issues is accepted, and they are kept.
    expect(judgeTurn(facts({ completion: { summary: "feat: x", unresolvedIssues: [issue] }, gate: FAILING, turns: 2, rejections: 1 }))).toMatchObject({ decision: "accept", unresolvedIssues: [issue] });
    // Without issues it is still rejected; and a profile of 2 keeps the hatch shut after one.
    expect(judgeTurn(facts({ completion: { summary: "feat: x", unresolvedIssues: [] }, gate: FAILING, turns: 2, rejections: 1 })).decision).toBe("reject");
    expect(judgeTurn(facts({ completion: { summary: "feat: x", unresolvedIssues: [issue] }, gate: FAILING, turns: 2, rejections: 1, limits: { ...LIMITS, maxRejections: 2 } })).decision).toBe("reject");
    // A completion without a summary is rejected even when everything passes.
    expect(judgeTurn(facts({ completion: { summary: "", unresolvedIssues: [] } })).decision).toBe("reject");
  });

  it("extends on request_extension, nudges a turn without a completion tool a bounded number of times, fails over the limit", () => {
    expect(judgeTurn(facts({ extension: { reason: "more", remaining: ["tests"] } }))).toMatchObject({ decision: "extend", extensions: 1, feedback: "Continue. Remaining: tests." });
    expect(judgeTurn(facts({ extension: { reason: "more", remaining: [] }, limits: { ...LIMITS, autoExtension: false } })).decision).toBe("halt");
    expect(judgeTurn(facts({ nudges: 1 }))).toMatchObject({ decision: "nudge", nudges: 2 });
    expect(judgeTurn(facts({ nudges: 2 }))).toMatchObject({ decision: "fail", nudges: 3 });
    expect(judgeTurn(facts({ turns: 5, extension: { reason: "more", remaining: [] } })).decision).toBe("fail");
    expect(judgeTurn(facts({ turns: 4, extension: { reason: "more", remaining: [] } })).decision).toBe("extend");
    expect(judgeTurn(facts({ turns: 5, completion: { summary: "x", unresolvedIssues: [] }, gate: FAILING })).decision).toBe("fail");
  });

  it("stops a turn that was aborted and fails one the agent did not finish", () => {
    expect(judgeTurn(facts({ aborted: true, completion: { summary: "x", unresolvedIssues: [] } })).decision).toBe("stop");
    expect(judgeTurn(facts({ status: "timeout", error: "15 min" }))).toMatchObject({ decision: "fail", reason: "the agent's turn ended timeout: 15 min" });
  });

  it("reads pulse_done under its aliases and MCP names", () => {
    expect(completionOf([{ id: "1", name: "mcp__pulse__complete_pulse", arguments: { summary: " fix: y " } }])).toEqual({ summary: "fix: y", unresolvedIssues: [] });
    expect(completionOf([{ id: "1", name: "pulse_signal", arguments: { signal: "COMPLETE" } }])).toBeUndefined();
  });
});

describe("standingFailures", () => {
  it("counts a failed edit unless a later one on the same path succeeded, and a failed shell unless a later shell succeeded", () => {
    expect(standingFailures([{ name: "edit_file", ok: false, output: "no match", path: "a.ts" }, { name: "edit_file", ok: true, output: "", path: "a.ts" }])).toEqual([]);
    expect(standingFailures([{ name: "edit_file", ok: false, output: "no match", path: "a.ts" }, { name: "edit_file", ok: true, output: "", path: "b.ts" }])).toEqual(["edit_file a.ts failed: no match"]);
    expect(standingFailures([{ name: "shell", ok: false, output: "exit 1" }, { name: "shell", ok: true, output: "" }])).toEqual([]);
    expect(standingFailures([{ name: "read_file", ok: false, output: "ENOENT" }])).toEqual([]);
  });
});

describe("the gate's pattern baselines", () => {
  it("excuse failure lines a recorded pattern names (in its file, when it names one), and only those", () => {
    const v = compareToBaseline([{ command: "tsc", exit: 2, output: "src/Legacy.ts(3,1): error TS6385: obsolete\nsrc/New.ts(1,1): error TS2322: bad type\n", durationMs: 1 }], [{ command: "tsc", exit: 0, failures: [] }]);
    expect(v.passed).toBe(false);
    const excused = excuseKnown(v, [{ issueType: "Warning", source: "Build", pattern: "TS6385", filePath: "src/Legacy.ts" }]);
    expect(excused.checks[0]!.newFailures).toHaveLength(1);
    expect(excused.checks[0]!.newFailures[0]).toContain("TSN: bad type");
    expect(excuseKnown(v, [{ issueType: "Error", source: "Build", pattern: "TS6385", filePath: "src/Other.ts" }]).checks[0]!.newFailures).toHaveLength(2);
  });
});

describe("SQLite workflow records", () => {
  it("keep a workflow, its pulses, its preflight and baselines across a reopen", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-wf-records-"));
    try {
      const path = join(dir, "pulse.db");
      let r = SqliteWorkflowRecords.open(path);
      await r.create({ id: "wf-1234", title: "t", plan_path: null, repo_path: "/r", base_ref: "main", base_sha: "abc", base_note: null, branch_name: "b", worktree_path: "/w", driver: { name: "scripted" }, verify: { checks: ["node --test"] } }, [{ id: "p1", number: 1, title: "A", description: "do A" }]);
      const [p] = await r.pulses("wf-1234");
      await r.updatePulse(p!.id, { status: "succeeded", has_unresolved_issues: true, unresolved_issues: [{ issue: "i", reason: "r" }], is_recovery_checkpoint: false });
      await r.putPreflight({ id: "s1", workflow_id: "wf-1234", status: "completed", progress_message: null, error_message: null, summary: "ok", setup_commands: ["npm ci"], build_success: true, created_at: "t", completed_at: "t" });
      await r.addBaselines([{ id: "b1", workflow_id: "wf-1234", issueType: "Error", source: "Test", pattern: "legacy" }]);
      await r.appendEvents("wf-1234", [{ at: "t", type: "x", data: { a: 1 } }]);
      await r.close();
      r = SqliteWorkflowRecords.open(path);
      expect((await r.get("wf-1"))?.verify).toEqual({ checks: ["node --test"] });
      expect((await r.pulses("wf-1234"))[0]).toMatchObject({ status: "succeeded", has_unresolved_issues: true, is_recovery_checkpoint: false, unresolved_issues: [{ issue: "i", reason: "r" }] });
      expect((await r.preflight("wf-1234"))).toMatchObject({ build_success: true, setup_commands: ["npm ci"] });
      expect(await r.baselines("wf-1234")).toEqual([{ id: "b1", workflow_id: "wf-1234", issueType: "Error", source: "Test", pattern: "legacy" }]);
      expect(await r.events("wf-1234")).toEqual([{ seq: 1, at: "t", type: "x", data: { a: 1 } }]);
      await expect(r.update("nope", { turns: 1 })).rejects.toThrow("no workflow nope");
      await r.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
