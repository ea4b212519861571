/**
 * GitScript runs several git commands in one sh process: checked against the same commands run
 * one by one (git()), on the things a shell could get wrong — arguments that look like shell,
 * messages and paths with spaces and newlines, a failing command, the identity fallback, the
 * "anything changed" test against ignored and untracked files, and a timeout.
 */
import { afterEach, describe, expect, it } from "vitest";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { commit, dirtyPaths, git, GitError, GitScript, hasIdentity } from "../../src/coding/git.js";
import { checkpoint } from "../../src/coding/worktree.js";
import { collectEvidence, startEvidence } from "../../src/coding/evidence.js";
import { tempRepo } from "./support/git-repo.js";

let repo: ReturnType<typeof tempRepo>;
afterEach(() => repo?.cleanup());

describe("GitScript", () => {
  it("passes arguments as arguments: shell syntax, quotes, spaces and newlines reach git unchanged", async () => {
    repo = tempRepo();
    const message = `feat: "$(touch pwned)" \`touch pwned2\` $HOME ; exit 3 '\n\nsecond line\\n ${"${1}"} \0`.replace("\0", "end");
    repo.write("a b\nc.txt", "x\n");
    const script = new GitScript();
    script.git(["add", "-A"]);
    script.commit(message);
    const names = script.git(["show", "--name-only", "-z", "--format=", "HEAD"]);
    const out = await script.run(repo.path);
    expect(out[names]!.stdout.split("\0").filter(Boolean)).toEqual(["a b\nc.txt"]);
    expect((await git(repo.path, ["log", "-1", "--format=%B"])).stdout.trimEnd()).toBe(message.trimEnd());
    expect(existsSync(join(repo.path, "pwned")) || existsSync(join(repo.path, "pwned2"))).toBe(false);
  });

  it("a failing command is reported as git() reports it, and ends the script; an allowed failure does not", async () => {
    repo = tempRepo();
    const alone = await git(repo.path, ["rev-parse", "--verify", "no-such-ref"]).catch((e: unknown) => e as GitError);
    const script = new GitScript();
    const allowed = script.git(["rev-parse", "--verify", "-q", "also-missing"], { allowFail: true });
    script.git(["rev-parse", "--verify", "no-such-ref"]);
    const after = script.git(["rev-parse", "HEAD"]);
    const error = (await script.run(repo.path).catch((e: unknown) => e)) as GitError;
    expect(error).toBeInstanceOf(GitError);
    expect(error.message).toBe((alone as GitError).message);
    expect([error.args, error.code, error.stderr]).toEqual([(alone as GitError).args, (alone as GitError).code, (alone as GitError).stderr]);
    // Near miss: the allowed failure alone lets the script finish.
    const ok = new GitScript();
    const a = ok.git(["rev-parse", "--verify", "-q", "also-missing"], { allowFail: true });
    const h = ok.git(["rev-parse", "HEAD"]);
    const out = await ok.run(repo.path);
    expect(out[a]!.code).toBe(1);
    expect(out[h]).toEqual({ stdout: `${repo.git("rev-parse", "HEAD")}\n`, stderr: "", code: 0 });
    expect(allowed).toBe(0);
    expect(after).toBe(2);
  });

  it("commit() takes the repository's identity when user.email names one (hasIdentity), pulse's when it is blank", async () => {
    repo = tempRepo();
    repo.git("config", "user.email", "dev@example.org");
    repo.git("config", "user.name", "Dev");
    expect(await hasIdentity(repo.path)).toBe(true);
    const own = await commit(repo.path, "own", { allowEmpty: true });
    expect(own).toBe(repo.git("rev-parse", "HEAD"));
    expect(repo.git("log", "-1", "--format=%an <%ae>")).toBe("Dev <dev@example.org>");
    repo.git("config", "user.email", "  ");
    expect(await hasIdentity(repo.path)).toBe(false);
    const kit = await commit(repo.path, "kit", { allowEmpty: true });
    expect(kit).toBe(repo.git("rev-parse", "HEAD"));
    expect(repo.git("log", "-1", "--format=%an <%ae>")).toBe("pulse <pulse@localhost>");
  });

  it("checkpoint commits what dirtyPaths lists: an ignored file alone is nothing, an untracked one in a new directory is something", async () => {
    repo = tempRepo();
    repo.write(".gitignore", "build/\n*.log\n");
    repo.commit("ignore");
    repo.write("build/out.js", "x\n");
    repo.write("debug.log", "x\n");
    expect(await dirtyPaths(repo.path)).toEqual([]);
    expect(await checkpoint(repo.path, "nothing")).toBeNull();
    repo.write("new dir/line\nbreak.txt", "y\n");
    expect(await dirtyPaths(repo.path)).toEqual(["new dir/line\nbreak.txt"]);
    const sha = await checkpoint(repo.path, "something");
    expect(sha).toBe(repo.git("rev-parse", "HEAD"));
    expect(repo.git("show", "--name-only", "--format=", "-z", "HEAD").split("\0").filter(Boolean)).toEqual(["new dir/line\nbreak.txt"]);
    expect(await dirtyPaths(repo.path)).toEqual([]);
  });

  it("collectEvidence's commitFirst: with ifChanged, ignored files alone commit nothing; what is left is committed and counted", async () => {
    repo = tempRepo();
    repo.write(".gitignore", "*.log\n");
    repo.commit("ignore");
    const start = await startEvidence(repo.path);
    repo.write("debug.log", "x\n");
    const idle = await collectEvidence(repo.path, start, { commitFirst: { message: "left", ifChanged: true } });
    expect([idle.commits, idle.filesChanged, idle.progress]).toEqual([[], [], false]);
    repo.write("sp ace.txt", "a\nb\n");
    repo.write("README.md", "# changed\n");
    const done = await collectEvidence(repo.path, start, { commitFirst: { message: "left over", ifChanged: true } });
    expect(done.commits).toEqual([{ sha: repo.git("rev-parse", "HEAD"), subject: "left over" }]);
    expect(done.filesChanged).toEqual(["README.md", "sp ace.txt"]);
    expect([done.filesUncommitted, done.diffStat]).toEqual([[], { files: 2, insertions: 3, deletions: 1 }]);
    expect(await dirtyPaths(repo.path)).toEqual([]);
  });

  it("a timeout stops the command running and names it, as git() does", async () => {
    repo = tempRepo();
    const hooks = join(repo.path, ".hooks");
    mkdirSync(hooks);
    writeFileSync(join(hooks, "post-commit"), "#!/bin/sh\nexec sleep 30 >/dev/null 2>&1\n");
    chmodSync(join(hooks, "post-commit"), 0o755);
    repo.git("config", "core.hooksPath", hooks);
    const script = new GitScript();
    script.git(["rev-parse", "HEAD"]);
    script.commit("slow", { allowEmpty: true });
    const started = Date.now();
    const error = (await script.run(repo.path, { timeoutMs: 1_500 }).catch((e: unknown) => e)) as GitError;
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(error).toBeInstanceOf(GitError);
    expect(error.code).toBeNull();
    expect(error.args).toContain("commit");
  });
});
