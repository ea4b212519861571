/**
 * `--merge ff|squash|rebase`: the workflow branch goes into its base branch when every pulse
 * succeeded, and never into a branch a checkout has (the user's included): that one is left for
 * the person, with the command to run.
 */
import { describe, expect, it } from "vitest";
import { FIXED_ADD, git, PREFLIGHT, pulse, snapshot, start, turn, worlds, writeFile, writeScript } from "./helpers.js";

const world = worlds();
const PLAN = "# Math\n\n- Fix add\n- Add a changelog\n";
const steps = (extra: Record<string, unknown> = {}) => [PREFLIGHT(), { ...turn(1, { "src/math.js": FIXED_ADD }, "fix(math): add adds"), ...extra }, turn(2, { "CHANGELOG.md": "- add adds\n" }, "docs: changelog")];

describe("pulse workflow start --merge", () => {
  it("ff moves a base branch no checkout has to the workflow branch; squash makes it one commit; the workflow branch keeps its pulses", () => {
    const w = world();
    git(w.repo, "branch", "release");
    const plan = writeFile(w, "plan.md", PLAN);
    const ff = start(w, plan, writeScript(w, steps()), ["--base", "release", "--merge", "ff", "--json"]);
    expect(ff.code, ff.stderr).toBe(0);
    const a = JSON.parse(ff.stdout).workflow;
    expect(a.reason).toMatch(/merged into release \(ff\) at [0-9a-f]{8}/);
    expect(git(w.repo, "rev-parse", "release")).toBe(git(w.repo, "rev-parse", a.branch));

    git(w.repo, "branch", "release2", "main");
    const sq = start(w, plan, writeScript(w, steps(), "s2.json"), ["--base", "release2", "--merge", "squash", "--json"]);
    expect(sq.code, sq.stderr).toBe(0);
    const b = JSON.parse(sq.stdout).workflow;
    expect(git(w.repo, "log", "--format=%s", "main..release2")).toBe("Math");
    expect(git(w.repo, "log", "-1", "--format=%b", "release2")).toContain("- fix(math): add adds\n- docs: changelog");
    expect(git(w.repo, "rev-parse", "release2^{tree}")).toBe(git(w.repo, "rev-parse", `${b.branch}^{tree}`));
    expect(git(w.repo, "log", "--format=%s", `main..${b.branch}`).split("\n")).toHaveLength(2);
  }, 120_000);

  it("rebase onto a base that moved meanwhile; a base checked out in the user's checkout is left alone, said so", () => {
    const w = world();
    git(w.repo, "branch", "release");
    const plan = writeFile(w, "plan.md", PLAN);
    // Someone commits to release while pulse 1 works (no checkout involved).
    const moveRelease = { shell: [`git -C ${w.repo} update-ref refs/heads/release $(git -C ${w.repo} commit-tree -p release -m "meanwhile" release^{tree})`] };
    const r = start(w, plan, writeScript(w, steps(moveRelease)), ["--base", "release", "--merge", "rebase", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).workflow.reason).toMatch(/merged into release \(rebase\)/);
    expect(git(w.repo, "log", "--format=%s", "main..release").split("\n")).toEqual(["docs: changelog", "fix(math): add adds", "meanwhile"]);

    const before = snapshot(w.repo);
    const mine = start(w, plan, writeScript(w, steps(), "s2.json"), ["--base", "main", "--merge", "ff", "--json"]);
    expect(mine.code, mine.stderr).toBe(0);
    const s = JSON.parse(mine.stdout).workflow;
    expect(s.reason).toMatch(new RegExp(`not merged: main is checked out in ${w.repo}, which pulse never touches; merge it yourself: git -C ${w.repo} merge --ff-only ${s.branch}`));
    expect(snapshot(w.repo)).toEqual(before);
  }, 120_000);

  it("refuses a mode it does not know and a base that is no branch, before anything is recorded", () => {
    const w = world();
    const plan = writeFile(w, "plan.md", PLAN);
    const script = writeScript(w, steps());
    const bad = start(w, plan, script, ["--merge", "octopus"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('pulse workflow: --merge: "octopus" is not one of ff, squash, rebase');
    const sha = git(w.repo, "rev-parse", "HEAD");
    const detached = start(w, plan, script, ["--base", sha, "--merge", "ff"]);
    expect(detached.code).toBe(2);
    expect(detached.stderr).toMatch(/--merge: the base .* is not a branch to merge into/);
    expect(pulse(w, ["workflow", "status"]).stdout).toBe("no workflows\n");
  }, 60_000);
});
