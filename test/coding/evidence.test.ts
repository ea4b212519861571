import { afterEach, describe, expect, it } from "vitest";
import { collectEvidence, startEvidence } from "../../src/coding/evidence.js";
import { tempRepo } from "./support/git-repo.js";

let repo: ReturnType<typeof tempRepo>;
afterEach(() => repo?.cleanup());

describe("workspace evidence from git", () => {
  it("commits, files committed and not, diff stats", async () => {
    repo = tempRepo();
    const start = await startEvidence(repo.path);
    expect(start.startSha).toMatch(/^[0-9a-f]{40}$/);
    expect(start.branch).toBe("main");
    repo.write("src/a.ts", "one\ntwo\n");
    const sha = repo.commit("feat: a");
    repo.write("README.md", "# demo\nmore\n");
    repo.write("notes.txt", "n1\nn2\nn3\n");
    const e = await collectEvidence(repo.path, start);
    expect(e.commits).toEqual([{ sha, subject: "feat: a" }]);
    expect(e.headSha).toBe(sha);
    expect(e.filesCommitted).toEqual(["src/a.ts"]);
    expect(e.filesUncommitted).toEqual(["README.md", "notes.txt"]);
    expect(e.filesChanged).toEqual(["README.md", "notes.txt", "src/a.ts"]);
    expect(e.diffStat).toEqual({ files: 3, insertions: 2 + 1 + 3, deletions: 0 });
    expect(e.progress).toBe(true);
  });

  it("no progress: nothing committed, nothing changed (and what was dirty before does not count)", async () => {
    repo = tempRepo();
    repo.write("wip.txt", "left from before\n");
    const start = await startEvidence(repo.path);
    const e = await collectEvidence(repo.path, start);
    expect(e).toMatchObject({ commits: [], filesChanged: [], progress: false });
    repo.write("wip.txt", "changed again\n"); // the near miss: the same path, changed in this iteration
    expect((await collectEvidence(repo.path, start)).filesChanged).toEqual(["wip.txt"]);
  });

  it("an edit left uncommitted is progress without a commit, and so is a new untracked file", async () => {
    repo = tempRepo();
    const start = await startEvidence(repo.path);
    repo.write("README.md", "# changed, not committed\n");
    expect(await collectEvidence(repo.path, start)).toMatchObject({ commits: [], filesCommitted: [], filesUncommitted: ["README.md"], progress: true });
    const fresh = tempRepo();
    try {
      const s = await startEvidence(fresh.path);
      fresh.write("new/file.ts", "x\n");
      expect(await collectEvidence(fresh.path, s)).toMatchObject({ commits: [], filesChanged: ["new/file.ts"], progress: true });
    } finally {
      fresh.cleanup();
    }
  });

  it("a deleted file and a repository without commits", async () => {
    repo = tempRepo();
    const start = await startEvidence(repo.path);
    repo.git("rm", "-q", "README.md");
    const e = await collectEvidence(repo.path, start);
    expect(e.filesChanged).toEqual(["README.md"]);
    expect(e.diffStat.deletions).toBe(1);
    const empty = tempRepo();
    try {
      empty.git("update-ref", "-d", "HEAD");
      const s = await startEvidence(empty.path);
      expect(s.startSha).toBeNull();
      empty.write("x.txt", "x\n");
      const sha = empty.commit("first");
      const e2 = await collectEvidence(empty.path, s);
      expect(e2.commits.map((c) => c.sha)).toEqual([sha]);
      expect(e2.progress).toBe(true);
    } finally {
      empty.cleanup();
    }
  });
});
