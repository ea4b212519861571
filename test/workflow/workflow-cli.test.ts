/**
 * `pulse workflow` end to end with the scripted driver, in real git repositories holding a tiny
 * Node project whose `node --test` fails until a pulse fixes it: the user's checkout is never
 * touched, each pulse is one checkpoint commit on the workflow branch, the gate holds pulses to
 * the preflight's baselines, and nothing is left behind that the records do not name.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BROKEN_ADD, FIXED_ADD, git, PREFLIGHT, pulse, snapshot, start, statusJson, turn, worlds, writeFile, writeScript } from "./helpers.js";

const world = worlds();
const THREE = "# Fix and extend math\n\n- Fix add so that node --test passes\n- Add mul\n  with a test\n- Check the whole\n";

describe("pulse workflow start", () => {
  it("runs a 3-pulse plan into 3 commits on the workflow branch, leaving the user's checkout byte-identical", () => {
    const w = world();
    const before = snapshot(w.repo);
    const head = git(w.repo, "rev-parse", "HEAD");
    const plan = writeFile(w, "plan.md", THREE);
    const script = writeScript(w, [
      PREFLIGHT(),
      turn(1, { "src/math.js": FIXED_ADD }, "fix(math): add adds"),
      // The agent may commit itself: the pulse is still one commit.
      { ...turn(2, { "src/mul.js": "export const mul = (a, b) => a * b;\n", "test/mul.test.js": "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { mul } from '../src/mul.js';\ntest('mul', () => assert.equal(mul(2, 3), 6));\n" }, "feat(math): mul"), commit: "wip: mul" },
      turn(3, {}, "chore: nothing left to change"),
    ]);
    const r = start(w, plan, script, ["--json"]);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary.workflow.status).toBe("completed");
    const branch = summary.workflow.branch as string;
    expect(branch).toMatch(/^pulse\/workflow\/[0-9a-f]{8}$/);
    expect(git(w.repo, "log", "--format=%s", `main..${branch}`).split("\n")).toEqual(["chore: nothing left to change", "feat(math): mul", "fix(math): add adds"]);
    // Trailers name the workflow and the pulse; the empty pulse is an empty commit.
    const body = git(w.repo, "log", "-1", "--format=%B", `${branch}~1`);
    expect(body).toContain(`Pulse-Workflow: ${summary.workflow.id}`);
    expect(body).toMatch(/^Pulse: 2$/m);
    expect(git(w.repo, "diff", "--name-only", `${branch}~1`, branch)).toBe("");
    expect(git(w.repo, "show", `${branch}~2:src/math.js`)).toBe(FIXED_ADD.trim());
    expect(summary.pulses.map((p: { status: string; gate: string }) => [p.status, p.gate])).toEqual([["succeeded", "passed"], ["succeeded", "passed"], ["succeeded", "passed"]]);
    expect(summary.baselines.commands).toEqual([{ command: "node --test", exit: 1, failures: expect.any(Number) }]);
    // Pulse branches merged and deleted, the worktree gone, the checkout as it was.
    expect(git(w.repo, "branch", "--format=%(refname:short)").split("\n").sort()).toEqual(["main", branch]);
    expect(git(w.repo, "worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(1);
    expect(existsSync(w.worktrees) ? readdirSync(w.worktrees) : []).toEqual([]);
    expect(git(w.repo, "rev-parse", "HEAD")).toBe(head);
    expect(snapshot(w.repo)).toEqual(before);
    expect(readFileSync(`${w.repo}/src/math.js`, "utf8")).toBe(`${BROKEN_ADD}// the user's edit in progress\n`);
  }, 120_000);

  it("excuses a test that failed before the workflow, and rejects a completion that breaks another until it is fixed", () => {
    const w = world({ legacy: true });
    const plan = writeFile(w, "plan.md", "- Fix add\n");
    const script = writeScript(w, [
      PREFLIGHT(),
      // First try: add fixed, but a test it did not touch broken: pulse_done is rejected.
      turn(1, { "src/math.js": FIXED_ADD, "test/extra.test.js": "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\ntest('extra', () => assert.ok(false));\n" }, "fix(math): add adds"),
      // Second try: the broken test gone; legacy.test.js still fails, as it did before: accepted.
      turn(2, { "test/extra.test.js": null }, "fix(math): add adds"),
    ]);
    const r = start(w, plan, script, ["--json"]);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.pulses[0]).toMatchObject({ status: "succeeded", turns: 2, rejections: 1, gate: "passed", files: ["src/math.js"] });
    const logs = pulse(w, ["workflow", "logs", s.workflow.id]);
    expect(logs.stdout).toMatch(/pulse 1 turn 1: reject \(2 files\): the verification commands gained failures/);
    expect(logs.stdout).toMatch(/pulse 1 turn 2: accept/);
    // The legacy failure is still there on the branch: excused, not fixed.
    expect(git(w.repo, "show", `${s.workflow.branch}:test/legacy.test.js`)).toContain("assert.equal(1, 2)");
    expect(git(w.repo, "log", "--format=%s", `main..${s.workflow.branch}`)).toBe("fix(math): add adds");
  }, 120_000);
});

describe("pulse workflow refusals", () => {
  it("refuses bad input with exit 2, one line naming the flag, and records nothing", () => {
    const w = world();
    const plan = writeFile(w, "plan.md", "- Fix add\n");
    const script = writeScript(w, [PREFLIGHT()]);
    const cases: [string[], RegExp][] = [
      [["workflow", "start"], /required option '--plan <file>'/],
      [["workflow", "start", "--plan", `${w.dir}/missing.md`], /^pulse workflow: --plan .*missing\.md: no such file$/],
      [["workflow", "start", "--plan", writeFile(w, "empty.md", "No list here.\n"), "--driver", "scripted", "--script", script, "--repo", w.repo], /empty\.md: no pulses/],
      [["workflow", "start", "--plan", plan, "--driver", "nope", "--repo", w.repo], /^pulse workflow: --driver: unknown driver "nope"/],
      [["workflow", "start", "--plan", plan, "--driver", "scripted", "--repo", w.repo], /^pulse workflow: --script: the scripted driver needs a script/],
      [["workflow", "start", "--plan", plan, "--driver", "scripted", "--script", writeFile(w, "bad.json", '{"steps": [{"outcome": "sometimes"}]}'), "--repo", w.repo], /^pulse workflow: --script: .*steps\[0\]\.outcome/],
      [["workflow", "start", "--plan", plan, "--driver", "scripted", "--script", script, "--repo", w.repo, "--base", "nonesuch"], /^pulse workflow: --base: "nonesuch" is no commit/],
      [["workflow", "start", "--plan", plan, "--driver", "scripted", "--script", script, "--repo", w.dir], /is not a git repository/],
      [["workflow", "mcp", "--phase", "review"], /--phase: "review" is not preflight or pulse/],
      [["workflow", "status", "abcd1234"], /no workflow abcd1234/],
    ];
    for (const [args, message] of cases) {
      const r = pulse(w, args);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr.trim()).toMatch(message);
    }
    expect(pulse(w, ["workflow", "status"]).stdout).toBe("no workflows\n");
    expect(git(w.repo, "branch", "--format=%(refname:short)")).toBe("main");
    // --help says what the commands are.
    const help = pulse(w, ["workflow", "--help"]);
    expect(help.stdout).toMatch(/start[\s\S]*status[\s\S]*logs[\s\S]*stop[\s\S]*resume[\s\S]*clean/);
  }, 120_000);
});
