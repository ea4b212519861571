/**
 * A session's workspace: its own git worktree, outside the repository, on its own branch
 * (`pulse/session/<short id>` unless named), created from the user's HEAD or a base. The user's
 * checkout (branch, HEAD, index, uncommitted and untracked files) is never touched: everything
 * here runs git in the worktree, or in the repository only to add, list and remove worktrees.
 * `--in-place` sessions work in the checkout itself, as before, and refuse a dirty one.
 */
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join, relative, resolve, isAbsolute } from "node:path";
import { currentBranch, dirtyPaths, git, headSha } from "../git.js";
import { recoveryCommit } from "../worktree.js";
import type { SessionRecord } from "./records.js";

/** Input a start request gave that cannot be honoured, naming its field (the service reports it as a SessionInputError). */
export class WorkspaceInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = "WorkspaceInputError";
  }
}

/** Where session worktrees live: $PULSE_WORKTREES, else $XDG_STATE_HOME/pulse/worktrees, else ~/.local/state/pulse/worktrees. */
export function worktreesDir(env: Record<string, string | undefined> = process.env): string {
  if (env.PULSE_WORKTREES) return resolve(env.PULSE_WORKTREES);
  const state = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  return resolve(state, "pulse", "worktrees");
}

export function sessionBranch(id: string): string {
  return `pulse/session/${id.slice(0, 8)}`;
}

/** The directory the agent works in: its worktree, or the repository itself for an in-place session. */
export function workdirOf(s: { worktree_path?: string | null; repo_path: string }): string {
  return s.worktree_path ?? s.repo_path;
}

export interface WorkspaceRequest {
  branch?: string;
  base?: string;
  inPlace: boolean;
  allowDirty: boolean;
  /** Where worktrees go (worktreesDir()). */
  dir: string;
  /** pulse's state directory: its files in the checkout do not make it dirty. */
  stateDir?: string;
}

export type WorkspacePlan = Pick<Partial<SessionRecord>, "branch_name" | "worktree_path" | "base_ref" | "base_sha">;

/** Decides (and checks, before the session is recorded) where a new session works. */
export async function planWorkspace(repo: string, id: string, r: WorkspaceRequest): Promise<WorkspacePlan> {
  if (r.inPlace) {
    if (r.base) throw new WorkspaceInputError("base", "an in-place session works on the checkout as it is; a base is for a session in its own worktree (leave out inPlace)");
    if (!r.allowDirty) {
      const state = r.stateDir ? resolve(r.stateDir) : undefined;
      const dirty = (await dirtyPaths(repo)).filter((p) => !state || !inside(state, resolve(repo, p)));
      if (dirty.length > 0) {
        throw new WorkspaceInputError("inPlace", `${repo} has uncommitted or untracked files (${dirty.slice(0, 3).join(", ")}${dirty.length > 3 ? `, and ${dirty.length - 3} more` : ""}); the agent's commits would take them: commit or stash them, allow it with --allow-dirty, or leave out --in-place`);
      }
    }
    return r.branch ? { branch_name: r.branch } : {};
  }
  let baseSha: string | null;
  if (r.base) {
    const found = await git(repo, ["rev-parse", "--verify", "-q", `${r.base}^{commit}`], { allowFail: true });
    if (found.code !== 0) throw new WorkspaceInputError("base", `${JSON.stringify(r.base)} is no commit of ${repo} (git rev-parse --verify found nothing)`);
    baseSha = found.stdout.trim();
  } else {
    baseSha = await headSha(repo);
    if (!baseSha) throw new WorkspaceInputError("repo", `${repo} has no commit yet: a session's worktree starts from one (commit once, or use --in-place)`);
  }
  const branch = r.branch ?? sessionBranch(id);
  const existing = await git(repo, ["rev-parse", "--verify", "-q", `refs/heads/${branch}^{commit}`], { allowFail: true });
  if (existing.code === 0) {
    if (r.base) throw new WorkspaceInputError("branch", `${branch} exists already: leave out base to go on from where it is, or name a new branch`);
    const holder = await checkedOutAt(repo, branch);
    if (holder) throw new WorkspaceInputError("branch", `${branch} is checked out in ${holder}; a session works on a branch no checkout has (name another, or use --in-place)`);
    baseSha = existing.stdout.trim();
  }
  const baseRef = r.base ?? (existing.code === 0 ? branch : ((await currentBranch(repo)) ?? baseSha.slice(0, 12)));
  return { branch_name: branch, worktree_path: join(r.dir, `${basename(repo)}-${id.slice(0, 8)}`), base_ref: baseRef, base_sha: baseSha };
}

