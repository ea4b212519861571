/**
 * Worktrees for coding loops: a branch and `git worktree add` per loop (or per pulse), a lock so
 * two loops never work in one, checkpoint commits, a `[RECOVERY]` commit only when there is
 * something to keep, and clean-up that refuses to throw work away (`git worktree remove`
 * without `--force` unless asked, branches deleted only when merged).
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { createHash } from "node:crypto";
import { isAbsolute, join, resolve } from "node:path";
import { commit, dirtyPaths, git, GitError, GitScript, headSha } from "./git.js";
import { pidAlive } from "./liveness.js";

export class WorktreeError extends Error {
  constructor(
    readonly code: "LOCKED" | "DIRTY" | "EXISTS" | "NOT_A_REPOSITORY" | "BRANCH_EXISTS" | "NOT_MERGED",
    message: string,
  ) {
    super(message);
    this.name = "WorktreeError";
  }
}

export interface WorktreeLock {
  path: string;
  release(): void;
}

interface LockInfo {
  pid: number;
  owner: string;
  since: string;
}

/**
 * Takes the lock of a worktree path (a file under the repository's git folder, created
 * exclusively). A lock whose process is gone is stale and taken over; a live one is refused,
 * naming its owner.
 */
export async function lockWorktree(repo: string, worktreePath: string, owner: string): Promise<WorktreeLock> {
  const common = resolve(repo, (await git(repo, ["rev-parse", "--git-common-dir"])).stdout.trim());
  const dir = join(common, "pulse-locks");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${createHash("sha256").update(resolve(worktreePath)).digest("hex").slice(0, 16)}.lock`);
  const info: LockInfo = { pid: process.pid, owner, since: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, "wx");
      writeSync(fd, JSON.stringify(info));
      closeSync(fd);
      let held = true;
      return {
        path: file,
        release: () => {
          if (held) rmSync(file, { force: true });
          held = false;
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const holder = readLock(file);
      if (holder && pidAlive(holder.pid)) {
        throw new WorktreeError("LOCKED", `worktree ${worktreePath} is in use by ${holder.owner} (pid ${holder.pid}, since ${holder.since}); two loops never share a worktree`);
      }
      rmSync(file, { force: true }); // stale: its process is gone
    }
  }
  throw new WorktreeError("LOCKED", `worktree ${worktreePath} could not be locked`);
}

function readLock(file: string): LockInfo | undefined {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as LockInfo;
  } catch {
    return undefined;
  }
}

export interface Worktree {
  repo: string;
  path: string;
  branch: string;
  /** The commit the branch started from. */
  baseSha: string;
  lock: WorktreeLock;
}

export interface CreateWorktreeOptions {
  repo: string;
  /** Where the worktree goes; relative paths are against the repository. */
  path: string;
  branch: string;
  /** Start point of a new branch (default HEAD). An existing branch is checked out as it is. */
  base?: string;
  /** Who holds the lock, for the message another loop gets. */
  owner?: string;
}

export async function createWorktree(options: CreateWorktreeOptions): Promise<Worktree> {
  const repo = resolve(options.repo);
  if ((await git(repo, ["rev-parse", "--git-dir"], { allowFail: true })).code !== 0) throw new WorktreeError("NOT_A_REPOSITORY", `${repo} is not a git repository`);
  const path = isAbsolute(options.path) ? options.path : resolve(repo, options.path);
  const lock = await lockWorktree(repo, path, options.owner ?? `pid ${process.pid}`);
  try {
    const exists = (await git(repo, ["rev-parse", "--verify", "-q", `refs/heads/${options.branch}`], { allowFail: true })).code === 0;
    const listed = (await git(repo, ["worktree", "list", "--porcelain"])).stdout.split("\n").some((l) => l === `worktree ${path}`);
    if (!listed) {
      if (exists) {
        if (options.base) throw new WorktreeError("BRANCH_EXISTS", `branch ${options.branch} exists already; leave out base to use it as it is`);
        await git(repo, ["worktree", "add", path, options.branch]);
      } else {
        await git(repo, ["worktree", "add", "-b", options.branch, path, options.base ?? "HEAD"]);
      }
    }
    const baseSha = (await headSha(path)) ?? "";
    return { repo, path, branch: options.branch, baseSha, lock };
  } catch (e) {
    lock.release();
    if (e instanceof GitError && /already exists/.test(e.stderr)) throw new WorktreeError("EXISTS", `${path} exists and is not a worktree of ${repo}: ${e.message}`);
    throw e;
  }
}

/** Commits everything in the worktree (untracked included). Returns the new sha, or null when there was nothing and `allowEmpty` is off. */
export async function checkpoint(worktreePath: string, message: string, options: { allowEmpty?: boolean; dirty?: boolean; exclude?: readonly string[] } = {}): Promise<string | null> {
  const skip = (options.exclude ?? []).map((x) => `:(exclude,top)${x}`);
  if (options.allowEmpty) {
    // A commit either way: stage everything (but the excluded) and commit, in one process.
    const script = new GitScript();
    script.git(["add", "-A", "--", ".", ...skip]);
    script.commit(message, { allowEmpty: true });
    return committed(script, worktreePath);
  }
  if (skip.length === 0) {
    // `dirty`: the caller has just seen changed paths (git status), so asking again is work wasted.
    if (options.dirty === false) return null;
    const script = new GitScript();
    if (options.dirty === undefined) script.ifChanged();
    script.git(["add", "-A"]);
    script.commit(message);
    return committed(script, worktreePath, options.dirty === undefined);
  }
  const excluded = (p: string) => (options.exclude ?? []).some((x) => p === x || p.startsWith(x.endsWith("/") ? x : `${x}/`));
  const dirty = (await dirtyPaths(worktreePath)).filter((p) => !excluded(p)).length > 0;
  if (!dirty) return null;
  // Untracked artifacts a loop made itself (a preflight's node_modules) stay out of its commits.
  await git(worktreePath, ["add", "-A", "--", ".", ...skip]);
  const staged = (await git(worktreePath, ["diff", "--cached", "--quiet"], { allowFail: true })).code !== 0;
  if (!staged) return null;
  return commit(worktreePath, message);
}

/** Runs a script that commits (in an ifChanged block when `block`), then reads HEAD: the new sha, or null when it did not commit. */
async function committed(script: GitScript, cwd: string, block = false): Promise<string | null> {
  const head = script.git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], { allowFail: true });
  if (block) script.end();
  const out = await script.run(cwd);
  return out[head]?.code === 0 ? out[head].stdout.trim() : null;
}

/** A `[RECOVERY]` commit of unfinished work (after a failure, stop or abort), only when the tree is dirty. */
export function recoveryCommit(worktreePath: string, reason: string, options: { exclude?: readonly string[] } = {}): Promise<string | null> {
  return checkpoint(worktreePath, `[RECOVERY] ${reason}`, options);
}

/** Fast-forwards `into` (checked out in `cwd`) to `from`; refuses anything but a fast-forward. */
export async function fastForward(cwd: string, from: string): Promise<string> {
  await git(cwd, ["merge", "--ff-only", "-q", from]);
  return (await headSha(cwd))!;
}

export interface RemoveOptions {
  /** Discard uncommitted changes (`git worktree remove --force`). Off by default: a dirty worktree is refused. */
  force?: boolean;
  /** Delete the branch too, only if merged (`git branch -d`); never `-D`. */
  deleteBranch?: boolean;
}

/** Removes the worktree and then releases its lock; on refusal the worktree and its lock stay. */
export async function removeWorktree(worktree: Worktree, options: RemoveOptions = {}): Promise<void> {
  {
    const dirty = await dirtyPaths(worktree.path).catch(() => []);
    if (dirty.length > 0 && !options.force) {
      throw new WorktreeError("DIRTY", `worktree ${worktree.path} has ${dirty.length} uncommitted change(s) (${dirty.slice(0, 3).join(", ")}${dirty.length > 3 ? ", …" : ""}); commit them (recoveryCommit) or remove with force`);
    }
    await git(worktree.repo, ["worktree", "remove", ...(options.force ? ["--force"] : []), worktree.path]);
    await git(worktree.repo, ["worktree", "prune"]);
  }
  worktree.lock.release();
  if (options.deleteBranch) {
    const r = await git(worktree.repo, ["branch", "-d", worktree.branch], { allowFail: true });
    if (r.code !== 0) throw new WorktreeError("NOT_MERGED", `branch ${worktree.branch} is not merged: kept (delete it yourself with git branch -D if it is not wanted)`);
  }
}

/**
 * One commit of everything the branch checked out in `worktreePath` holds beyond `baseSha`
 * (the agent's own commits, a recovery commit, what is uncommitted): the branch is reset to the
 * base keeping the tree, and committed once, empty when nothing changed. Returns the new sha.
 */
export async function squashCheckpoint(worktreePath: string, baseSha: string, message: string, options: { exclude?: readonly string[] } = {}): Promise<string> {
  await git(worktreePath, ["reset", "-q", "--soft", baseSha]);
  return (await checkpoint(worktreePath, message, { allowEmpty: true, ...options }))!;
}
