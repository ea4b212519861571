/**
 * The repository side of a session: the branch it works on, keeping pulse's own state (a
 * `.pulse/` store inside the repository) out of the agent's evidence and commits, and whether a
 * recorded runner process is still alive.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { currentBranch, git } from "../git.js";
import { pidAlive } from "../liveness.js";

export class SessionRepoError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SessionRepoError";
  }
}

/** The repository's top level, or a clear error when `path` is not in a git repository. */
export async function repoRoot(path: string): Promise<string> {
  if (!existsSync(path)) throw new SessionRepoError(`--repo ${path}: no such directory`);
  const r = await git(path, ["rev-parse", "--show-toplevel"], { allowFail: true }).catch(() => ({ code: 1, stdout: "" }));
  if (r.code !== 0) throw new SessionRepoError(`--repo ${path} is not a git repository (git init it, or point --repo at one): a session's evidence is its commits`);
  return r.stdout.trim();
}

/** Switches to `branch` (created from HEAD when new); without one, the current branch is the session's. */
export async function useBranch(repo: string, branch: string | null): Promise<string | null> {
  if (!branch) return currentBranch(repo);
  if ((await currentBranch(repo)) === branch) return branch;
  const valid = await git(repo, ["check-ref-format", "--branch", branch], { allowFail: true });
  if (valid.code !== 0) throw new SessionRepoError(`--branch ${JSON.stringify(branch)} is not a valid git branch name`);
  const exists = (await git(repo, ["rev-parse", "--verify", "-q", `refs/heads/${branch}`], { allowFail: true })).code === 0;
  await git(repo, exists ? ["switch", "-q", branch] : ["switch", "-q", "-c", branch]);
  return branch;
}

/** Keeps a state directory inside the repository out of `git status` (and so out of evidence and commits). */
export async function excludeFromRepo(repo: string, stateDir: string): Promise<void> {
  const rel = relative(repo, resolve(stateDir));
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return;
  const gitDir = resolve(repo, (await git(repo, ["rev-parse", "--git-common-dir"])).stdout.trim());
  const file = join(gitDir, "info", "exclude");
  const line = `/${rel.split("\\").join("/")}/`;
  const current = existsSync(file) ? readFileSync(file, "utf8") : "";
  if (current.split("\n").includes(line)) return;
  appendFileSync(file, `${current && !current.endsWith("\n") ? "\n" : ""}# pulse's state, never part of a session's work\n${line}\n`);
}

/** Whether a record's runner still runs; a record with no runner has none. */
export function processAlive(pid: number | null): boolean {
  return !!pid && pidAlive(pid);
}
