/**
 * The workflow's git layout: its branch (off the user's base) checked out in its worktree, and
 * one branch per pulse off the workflow branch's head, squashed into one checkpoint commit,
 * fast-forwarded into the workflow branch and deleted; or, on failure or stop, left with a
 * recovery commit. Git cannot hold both `W` and `W/pulse-1` (a ref cannot be a file and a folder),
 * so a pulse's branch is `W-pulse-1` (docs/decisions.md).
 */
import { dirtyPaths, git, headSha } from "../git.js";
import { fastForward, recoveryCommit, squashCheckpoint } from "../worktree.js";

export function pulseBranch(workflowBranch: string, number: number): string {
  return `${workflowBranch}-pulse-${number}`;
}

async function branchSha(cwd: string, branch: string): Promise<string | null> {
  const r = await git(cwd, ["rev-parse", "--verify", "-q", `refs/heads/${branch}^{commit}`], { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : null;
}

/**
 * Puts the worktree on the pulse's branch: found as it is (a restarted pulse, its recovery
 * commit kept), else created off the workflow branch's head. Returns the workflow head the
 * pulse is measured from.
 */
export async function openPulseBranch(worktree: string, workflowBranch: string, branch: string): Promise<{ base: string; created: boolean }> {
  const base = (await branchSha(worktree, workflowBranch))!;
  const current = (await git(worktree, ["symbolic-ref", "--short", "-q", "HEAD"], { allowFail: true })).stdout.trim();
  if (current === branch) return { base, created: false };
  if (await branchSha(worktree, branch)) {
    await git(worktree, ["switch", "-q", branch]);
    return { base, created: false };
  }
  await git(worktree, ["switch", "-q", "-c", branch, workflowBranch]);
  return { base, created: true };
}

/** The succeeded pulse as one commit on the workflow branch (`base`: its head, which only the workflow moves); its branch deleted, the worktree left on the workflow branch's new head. */
export async function landPulse(worktree: string, workflowBranch: string, branch: string, base: string, message: string, exclude: readonly string[]): Promise<string> {
  const sha = await squashCheckpoint(worktree, base, message, { exclude });
  await git(worktree, ["switch", "-q", workflowBranch]);
  await fastForward(worktree, branch);
  await git(worktree, ["branch", "-q", "-d", branch]);
  return sha;
}

/**
 * A failed or stopped pulse: what it left in a `[RECOVERY]` commit on its branch (only when the
 * tree is dirty), the branch kept; the worktree goes back to the workflow branch's head.
 */
export async function shelvePulse(worktree: string, workflowBranch: string, reason: string, exclude: readonly string[]): Promise<string | null> {
  const sha = await recoveryCommit(worktree, reason, { exclude });
  const current = (await git(worktree, ["symbolic-ref", "--short", "-q", "HEAD"], { allowFail: true })).stdout.trim();
  if (current !== workflowBranch) await git(worktree, ["switch", "-q", workflowBranch]);
  return sha;
}

/** Files a pulse changed, by git: committed since `base` and left in the tree (artifacts excluded). */
export async function changedSince(worktree: string, base: string, exclude: readonly string[]): Promise<string[]> {
  const skip = (p: string) => exclude.some((x) => p === x || p.startsWith(x.endsWith("/") ? x : `${x}/`));
  const committed = (await git(worktree, ["diff", "--name-only", "-z", base, "HEAD"])).stdout.split("\0").filter(Boolean);
  const files = new Set([...committed, ...(await dirtyPaths(worktree))].filter((p) => !skip(p)));
  return [...files].sort();
}

/** Tracked files changed in the worktree (the preflight guard): modified, deleted, staged, renamed. */
export async function trackedChanges(worktree: string): Promise<string[]> {
  const out = (await git(worktree, ["status", "--porcelain=v1", "-z", "--untracked-files=no"])).stdout.split("\0").filter((e) => e.length > 3);
  return out.map((e) => e.slice(3));
}

/** Untracked paths (folders collapsed) that .gitignore does not hide: the preflight's artifacts. */
export async function untrackedPaths(worktree: string): Promise<string[]> {
  return (await git(worktree, ["ls-files", "--others", "--exclude-standard", "--directory", "-z"])).stdout.split("\0").filter(Boolean);
}

export { headSha };
