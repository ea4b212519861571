/**
 * `pulse session clean`: removes the worktrees of sessions that ended (their branches stay), and
 * finds worktrees in the worktrees directory that no session record owns. Nothing uncommitted is
 * ever thrown away: a dirty worktree gets a `[RECOVERY]` commit on its branch before it goes, and
 * a worktree whose lock a live process holds is left alone.
 */
import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { git } from "../git.js";
import { lockWorktree } from "../worktree.js";
import type { SessionRecord } from "./records.js";
import { processAlive } from "./repo.js";
import { closeWorkspace, isWorktree } from "./workspace.js";

export interface CleanAction {
  path: string;
  /** The owning session, or undefined for an orphan. */
  session?: string;
  branch?: string | null;
  outcome: "removed" | "would remove" | "orphan" | "skipped";
  detail?: string;
}

/** Sessions whose worktree clean may remove: ended ones (a paused one only when named). */
function cleanable(s: SessionRecord, named: boolean): string | undefined {
  if (s.status === "running" && processAlive(s.runner_pid)) return "it is running";
  if (s.status === "running" && !named) return "its runner died: resume it, or name it to clean it";
  if (s.status === "pending") return "it has not run yet";
  if (s.status === "paused" && !named) return "it is paused (name it to clean it)";
  return undefined;
}

export async function cleanWorktrees(sessions: SessionRecord[], options: { dir: string; only?: SessionRecord; dryRun?: boolean; force?: boolean }): Promise<CleanAction[]> {
  const out: CleanAction[] = [];
  const targets = options.only ? [options.only] : sessions;
  for (const s of targets) {
    if (!s.worktree_path || !(await isWorktree(s.worktree_path))) continue;
    const why = cleanable(s, options.only !== undefined);
    if (why) {
      out.push({ path: s.worktree_path, session: s.id, branch: s.branch_name, outcome: "skipped", detail: why });
      continue;
    }
    out.push(await removeOne(s.repo_path, s.worktree_path, `session ${s.id}: left uncommitted in its worktree, kept by pulse session clean`, { session: s.id, branch: s.branch_name }, options.dryRun));
  }
  if (options.only || !existsSync(options.dir)) return out;
  const owned = new Set(sessions.flatMap((s) => (s.worktree_path ? [resolve(s.worktree_path)] : [])));
  for (const name of readdirSync(options.dir).sort()) {
    const path = resolve(options.dir, name);
    if (owned.has(path)) continue;
    if (!(await isWorktree(path))) {
      out.push({ path, outcome: "orphan", detail: "not a git worktree: pulse leaves it to you" });
      continue;
    }
    const repo = await mainCheckout(path);
    const branch = (await git(path, ["symbolic-ref", "--short", "-q", "HEAD"], { allowFail: true })).stdout.trim() || null;
    if (!options.force || !repo) {
      out.push({ path, branch, outcome: "orphan", detail: `no session of this store owns it${repo ? ` (a worktree of ${repo}); --force removes it, its uncommitted work kept in a recovery commit` : ""}` });
      continue;
    }
    out.push(await removeOne(repo, path, "left uncommitted in a worktree no session owns, kept by pulse session clean --force", { branch }, options.dryRun));
  }
  return out;
}

async function removeOne(repo: string, path: string, reason: string, who: Pick<CleanAction, "session" | "branch">, dryRun?: boolean): Promise<CleanAction> {
  let lock;
  try {
    // A live runner (of this store or another) holds it: never pulled from under an agent.
    lock = await lockWorktree(repo, path, `pulse session clean (pid ${process.pid})`);
  } catch (e) {
    return { path, ...who, outcome: "skipped", detail: (e as Error).message };
  }
  try {
    if (dryRun) return { path, ...who, outcome: "would remove" };
    const sha = await closeWorkspace(repo, path, reason);
    return { path, ...who, outcome: "removed", ...(sha ? { detail: `uncommitted work kept in recovery commit ${sha.slice(0, 8)}` } : {}) };
  } catch (e) {
    return { path, ...who, outcome: "skipped", detail: (e as Error).message };
  } finally {
    lock.release();
  }
}

/** The repository a linked worktree belongs to (its main checkout), from its common git directory. */
async function mainCheckout(path: string): Promise<string | undefined> {
  const r = await git(path, ["rev-parse", "--path-format=absolute", "--git-common-dir"], { allowFail: true });
  if (r.code !== 0) return undefined;
  const common = r.stdout.trim();
  return common.endsWith(`${join("/", ".git")}`) ? resolve(common, "..") : common;
}

export function cleanText(actions: CleanAction[], dryRun: boolean): string {
  if (actions.length === 0) return "no session worktrees to clean\n";
  const lines = actions.map((a) => {
    const who = a.session ? `session ${a.session.slice(0, 8)}` : "no session";
    return `${a.outcome.padEnd(12)} ${a.path} (${who}${a.branch ? `, branch ${a.branch}` : ""})${a.detail ? `: ${a.detail}` : ""}`;
  });
  if (dryRun) lines.push("(dry run: nothing was removed)");
  if (actions.some((a) => a.outcome === "removed" || a.outcome === "would remove")) lines.push("branches stay for review: git log, git merge, or git branch -D to drop one");
  return `${lines.join("\n")}\n`;
}
