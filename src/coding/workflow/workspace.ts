/**
 * Where a workflow works, decided before it is recorded: its branch off the user's base (the
 * local ref as it is; the note says when it is behind its upstream), its worktree outside the
 * repository; and how that worktree goes when the workflow ends or is cleaned. The user's
 * checkout is never touched: git runs in the worktree, or in the repository only to add, list
 * and remove worktrees and branches.
 */
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { currentBranch, git } from "../git.js";
import { recoveryCommit, type Worktree } from "../worktree.js";
import type { WorkflowRecord } from "./records.js";

/** Input a start cannot honour, naming its field (`base`; the CLI says `--base`, REST and MCP `base`). */
export class WorkflowInputError extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = "WorkflowInputError";
  }
}

export interface PlannedWorkspace {
  base_ref: string;
  base_sha: string;
  base_note: string | null;
  branch_name: string;
  worktree_path: string;
}

export async function planWorkflowWorkspace(repo: string, id: string, o: { base?: string; branch?: string; prefix: string; dir: string }): Promise<PlannedWorkspace> {
  const baseRef = o.base ?? (await currentBranch(repo)) ?? "HEAD";
  const found = await git(repo, ["rev-parse", "--verify", "-q", `${baseRef}^{commit}`], { allowFail: true });
  if (found.code !== 0) throw new WorkflowInputError("base", `${JSON.stringify(baseRef)} is no commit of ${repo} (git rev-parse --verify found nothing)`);
  const branch = o.branch ?? `${o.prefix}${id.slice(0, 8)}`;
  if ((await git(repo, ["check-ref-format", "--branch", branch], { allowFail: true })).code !== 0) throw new WorkflowInputError("branch", `${JSON.stringify(branch)} is not a valid git branch name`);
  if ((await git(repo, ["rev-parse", "--verify", "-q", `refs/heads/${branch}`], { allowFail: true })).code === 0) throw new WorkflowInputError("branch", `${branch} exists already: name a new branch for the workflow`);
  return { base_ref: baseRef, base_sha: found.stdout.trim(), base_note: await behindNote(repo, baseRef), branch_name: branch, worktree_path: join(o.dir, `${basename(repo)}-workflow-${id.slice(0, 8)}`) };
}

/** "behind origin/main by 3 commits" when the local base lags its upstream (pulse never fetches). */
async function behindNote(repo: string, ref: string): Promise<string | null> {
  const up = await git(repo, ["rev-parse", "--abbrev-ref", "-q", `${ref}@{upstream}`], { allowFail: true });
  if (up.code !== 0 || !up.stdout.trim()) return null;
  const counts = await git(repo, ["rev-list", "--count", `${ref}..${up.stdout.trim()}`], { allowFail: true });
  const n = Number(counts.stdout.trim());
  return counts.code === 0 && n > 0 ? `${ref} is behind ${up.stdout.trim()} by ${n} commit(s) (as last fetched): the workflow starts from the local ${ref}` : null;
}

/**
 * Removes the workflow's worktree: what is uncommitted (but the preflight's artifacts) kept in a
 * recovery commit first. `dropBranch`: an abandoned workflow's branch goes too, if it holds nothing beyond its base.
 */
export async function closeWorktree(worktree: Pick<Worktree, "repo" | "path">, w: Pick<WorkflowRecord, "id" | "artifacts" | "branch_name" | "base_sha">, dropBranch: boolean): Promise<string | null> {
  let sha: string | null = null;
  if (existsSync(worktree.path)) {
    if (!dropBranch) sha = await recoveryCommit(worktree.path, `workflow ${w.id}: left uncommitted when its worktree was removed`, { exclude: w.artifacts }).catch(() => null);
    // Only the preflight's untracked artifacts are left (or, abandoned, what a failed preflight did): --force discards them, never work.
    await git(worktree.repo, ["worktree", "remove", "--force", worktree.path]);
  }
  await git(worktree.repo, ["worktree", "prune"]);
  if (dropBranch) {
    const at = await git(worktree.repo, ["rev-parse", "--verify", "-q", `refs/heads/${w.branch_name}`], { allowFail: true });
    if (at.code === 0 && at.stdout.trim() === w.base_sha) await git(worktree.repo, ["branch", "-q", "-D", w.branch_name]);
  }
  return sha;
}