function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** The worktree a branch is checked out in, if any. */
async function checkedOutAt(repo: string, branch: string): Promise<string | undefined> {
  let path: string | undefined;
  for (const line of (await git(repo, ["worktree", "list", "--porcelain"])).stdout.split("\n")) {
    if (line.startsWith("worktree ")) path = line.slice(9);
    if (line === `branch refs/heads/${branch}`) return path;
  }
  return undefined;
}

/** Whether `path` is a working worktree of git (its top level), not a stale directory. */
export async function isWorktree(path: string): Promise<boolean> {
  if (!existsSync(path)) return false;
  const r = await git(path, ["rev-parse", "--show-toplevel"], { allowFail: true }).catch(() => ({ code: 1, stdout: "" }));
  return r.code === 0 && resolve(r.stdout.trim()) === resolve(path);
}

/**
 * Makes the session's worktree ready: reused when it is there, else (first run, or a resume
 * after it was removed) added from its branch, the branch created from the base when new.
 * Returns what it did, for the live view.
 */
export async function openWorkspace(s: SessionRecord): Promise<"reused" | "created" | "recreated"> {
  const path = s.worktree_path!;
  if (await isWorktree(path)) return "reused";
  await git(s.repo_path, ["worktree", "prune"]); // forget a worktree whose directory was deleted by hand
  mkdirSync(resolve(path, ".."), { recursive: true });
  const branch = s.branch_name!;
  const exists = (await git(s.repo_path, ["rev-parse", "--verify", "-q", `refs/heads/${branch}`], { allowFail: true })).code === 0;
  await git(s.repo_path, exists ? ["worktree", "add", "-q", path, branch] : ["worktree", "add", "-q", "-b", branch, path, s.base_sha ?? "HEAD"]);
  return exists && s.current_iteration > 0 ? "recreated" : "created";
}

/**
 * Removes a session's worktree, keeping what is uncommitted in a `[RECOVERY]` commit on its
 * branch first (never discarding work). Returns the recovery commit, if one was made.
 */
export async function closeWorkspace(repo: string, path: string, reason: string): Promise<string | null> {
  let sha: string | null = null;
  if (await isWorktree(path)) {
    sha = await recoveryCommit(path, reason);
    await git(repo, ["worktree", "remove", path]);
  }
  await git(repo, ["worktree", "prune"]);
  return sha;
}

/** How to look at a session's branch and merge it, for `status` (worktree sessions only). */
export function reviewLines(s: SessionRecord): string[] {
  if (!s.worktree_path || !s.branch_name) return [];
  const base = s.base_ref ?? s.base_sha?.slice(0, 12) ?? "HEAD";
  const here = existsSync(s.worktree_path) ? `worktree ${s.worktree_path}` : "its worktree is removed; the branch stays";
  return [
    `branch ${s.branch_name} from ${base}${s.base_sha ? ` (${s.base_sha.slice(0, 8)})` : ""} · ${here}`,
    `review: git -C ${s.repo_path} log ${base}..${s.branch_name} · git -C ${s.repo_path} diff ${base}...${s.branch_name}`,
    `merge: git -C ${s.repo_path} merge ${s.branch_name} (on ${base}); drop it: git -C ${s.repo_path} branch -D ${s.branch_name}`,
  ];
}
