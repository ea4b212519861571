/**
 * A session's workspace, with real git repositories: each session works in its own worktree on
 * its own branch and leaves the user's checkout byte-for-byte as it was, whatever state it is in
 * (modified, staged, untracked, detached HEAD, a merge in progress); --base and --in-place are
 * checked before anything is recorded; a failed session's worktree is reused on resume and
 * recreated after `clean`; clean removes ended sessions' worktrees and reports orphans.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Script } from "../../adapters/agents/scripted/script.js";
import { cleanWorktrees } from "../../src/coding/session/clean.js";
import { SessionInputError, SessionService, type StartInput } from "../../src/coding/session/service.js";
import { runBin } from "../cli/run-bin.js";
import { gitLog, gitRepo, harness, removeDir } from "./helpers.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
const repo = () => {
  const r = gitRepo();
  dirs.push(r);
  return r;
};
const g = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

/** Everything a person sees of a checkout: status (porcelain v2 with branch), HEAD, the index, and every file's bytes. */
function snapshot(dir: string): string {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (relative(dir, p) === ".git") continue;
      if (statSync(p).isDirectory()) walk(p);
      else files.push(`${relative(dir, p)}\n${readFileSync(p, "base64")}`);
    }
  };
  walk(dir);
  const merge = existsSync(join(dir, ".git", "MERGE_HEAD")) ? readFileSync(join(dir, ".git", "MERGE_HEAD"), "utf8") : "no merge";
  return [g(dir, "status", "--porcelain=v2", "--branch", "--untracked-files=all"), g(dir, "rev-parse", "HEAD"), (execFileSync("git", ["branch", "--show-current"], { cwd: dir, encoding: "utf8" }).trim() || "detached"), g(dir, "ls-files", "-s"), merge, ...files].join("\n--\n");
}

const AGENT: Script = {
  steps: [
    { match: { iteration: 1 }, files: { "README.md": "# rewritten by the agent\n", "src/app.js": "export {};\n" }, commit: "feat: app", text: "<signal>CONTINUE</signal>" },
    { match: { iteration: 2 }, files: { "notes.txt": "left uncommitted\n" }, text: "<signal>COMPLETE</signal>" },
  ],
};

async function setup(script: Script = AGENT) {
  const h = await harness(script);
  const worktrees = temp("pulse-wt-");
  const service = new SessionService(h.records, { driver: "scripted", contextStrategy: "none", maxIterations: 5, worktreesDir: worktrees });
  const start = (input: Omit<StartInput, "goal">) => service.create({ goal: "Build the app", driver: "scripted", script: "steps.json", ...input }, "cli");
  return { ...h, service, start, worktrees };
}

const states: [string, (dir: string) => void][] = [
  ["modified", (d) => writeFileSync(join(d, "README.md"), "# my unsaved edit\n")],
  [
    "staged",
    (d) => {
      writeFileSync(join(d, "staged.txt"), "staged\n");
      g(d, "add", "staged.txt");
      writeFileSync(join(d, "README.md"), "# staged then edited\n");
      g(d, "add", "README.md");
    },
  ],
  ["untracked", (d) => writeFileSync(join(d, "scratch.txt"), "mine, not committed\n")],
  [
    "detached HEAD",
    (d) => {
      writeFileSync(join(d, "b.txt"), "b\n");
      g(d, "add", "b.txt");
      g(d, "commit", "-q", "-m", "second");
      g(d, "switch", "-q", "--detach", "HEAD~1");
    },
  ],
  [
    "a merge in progress",
    (d) => {
      g(d, "switch", "-q", "-c", "other");
      writeFileSync(join(d, "README.md"), "# theirs\n");
      g(d, "commit", "-q", "-am", "theirs");
      g(d, "switch", "-q", "main");
      writeFileSync(join(d, "README.md"), "# ours\n");
      g(d, "commit", "-q", "-am", "ours");
      try {
        g(d, "merge", "other");
      } catch {
        // the conflict is the point: a merge in progress
      }
      expect(existsSync(join(d, ".git", "MERGE_HEAD"))).toBe(true);
    },
  ],
];

