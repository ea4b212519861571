import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkpoint, createWorktree, fastForward, lockWorktree, recoveryCommit, removeWorktree, WorktreeError } from "../../src/coding/worktree.js";
import { tempRepo } from "./support/git-repo.js";

let repo: ReturnType<typeof tempRepo>;
afterEach(() => repo?.cleanup());

describe("worktrees", () => {
  it("branch + worktree, checkpoint, fast-forward, clean removal", async () => {
    repo = tempRepo();
    const wt = await createWorktree({ repo: repo.path, path: ".pulse/wt/feature", branch: "pulse/feature", owner: "test" });
    expect(existsSync(join(wt.path, "README.md"))).toBe(true);
    expect(wt.baseSha).toBe(repo.git("rev-parse", "main"));
    expect(await checkpoint(wt.path, "nothing")).toBeNull(); // nothing to commit
    repo.write(".pulse/wt/feature/b.txt", "b\n");
    const sha = await checkpoint(wt.path, "feat: b");
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(await checkpoint(wt.path, "chore: empty pulse", { allowEmpty: true })).toMatch(/^[0-9a-f]{40}$/);
    expect(await fastForward(repo.path, "pulse/feature")).toBe(repo.git("rev-parse", "pulse/feature"));
    await removeWorktree(wt, { deleteBranch: true });
    expect(existsSync(wt.path)).toBe(false);
    expect(repo.git("branch", "--list", "pulse/feature")).toBe("");
  });

  it("two loops never share a worktree; a stale lock is taken over", async () => {
    repo = tempRepo();
    const wt = await createWorktree({ repo: repo.path, path: "../wt-lock-" + Date.now(), branch: "b1", owner: "loop A" });
    await expect(createWorktree({ repo: repo.path, path: wt.path, branch: "b1", owner: "loop B" })).rejects.toThrow(/in use by loop A/);
    wt.lock.release();
    const again = await createWorktree({ repo: repo.path, path: wt.path, branch: "b1", owner: "loop B" }); // free now: accepted
    again.lock.release();
    // A lock left by a dead process is stale.
    const { writeFileSync } = await import("node:fs");
    const lock = await lockWorktree(repo.path, wt.path, "x");
    writeFileSync(lock.path, JSON.stringify({ pid: 2 ** 22 + 12345, owner: "crashed loop", since: "then" }));
    const taken = await lockWorktree(repo.path, wt.path, "loop C");
    taken.release();
    await removeWorktree({ ...again, lock: taken });
  });

  it("a dirty worktree is not removed without force; a recovery commit keeps the work; the unmerged branch is kept", async () => {
    repo = tempRepo();
    const wt = await createWorktree({ repo: repo.path, path: "../wt-dirty-" + Date.now(), branch: "pulse/x" });
    repo.write(join("..", wt.path.split("/").at(-1)!, "half.txt"), "half done\n");
    await expect(removeWorktree(wt)).rejects.toMatchObject({ code: "DIRTY" });
    expect(existsSync(wt.path)).toBe(true);
    const sha = await recoveryCommit(wt.path, "pulse failed: tests red");
    expect(repo.git("log", "-1", "--format=%s", sha!)).toBe("[RECOVERY] pulse failed: tests red");
    expect(await recoveryCommit(wt.path, "again")).toBeNull(); // clean now: no empty recovery commit
    await expect(removeWorktree(wt, { deleteBranch: true })).rejects.toBeInstanceOf(WorktreeError);
    expect(existsSync(wt.path)).toBe(false);
    expect(repo.git("branch", "--list", "pulse/x")).toContain("pulse/x"); // kept: not merged
  });
});
