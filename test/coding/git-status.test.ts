/**
 * gitStatus answers in one spawn what rev-parse, symbolic-ref, status and ls-files answered in
 * four: checked against those commands on real repositories, in the states that parse differently
 * (renames, paths with spaces, unmerged paths, untracked directories, detached HEAD, no commits).
 */
import { afterEach, describe, expect, it } from "vitest";
import { currentBranch, dirtyPaths, git, gitStatus, headSha } from "../../src/coding/git.js";
import { collectEvidence, startEvidence, uncommittedSince } from "../../src/coding/evidence.js";
import { tempRepo } from "./support/git-repo.js";

let repo: ReturnType<typeof tempRepo>;
afterEach(() => repo?.cleanup());

async function separately(cwd: string) {
  const untracked = (await git(cwd, ["ls-files", "--others", "--exclude-standard", "-z"])).stdout.split("\0").filter(Boolean);
  return { head: await headSha(cwd), branch: await currentBranch(cwd), paths: await dirtyPaths(cwd), untracked };
}

describe("gitStatus: one spawn, the answers of four", () => {
  it("renames, modified, staged, deleted, paths with spaces, untracked files in new directories", async () => {
    repo = tempRepo();
    repo.write("a b.txt", "one\n");
    repo.write("keep.txt", "k\n");
    repo.write("gone.txt", "g\n");
    repo.commit("files");
    repo.git("mv", "a b.txt", "c d.txt");
    repo.write("keep.txt", "k2\n");
    repo.git("rm", "-q", "gone.txt");
    repo.write("new dir/x y.txt", "x\n");
    repo.write("top.txt", "t\n");
    const status = await gitStatus(repo.path);
    expect(status).toEqual(await separately(repo.path));
    expect(status.paths).toEqual(["c d.txt", "gone.txt", "keep.txt", "new dir/x y.txt", "top.txt"]);
    expect(status.untracked).toEqual(["new dir/x y.txt", "top.txt"]);
    expect(status.branch).toBe("main");
  });

  it("an unmerged path, a detached HEAD, a branch literally named (detached), a repository without commits", async () => {
    repo = tempRepo();
    repo.write("f.txt", "base\n");
    repo.commit("base");
    repo.git("switch", "-q", "-c", "other");
    repo.write("f.txt", "other\n");
    repo.commit("other");
    repo.git("switch", "-q", "main");
    repo.write("f.txt", "main\n");
    repo.commit("main");
    try {
      repo.git("merge", "-q", "other");
    } catch {
      // the conflict is the point
    }
    const conflicted = await gitStatus(repo.path);
    expect(conflicted).toEqual(await separately(repo.path));
    expect(conflicted.paths).toEqual(["f.txt"]);
    repo.git("merge", "--abort");

    repo.git("switch", "-q", "--detach");
    const detached = await gitStatus(repo.path);
    expect(detached.branch).toBeNull();
    expect(detached).toEqual(await separately(repo.path));

    repo.git("switch", "-q", "-c", "(detached)");
    expect((await gitStatus(repo.path)).branch).toBe("(detached)");

    const fresh = tempRepo();
    try {
      fresh.git("update-ref", "-d", "HEAD");
      fresh.write("n.txt", "n\n");
      const initial = await gitStatus(fresh.path);
      expect(initial.head).toBeNull();
      expect(initial).toEqual(await separately(fresh.path));
    } finally {
      fresh.cleanup();
    }
  });

  it("uncommittedSince is collectEvidence's filesUncommitted: a file dirty before counts only once changed again", async () => {
    repo = tempRepo();
    repo.write("wip.txt", "before\n");
    repo.write("constructor", "a path named like an Object.prototype member\n");
    const start = await startEvidence(repo.path);
    expect(await uncommittedSince(repo.path, start)).toEqual([]);
    repo.write("wip.txt", "changed again\n");
    repo.write("toString", "new\n");
    const left = (await uncommittedSince(repo.path, start)).sort();
    expect(left).toEqual(["toString", "wip.txt"]);
    expect(left).toEqual((await collectEvidence(repo.path, start)).filesUncommitted);
  });
});
