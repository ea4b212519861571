/**
 * `--merge ff|squash|rebase`: the reviewed-by-the-gate workflow branch into its base branch when
 * every pulse succeeded, without touching the user's checkout: a base branch checked out in any
 * worktree (the user's own included) is never moved under it; the workflow says how to merge
 * there instead. The base moves by a compare-and-swap `update-ref`, so a commit someone added to
 * it meanwhile is never lost; squash is a new commit on the base with the branch's tree; rebase happens in the workflow's own worktree.
 */
import { git, hasIdentity, KIT_IDENTITY } from "../git.js";
import type { MergeMode, WorkflowRecord } from "./records.js";

export interface MergeResult {
  merged: boolean;
  /** The base branch's new head, when merged. */
  sha?: string;
  /** What happened, or why not, in words. */
  note: string;
}

async function sha(cwd: string, ref: string): Promise<string | null> {
  const r = await git(cwd, ["rev-parse", "--verify", "-q", `${ref}^{commit}`], { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : null;
}

async function checkedOutIn(repo: string, branch: string): Promise<string | undefined> {
  let path: string | undefined;
  for (const line of (await git(repo, ["worktree", "list", "--porcelain"])).stdout.split("\n")) {
    if (line.startsWith("worktree ")) path = line.slice(9);
    if (line === `branch refs/heads/${branch}`) return path;
  }
  return undefined;
}

export async function mergeWorkflow(w: Pick<WorkflowRecord, "repo_path" | "worktree_path" | "branch_name" | "base_ref" | "title" | "id">, mode: MergeMode, summaries: string[]): Promise<MergeResult> {
  const repo = w.repo_path;
  const base = w.base_ref;
  const manual = `merge it yourself: git -C ${repo} merge --ff-only ${w.branch_name}`;
  const holder = await checkedOutIn(repo, base);
  if (holder) return { merged: false, note: `not merged: ${base} is checked out in ${holder}, which pulse never touches; ${manual}` };
  const baseSha = await sha(repo, `refs/heads/${base}`);
  if (!baseSha) return { merged: false, note: `not merged: ${base} is not a branch` };
  let target: string;
  if (mode === "rebase") {
    const r = await git(w.worktree_path, ["rebase", "-q", baseSha], { allowFail: true });
    if (r.code !== 0) {
      await git(w.worktree_path, ["rebase", "--abort"], { allowFail: true });
      return { merged: false, note: `not merged: rebasing ${w.branch_name} onto ${base} conflicts; ${manual.replace("--ff-only", "")}` };
    }
    target = (await sha(w.worktree_path, "HEAD"))!;
  } else {
    target = (await sha(repo, `refs/heads/${w.branch_name}`))!;
    const ahead = (await git(repo, ["merge-base", "--is-ancestor", baseSha, target], { allowFail: true })).code === 0;
    if (!ahead) return { merged: false, note: `not merged: ${base} has moved since the workflow started (${mode} needs it to be an ancestor of ${w.branch_name}); try --merge rebase, or ${manual}` };
    if (mode === "squash") {
      // One commit on the base with the workflow's tree (the base is its ancestor), every pulse's summary in its body; the workflow branch keeps its pulses.
      const identity = (await hasIdentity(repo)) ? [] : KIT_IDENTITY;
      const message = `${w.title}\n\n${summaries.map((s) => `- ${s.split("\n")[0]}`).join("\n")}\n\nPulse-Workflow: ${w.id}`;
      target = (await git(repo, [...identity, "commit-tree", `${target}^{tree}`, "-p", baseSha, "-m", message])).stdout.trim();
    }
  }
  const moved = await git(repo, ["update-ref", "-m", `pulse workflow ${w.id}: --merge ${mode}`, `refs/heads/${base}`, target, baseSha], { allowFail: true });
  if (moved.code !== 0) return { merged: false, note: `not merged: ${base} moved while merging; ${manual}` };
  return { merged: true, sha: target, note: `merged into ${base} (${mode}) at ${target.slice(0, 8)}` };
}
