/**
 * What stops a workflow, and what it leaves: the escape hatch halts orchestration until a person
 * resumes; a preflight that edits a tracked file abandons the workflow and cleans up; `stop`
 * mid-pulse keeps the pulse's work in a recovery commit on its kept branch; a `kill -9` mid-pulse
 * is resumed with the agent's orphan stopped and no worktree, branch or process left over.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SqliteAgentProcesses } from "../../adapters/sqlite/agent-processes.js";
import { pidAlive as alive } from "../../src/coding/liveness.js";
import { FIXED_ADD, git, PREFLIGHT, pulse, snapshot, start, startAsync, statusJson, turn, until, worlds, writeFile, writeScript } from "./helpers.js";

const world = worlds();
const TWO = "- Fix add\n- Add a changelog\n";
const CHANGELOG = turn(3, { "CHANGELOG.md": "# Changes\n\n- add adds\n" }, "docs: changelog");

describe("pulse workflow: halting, refusing, stopping, crashing", () => {
  it("reveals the escape hatch after one rejection; unresolvedIssues land in the commit body and halt until resume", () => {
    const w = world();
    const plan = writeFile(w, "plan.md", TWO);
    const issue = { issue: "the clock test fails", reason: "the clock is disputed" };
    const clock = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\ntest('clock', () => assert.ok(false));\n";
    const script = writeScript(w, [
      PREFLIGHT(),
      // Before any rejection, unresolvedIssues is not on offer: the gate's new failure rejects the completion.
      turn(1, { "test/clock.test.js": clock }, "fix(math): add", { unresolvedIssues: [issue] }),
      turn(2, { "README.md": "# app\n" }, "fix(math): add", { unresolvedIssues: [issue] }),
      CHANGELOG,
    ]);
    const r = start(w, plan, script, ["--json"]);
    expect(r.code, r.stderr).toBe(4);
    const s = JSON.parse(r.stdout);
    expect(s.workflow.status).toBe("halted");
    expect(s.workflow.reason).toMatch(/pulse 1 succeeded with unresolved issues \(the clock test fails\)/);
    expect(s.pulses.map((p: { status: string }) => p.status)).toEqual(["succeeded", "proposed"]);
    expect(s.pulses[0]).toMatchObject({ turns: 2, rejections: 1, gate: "failed", unresolved: [issue] });
    const body = git(w.repo, "log", "-1", "--format=%B", s.workflow.branch);
    expect(body).toContain("Unresolved issues:\n- the clock test fails: the clock is disputed");
    // The worktree stays for the person (the records name it); resume goes on with pulse 2.
    expect(existsSync(s.workflow.worktree)).toBe(true);
    const again = pulse(w, ["workflow", "resume", s.workflow.id.slice(0, 8), "--json"]);
    expect(again.code, again.stderr).toBe(0);
    const done = JSON.parse(again.stdout);
    expect(done.workflow.status).toBe("completed");
    expect(git(w.repo, "log", "--format=%s", `main..${s.workflow.branch}`).split("\n")).toEqual(["docs: changelog", "fix(math): add"]);
    expect(existsSync(s.workflow.worktree)).toBe(false);
  }, 120_000);

  it("abandons a workflow whose preflight modified a tracked file, naming it, and cleans up; untracked artifacts are fine but never committed", () => {
    const w = world();
    const before = snapshot(w.repo);
    const plan = writeFile(w, "plan.md", TWO);
    const bad = writeScript(w, [{ ...PREFLIGHT(), files: { "package.json": '{ "type": "module", "x": 1 }\n', "node_modules/dep/index.js": "x\n" } }], "bad.json");
    const r = start(w, plan, bad, ["--json"]);
    expect(r.code, r.stderr).toBe(1);
    const s = JSON.parse(r.stdout);
    expect(s.workflow.status).toBe("abandoned");
    expect(s.workflow.reason).toMatch(/preflight failed: the preflight modified tracked files \(package\.json\)/);
    expect(s.preflight.status).toBe("failed");
    expect(existsSync(join(w.worktrees))).toBe(true);
    expect(readdirSync(w.worktrees)).toEqual([]);
    expect(git(w.repo, "branch", "--format=%(refname:short)")).toBe("main");
    expect(snapshot(w.repo)).toEqual(before);

    // The near miss: a preflight that only creates untracked artifacts passes, and they stay out of the commits.
    const good = writeScript(w, [{ ...PREFLIGHT(), files: { "node_modules/dep/index.js": "x\n", "build/out.txt": "built\n" } }, turn(1, { "src/math.js": FIXED_ADD }, "fix(math): add adds"), { ...CHANGELOG, match: { phase: "run_pulse", iteration: 2 } }], "good.json");
    const ok = start(w, plan, good, ["--json"]);
    expect(ok.code, ok.stderr).toBe(0);
    const branch = JSON.parse(ok.stdout).workflow.branch;
    expect(git(w.repo, "ls-tree", "-r", "--name-only", branch).split("\n").sort()).toEqual(["CHANGELOG.md", "package.json", "src/math.js", "test/math.test.js"]);
  }, 120_000);

  it("stops mid-pulse: the agent is stopped, its work kept in a recovery commit on the kept pulse branch; resume finishes it as one commit", async () => {
    const w = world();
    const plan = writeFile(w, "plan.md", TWO);
    const script = writeScript(w, [PREFLIGHT(), { ...turn(1, { "src/math.js": FIXED_ADD }, "fix(math): add adds"), shell: ["sleep 30"] }, turn(2, {}, "fix(math): add adds"), CHANGELOG]);
    const run = startAsync(w, plan, script);
    const id = await run.id;
    const tree = join(w.worktrees, `repo-workflow-${id.slice(0, 8)}`);
    await until("the agent's edit", () => existsSync(join(tree, "src/math.js")) && git(tree, "status", "--porcelain").includes("src/math.js"));
    const stop = pulse(w, ["workflow", "stop", id]);
    expect(stop.code, stop.stderr).toBe(0);
    const ended = await run.exited;
    expect(ended.code, ended.stderr).toBe(0);
    const s = statusJson(w, id);
    expect(s.workflow.status).toBe("stopped");
    expect(s.pulses[0]).toMatchObject({ status: "stopped", recovery: true, branch: `${s.workflow.branch}-pulse-1` });
    const kept = `${s.workflow.branch}-pulse-1`;
    expect(git(w.repo, "log", "-1", "--format=%s", kept)).toMatch(/^\[RECOVERY\] pulse 1 stopped/);
    expect(git(w.repo, "show", `${kept}:src/math.js`)).toBe(FIXED_ADD.trim());
    expect(git(w.repo, "rev-parse", s.workflow.branch)).toBe(git(w.repo, "rev-parse", "main"));
    // A second stop is refused: it is not running.
    expect(pulse(w, ["workflow", "stop", id]).code).toBe(1);

    const again = pulse(w, ["workflow", "resume", id, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout).workflow.status).toBe("completed");
    expect(git(w.repo, "log", "--format=%s", `main..${s.workflow.branch}`).split("\n")).toEqual(["docs: changelog", "fix(math): add adds"]);
    expect(git(w.repo, "branch", "--list", `${kept}`)).toBe("");
  }, 120_000);

  it("after kill -9 mid-pulse, resume stops the orphaned agent process, keeps its work and finishes with no leaked worktree, branch or process", async () => {
    const w = world();
    const plan = writeFile(w, "plan.md", TWO);
    const script = writeScript(w, [PREFLIGHT(), { ...turn(1, { "src/math.js": FIXED_ADD }, "fix(math): add adds"), shell: ["sleep 60"] }, turn(2, {}, "fix(math): add adds"), CHANGELOG]);
    const run = startAsync(w, plan, script);
    const id = await run.id;
    const tree = join(w.worktrees, `repo-workflow-${id.slice(0, 8)}`);
    await until("the agent's edit", () => existsSync(join(tree, "src/math.js")) && git(tree, "status", "--porcelain").includes("src/math.js"));
    const processes = SqliteAgentProcesses.open(w.store);
    let recorded: number[] = [];
    for (let i = 0; i < 100 && recorded.length === 0; i++) {
      recorded = (await processes.list(id)).filter((p) => p.pid > 0).map((p) => p.pid);
      if (recorded.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(recorded.length).toBeGreaterThan(0);
    run.child.kill("SIGKILL");
    await run.exited;
    // The records still name what the killed pulse started (its watchdog stops the group within
    // moments; whatever is left, resume stops before it goes on).
    expect((await processes.list(id)).filter((p) => p.pid > 0).map((p) => p.pid)).toEqual(recorded);
    expect(statusJson(w, id).workflow.status).toBe("interrupted");

    const again = pulse(w, ["workflow", "resume", id, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    const s = JSON.parse(again.stdout);
    expect(s.workflow.status).toBe("completed");
    expect(recorded.filter(alive)).toEqual([]);
    expect(await processes.list(id)).toEqual([]);
    await processes.close();
    expect(git(w.repo, "log", "--format=%s", `main..${s.workflow.branch}`).split("\n")).toEqual(["docs: changelog", "fix(math): add adds"]);
    expect(git(w.repo, "show", `${s.workflow.branch}~1:src/math.js`)).toBe(FIXED_ADD.trim());
    expect(git(w.repo, "branch", "--format=%(refname:short)").split("\n").sort()).toEqual(["main", s.workflow.branch]);
    expect(readdirSync(w.worktrees)).toEqual([]);
    expect(git(w.repo, "worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(1);
  }, 120_000);
});

describe("pulse workflow: a runner killed between landing a pulse and recording it", () => {
  it("records the landed pulse as succeeded on resume instead of running it again", async () => {
    const w = world();
    const plan = writeFile(w, "plan.md", TWO);
    // One step per pulse and nothing more: a second run of pulse 2's agent would find no step and fail.
    const r = start(w, plan, writeScript(w, [PREFLIGHT(), turn(1, { "src/math.js": FIXED_ADD }, "fix(math): add adds"), turn(2, { "CHANGELOG.md": "- add\n" }, "docs: changelog")]), ["--json"]);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    const head = git(w.repo, "rev-parse", s.workflow.branch);
    // The records as a runner killed right after the fast-forward of pulse 2 leaves them (its branch deleted, or not yet).
    const { SqliteWorkflowRecords } = await import("../../adapters/sqlite/workflow-records.js");
    const records = SqliteWorkflowRecords.open(w.store);
    const [, second] = await records.pulses(s.workflow.id);
    await records.updatePulse(second!.id, { status: "running", checkpoint_commit_sha: null, summary: null, ended_at: null });
    await records.update(s.workflow.id, { status: "running", runner_pid: 2 ** 22 + 12345, finished_at: null });
    await records.close();
    git(w.repo, "branch", `${s.workflow.branch}-pulse-2`, s.workflow.branch);

    const again = pulse(w, ["workflow", "resume", s.workflow.id, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    const done = JSON.parse(again.stdout);
    expect(done.workflow.status).toBe("completed");
    expect(done.pulses[1]).toMatchObject({ status: "succeeded", commit: head, summary: "docs: changelog" });
    expect(git(w.repo, "rev-parse", s.workflow.branch)).toBe(head);
    expect(git(w.repo, "branch", "--format=%(refname:short)").split("\n").sort()).toEqual(["main", s.workflow.branch]);
    expect(readdirSync(w.worktrees)).toEqual([]);
  }, 120_000);
});