describe("a session in its own worktree", () => {
  for (const [state, prepare] of states) {
    it(`leaves a checkout with ${state} byte-for-byte as it was; the agent's commits are only on the session's branch`, async () => {
      const dir = repo();
      prepare(dir);
      const before = snapshot(dir);
      const branchesBefore = g(dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads");
      const { start, runner } = await setup();
      const s = await start({ repo: dir });
      const branch = `pulse/session/${s.id.slice(0, 8)}`;
      expect(s).toMatchObject({ branch_name: branch, base_sha: g(dir, "rev-parse", "HEAD").trim() });
      expect(s.worktree_path!.startsWith(dir)).toBe(false);
      const final = await runner.run(s.id);
      expect(final.status).toBe("complete");
      expect(snapshot(dir)).toBe(before);
      // The agent's commit and pulse's commit of what it left uncommitted are on its branch, and on no other.
      expect(gitLog(dir, branch).slice(0, 2)).toEqual([expect.stringMatching(/^chore\(pulse\): iteration 2: /), "feat: app"]);
      const agentSha = g(dir, "rev-parse", `${branch}~1`).trim();
      expect(g(dir, "branch", "--contains", agentSha, "--format=%(refname:short)").trim()).toBe(branch);
      expect(g(dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads").replace(/^refs\/heads\/pulse\/session\/.*\n/m, "")).toBe(branchesBefore);
      // Its worktree is gone (the branch stays for review), and git knows no stale worktree.
      expect(existsSync(s.worktree_path!)).toBe(false);
      expect(g(dir, "worktree", "list", "--porcelain")).not.toContain(s.worktree_path!);
      // What the agent left uncommitted was committed with its iteration: nothing was left to recover.
      expect(final.status_reason).toBe("the agent signalled COMPLETE");
    }, 30_000);
  }

  it("starts from --base, and from an existing --branch as it is; an unknown base is refused before anything is recorded", async () => {
    const dir = repo();
    const first = g(dir, "rev-parse", "HEAD").trim();
    writeFileSync(join(dir, "later.txt"), "later\n");
    g(dir, "add", "later.txt");
    g(dir, "commit", "-q", "-m", "later");
    const { start, runner, records } = await setup({ steps: [{ text: "<signal>COMPLETE</signal>" }] });
    await expect(start({ repo: dir, base: "no-such-ref" })).rejects.toThrow(/^base: "no-such-ref" is no commit of /);
    await expect(start({ repo: dir, base: "no-such-ref" })).rejects.toBeInstanceOf(SessionInputError);
    expect(await records.list()).toEqual([]);
    const s = await start({ repo: dir, base: "HEAD~1", branch: "feature/x" });
    expect(s).toMatchObject({ branch_name: "feature/x", base_ref: "HEAD~1", base_sha: first });
    await runner.run(s.id);
    expect(gitLog(dir, "feature/x")).toEqual(["initial"]);
    // The branch exists now: a base with it is refused, without one it goes on from where it is.
    await expect(start({ repo: dir, base: "main", branch: "feature/x" })).rejects.toThrow(/^branch: feature\/x exists already/);
    await expect(start({ repo: dir, branch: "main" })).rejects.toThrow(/^branch: main is checked out in /);
    expect((await start({ repo: dir, branch: "feature/x" })).base_sha).toBe(first);
  }, 30_000);

  it("keeps a failed session's worktree and reuses it on resume; after clean, resume recreates it from the branch", async () => {
    const dir = repo();
    const { start, runner, records, worktrees } = await setup({
      steps: [
        { match: { iteration: 1 }, files: { "a.js": "1\n" }, commit: "a", text: "<signal>CONTINUE</signal>" },
        { match: { iteration: 2 }, outcome: "crash" },
        { match: { iteration: 3 }, files: { "b.js": "2\n" }, commit: "b", text: "<signal>COMPLETE</signal>" },
      ],
    });
    const s = await start({ repo: dir, maxIterations: 2 });
    const failed = await runner.run(s.id);
    expect(failed.status).toBe("failed");
    expect(existsSync(join(s.worktree_path!, "a.js"))).toBe(true);
    // Work left in the kept worktree is still there when the session resumes in it.
    writeFileSync(join(s.worktree_path!, "wip.txt"), "mine\n");
    const dry = await cleanWorktrees(await records.list(), { dir: worktrees, dryRun: true });
    expect(dry).toEqual([expect.objectContaining({ path: s.worktree_path, session: s.id, outcome: "would remove" })]);
    expect(existsSync(join(s.worktree_path!, "wip.txt"))).toBe(true);
    const cleaned = await cleanWorktrees(await records.list(), { dir: worktrees });
    expect(cleaned).toEqual([expect.objectContaining({ outcome: "removed", detail: expect.stringMatching(/recovery commit [0-9a-f]{8}/) })]);
    expect(existsSync(s.worktree_path!)).toBe(false);
    expect(gitLog(dir, s.branch_name!)[0]).toMatch(/^\[RECOVERY\] session .*kept by pulse session clean$/);
    await records.update(s.id, { max_iterations: 5 });
    const events: string[] = [];
    const done = await runner.run(s.id, { onEvent: (e) => e.type === "session.started" && events.push(e.recovered ?? "") });
    expect(done.status).toBe("complete");
    expect(events[0]).toContain(`its worktree ${s.worktree_path} was recreated from branch ${s.branch_name}`);
    expect(gitLog(dir, s.branch_name!).slice(0, 3)).toEqual(["b", `[RECOVERY] session ${s.id}: left uncommitted in its worktree, kept by pulse session clean`, "a"]);
    expect(g(dir, "show", `${s.branch_name}:wip.txt`)).toBe("mine\n");
  }, 30_000);

  it("removes a blocked session's worktree (its branch stays) and recreates it when the session resumes", async () => {
    const dir = repo();
    const { start, runner } = await setup({
      steps: [
        { match: { iteration: 1 }, files: { "a.js": "1\n" }, commit: "a", text: "I need the API key. <signal>BLOCKED</signal>" },
        { match: { iteration: 2 }, shell: ["test -f a.js"], commit: "b", text: "<signal>COMPLETE</signal>" },
      ],
    });
    const s = await start({ repo: dir });
    expect((await runner.run(s.id)).status).toBe("blocked");
    expect(existsSync(s.worktree_path!)).toBe(false);
    expect(gitLog(dir, s.branch_name!)).toEqual(["a", "initial"]);
    const events: string[] = [];
    expect((await runner.run(s.id, { onEvent: (e) => e.type === "session.started" && events.push(e.recovered ?? "") })).status).toBe("complete");
    expect(events).toEqual([`its worktree ${s.worktree_path} was recreated from branch ${s.branch_name}`]);
    expect(gitLog(dir, s.branch_name!)).toEqual(["b", "a", "initial"]);
    expect(gitLog(dir)).toEqual(["initial"]);
  }, 30_000);

  it("reuses a failed session's worktree as it is on resume", async () => {
    const dir = repo();
    const { start, runner, records } = await setup({
      steps: [
        { match: { iteration: 1 }, outcome: "crash" },
        { match: { iteration: 2 }, shell: ["test -f kept.txt"], commit: "used kept.txt", text: "<signal>COMPLETE</signal>" },
      ],
    });
    const s = await start({ repo: dir, maxIterations: 1 });
    expect((await runner.run(s.id)).status).toBe("failed");
    writeFileSync(join(s.worktree_path!, "kept.txt"), "x\n");
    await records.update(s.id, { max_iterations: 3 });
    const events: string[] = [];
    expect((await runner.run(s.id, { onEvent: (e) => e.type === "session.started" && events.push(e.recovered ?? "") })).status).toBe("complete");
    expect(events).toEqual([""]);
    expect(gitLog(dir, s.branch_name!)[0]).toBe("used kept.txt");
  }, 30_000);

  it("aborts a failed session nothing runs with a recovery commit in its worktree, which stays until clean", async () => {
    const dir = repo();
    const { start, runner, service } = await setup({ steps: [{ outcome: "crash" }] });
    const s = await start({ repo: dir, maxIterations: 1 });
    expect((await runner.run(s.id)).status).toBe("failed");
    writeFileSync(join(s.worktree_path!, "half.js"), "// unfinished\n");
    const before = snapshot(dir);
    const { session } = await service.abort(s.id);
    expect(session.status_reason).toMatch(/^aborted while failed; unfinished work kept in recovery commit [0-9a-f]{8}$/);
    expect(gitLog(dir, s.branch_name!)[0]).toBe(`[RECOVERY] session ${s.id} aborted while failed`);
    expect(existsSync(s.worktree_path!)).toBe(true);
    expect(snapshot(dir)).toBe(before);
  }, 30_000);

  it("clean reports worktrees no session owns, and removes them only with --force (keeping their work); a paused session's only when named", async () => {
    const dir = repo();
    const { start, records, worktrees } = await setup();
    const paused = await start({ repo: dir });
    g(dir, "worktree", "add", "-q", "-b", "pulse/session/paused00", paused.worktree_path!);
    await records.update(paused.id, { status: "paused" });
    const orphan = join(worktrees, "app-deadbeef");
    g(dir, "worktree", "add", "-q", "-b", "pulse/session/deadbeef", orphan);
    writeFileSync(join(orphan, "left.txt"), "left\n");
    const stray = join(worktrees, "not-a-worktree");
    execFileSync("mkdir", ["-p", stray]);

    const report = await cleanWorktrees(await records.list(), { dir: worktrees });
    expect(report.map((a) => [a.path, a.outcome])).toEqual([
      [paused.worktree_path, "skipped"],
      [orphan, "orphan"],
      [stray, "orphan"],
    ]);
    expect(existsSync(orphan) && existsSync(paused.worktree_path!)).toBe(true);

    const forced = await cleanWorktrees(await records.list(), { dir: worktrees, force: true });
    expect(forced.find((a) => a.path === orphan)).toMatchObject({ outcome: "removed", branch: "pulse/session/deadbeef" });
    expect(existsSync(orphan)).toBe(false);
    expect(g(dir, "show", "pulse/session/deadbeef:left.txt")).toBe("left\n");
    expect(existsSync(stray)).toBe(true); // not git's: pulse never deletes it
    expect(existsSync(paused.worktree_path!)).toBe(true);

    const named = await cleanWorktrees(await records.list(), { dir: worktrees, only: (await records.get(paused.id))! });
    expect(named).toEqual([expect.objectContaining({ outcome: "removed", session: paused.id })]);
  }, 30_000);
});

describe("an in-place session", () => {
  it("refuses a dirty checkout naming its first files, and takes the near misses (--allow-dirty, a clean checkout)", async () => {
    for (const [state, prepare] of states.slice(0, 3)) {
      const dir = repo();
      prepare(dir);
      const { start, records } = await setup();
      await expect(start({ repo: dir, inPlace: true }), state).rejects.toThrow(/^inPlace: .* has uncommitted or untracked files \((README\.md|scratch\.txt|staged\.txt)/);
      expect(await records.list()).toEqual([]);
      expect((await start({ repo: dir, inPlace: true, allowDirty: true })).worktree_path).toBeNull();
    }
    const clean = repo();
    const { start, runner } = await setup();
    const s = await start({ repo: clean, inPlace: true });
    expect(s).toMatchObject({ worktree_path: null, branch_name: null });
    expect((await runner.run(s.id)).status).toBe("complete");
    // Today's behaviour: the agent commits in the checkout, on its branch (and what it left, with its iteration).
    expect(gitLog(clean).slice(0, 2)).toEqual([expect.stringMatching(/^chore\(pulse\): iteration 2: /), "feat: app"]);
    await expect(start({ repo: clean, allowDirty: true })).rejects.toThrow(/^allowDirty: is for an in-place session/);
    await expect(start({ repo: clean, inPlace: true, base: "HEAD" })).rejects.toThrow(/^base: an in-place session/);
  }, 30_000);

  it("is refused in one line by the bin, and --allow-dirty is the near miss", () => {
    const dir = repo();
    const script = join(temp("pulse-script-"), "steps.json");
    writeFileSync(script, JSON.stringify({ steps: [{ text: "<signal>COMPLETE</signal>" }] }));
    writeFileSync(join(dir, "scratch.txt"), "mine\n");
    const store = join(temp("pulse-store-"), "pulse.db");
    const pulse = (...args: string[]) => runBin("pulse", ["session", "start", "--goal", "x", "--driver", "scripted", "--script", script, "--store", store, ...args], { cwd: dir, env: { HOME: dir } });
    const refused = pulse("--in-place");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^pulse session: --in-place: .* has uncommitted or untracked files \(scratch\.txt\); .*--allow-dirty.*\n$/);
    const bad = pulse("--base", "nope");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^pulse session: --base: "nope" is no commit of .*\n$/);
    const ok = pulse("--in-place", "--allow-dirty");
    expect(ok.code, ok.stderr).toBe(0);
  }, 30_000);
});
