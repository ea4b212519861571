/**
 * Running git for the kit: argument arrays (never a shell), a fixed environment so a user's
 * pager or editor settings never hang a loop, and errors that quote git's own words.
 */
import { execFile } from "node:child_process";

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args.join(" ")} failed${code !== null ? ` (exit ${code})` : ""}: ${stderr.trim().split("\n").slice(-3).join(" ") || "no message"}`);
    this.name = "GitError";
  }
}

const GIT_ENV = { GIT_TERMINAL_PROMPT: "0", GIT_PAGER: "cat", PAGER: "cat", GIT_EDITOR: "true", GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" };

export function git(cwd: string, args: readonly string[], options: { allowFail?: boolean; timeoutMs?: number } = {}): Promise<{ stdout: string; code: number }> {
  return new Promise((resolve, reject) => {
    execFile("git", args as string[], { cwd, env: { ...process.env, ...GIT_ENV }, maxBuffer: 64 << 20, timeout: options.timeoutMs ?? 60_000 }, (error, stdout, stderr) => {
      if (!error) return resolve({ stdout, code: 0 });
      const code = typeof (error as { code?: unknown }).code === "number" ? ((error as { code: number }).code) : null;
      if (options.allowFail && code !== null) return resolve({ stdout, code });
      reject(new GitError(args, code, stderr || error.message));
    });
  });
}

/** The commit HEAD points at, or null in a repository without commits. */
export async function headSha(cwd: string): Promise<string | null> {
  const r = await git(cwd, ["rev-parse", "--verify", "-q", "HEAD^{commit}"], { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : null;
}

export async function currentBranch(cwd: string): Promise<string | null> {
  const r = await git(cwd, ["symbolic-ref", "--short", "-q", "HEAD"], { allowFail: true });
  return r.code === 0 ? r.stdout.trim() : null;
}

/** Paths changed in the working tree and index, untracked included (not ignored ones). */
export async function dirtyPaths(cwd: string): Promise<string[]> {
  const { stdout } = await git(cwd, ["status", "--porcelain=v1", "-z", "--untracked-files=all"]);
  const out: string[] = [];
  const parts = stdout.split("\0");
  for (let i = 0; i < parts.length; i++) {
    const entry = parts[i]!;
    if (entry.length < 4) continue;
    out.push(entry.slice(3));
    if (entry[0] === "R" || entry[0] === "C") i++; // the rename's source follows
  }
  return out;
}

export interface GitStatus {
  /** The commit HEAD points at, or null in a repository without commits. */
  head: string | null;
  /** The checked-out branch, or null when HEAD is detached. */
  branch: string | null;
  /** Paths changed in the working tree and index, untracked included (not ignored ones), as dirtyPaths lists them. */
  paths: string[];
  /** The untracked ones among them (what `git ls-files --others --exclude-standard` lists). */
  untracked: string[];
}

/**
 * HEAD, branch and changed paths from one `git status --porcelain=v2 --branch` (instead of
 * rev-parse, symbolic-ref, status and ls-files: each spawn from Node costs milliseconds).
 */
export async function gitStatus(cwd: string): Promise<GitStatus> {
  const { stdout } = await git(cwd, ["status", "--porcelain=v2", "--branch", "--no-ahead-behind", "-z", "--untracked-files=all"]);
  let head: string | null = null;
  let branch: string | null = null;
  let detached = false;
  const paths: string[] = [];
  const untracked: string[] = [];
  const parts = stdout.split("\0");
  for (let i = 0; i < parts.length; i++) {
    const entry = parts[i]!;
    switch (entry[0]) {
      case "#":
        if (entry.startsWith("# branch.oid ")) head = entry === "# branch.oid (initial)" ? null : entry.slice(13);
        else if (entry.startsWith("# branch.head ")) {
          branch = entry.slice(14);
          detached = branch === "(detached)";
        }
        break;
      case "1": // 1 XY sub mH mI mW hH hI path
        paths.push(afterFields(entry, 8));
        break;
      case "2": // 2 XY sub mH mI mW hH hI Xscore path, then the rename's source
        paths.push(afterFields(entry, 9));
        i++;
        break;
      case "u": // u XY sub m1 m2 m3 mW h1 h2 h3 path
        paths.push(afterFields(entry, 10));
        break;
      case "?":
        paths.push(entry.slice(2));
        untracked.push(entry.slice(2));
        break;
    }
  }
  // "(detached)" is also a valid branch name: only then ask git which it is.
  if (detached) branch = await currentBranch(cwd);
  return { head, branch, paths, untracked };
}

/** What follows the first `n` space-separated fields (a path may itself hold spaces). */
function afterFields(entry: string, n: number): string {
  let at = 0;
  for (let k = 0; k < n; k++) at = entry.indexOf(" ", at) + 1;
  return entry.slice(at);
}

/** An author for commits the kit makes, so a machine without git identity still commits. */
export const KIT_IDENTITY = ["-c", "user.name=pulse", "-c", "user.email=pulse@localhost"];

export async function hasIdentity(cwd: string): Promise<boolean> {
  const r = await git(cwd, ["config", "user.email"], { allowFail: true });
  return r.code === 0 && r.stdout.trim() !== "";
}

/** `git commit` with the repository's identity, or pulse's when it has none. */
export async function commit(cwd: string, message: string, options: { allowEmpty?: boolean } = {}): Promise<string> {
  const identity = (await hasIdentity(cwd)) ? [] : KIT_IDENTITY;
  await git(cwd, [...identity, "commit", "-q", "--no-verify", ...(options.allowEmpty ? ["--allow-empty"] : []), "-m", message]);
  return (await headSha(cwd))!;
}
