/**
 * Running git for the kit: argument arrays (never a shell), a fixed environment so a user's
 * pager or editor settings never hang a loop, and errors that quote git's own words.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";

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
  return parseStatus(cwd, (await git(cwd, STATUS_ARGS)).stdout);
}

export const STATUS_ARGS: readonly string[] = ["status", "--porcelain=v2", "--branch", "--no-ahead-behind", "-z", "--untracked-files=all"];

/** gitStatus from the output of `git STATUS_ARGS` (run by a GitScript, say). */
export async function parseStatus(cwd: string, stdout: string): Promise<GitStatus> {
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

/** `git commit` with the repository's identity, or pulse's when it has none: one process for hasIdentity, commit and headSha. */
export async function commit(cwd: string, message: string, options: { allowEmpty?: boolean } = {}): Promise<string> {
  const script = new GitScript();
  script.commit(message, options);
  const head = script.git(["rev-parse", "--verify", "-q", "HEAD^{commit}"], { allowFail: true });
  const out = await script.run(cwd);
  return (out[head]?.code === 0 ? out[head].stdout.trim() : null)!;
}

/** One git command of a GitScript: its output, and how it exited. */
export interface StepResult {
  stdout: string;
  stderr: string;
  code: number;
}

/**
 * Several git commands run by one `sh` (each a fork of a small shell rather than a spawn from
 * this process, which costs milliseconds on a loaded machine), each one's output and exit code
 * told apart by a marker holding a random nonce. The arguments are the shell's positional
 * parameters, so nothing given (a path, a commit message) is ever part of the script's text. A
 * command that fails ends the script (unless allowed) and is reported as git() reports it.
 */
export class GitScript {
  private readonly argv: string[] = [];
  private readonly lines: string[] = [];
  private readonly steps: { args: readonly string[]; allowFail: boolean }[] = [];

  /** `git args`; returns the index of its result. */
  git(args: readonly string[], options: { allowFail?: boolean } = {}): number {
    // In the background and waited for, so a timeout's TERM to the shell reaches the git it runs.
    return this.step(args, options.allowFail ?? false, (k, words) => `git ${words} & p=$!; wait $p; c=$?; ${this.mark(k)}`);
  }

  /**
   * Runs `git status --porcelain=v1 -z --untracked-files=all` (dirtyPaths' command) and opens a
   * block (closed by `end()`) that runs only when it listed something.
   */
  ifChanged(): void {
    // Its output stays in the shell: only whether there is any matters (a shell drops NUL bytes, which leaves the rest).
    this.step(["status", "--porcelain=v1", "-z", "--untracked-files=all"], false, (k, words) => `o=$(git ${words}); c=$?; ${this.mark(k)}`);
    this.lines.push(`if [ -n "$o" ]; then`);
  }

  end(): void {
    this.lines.push("fi");
  }

  /** commit(): with the repository's identity when `git config user.email` gives one (hasIdentity), else with KIT_IDENTITY. */
  commit(message: string, options: { allowEmpty?: boolean } = {}): void {
    const args = ["commit", "-q", "--no-verify", ...(options.allowEmpty ? ["--allow-empty"] : []), "-m", message];
    // Marked like every command: its write to a pipe nobody reads any more ends the shell (SIGPIPE) when
    // pulse is gone, so no more than the command in flight outlives it, as with git() one by one.
    this.step(["config", "user.email"], true, (k, words) => `e=$(git ${words}); c=$?; ${this.mark(k)}`);
    this.lines.push(`if [ $c -eq 0 ] && case $e in *[![:space:]]*) true ;; *) false ;; esac; then`);
    this.git(args);
    this.lines.push("else");
    this.git([...KIT_IDENTITY, ...args]);
    this.lines.push("fi");
  }

  /** Runs the script in `cwd`: each command's result by its index, undefined for one that did not run. */
  async run(cwd: string, options: { timeoutMs?: number } = {}): Promise<(StepResult | undefined)[]> {
    const nonce = randomBytes(12).toString("hex");
    const script = ["trap 'kill $p 2>/dev/null; exit 143' TERM", "trap 'kill $p 2>/dev/null; exit 130' INT", ...this.lines].join("\n");
    const { stdout, stderr, error, killed } = await new Promise<{ stdout: string; stderr: string; error: Error | null; killed: boolean }>((resolve) => {
      const child = execFile("sh", ["-c", script, "sh", nonce, ...this.argv], { cwd, env: { ...process.env, ...GIT_ENV }, maxBuffer: 64 << 20, timeout: options.timeoutMs ?? 60_000 * this.steps.length }, (error, stdout, stderr) =>
        resolve({ stdout, stderr, error, killed: child.killed }),
      );
    });
    const outs = sections(stdout, nonce);
    const errs = sections(stderr, nonce);
    const results: (StepResult | undefined)[] = this.steps.map(() => undefined);
    for (const [k, out] of outs.byStep) results[k] = { stdout: out.text, stderr: errs.byStep.get(k)?.text ?? "", code: out.code };
    if (!error) return results;
    const failed = results.findIndex((r, k) => r !== undefined && r.code !== 0 && !this.steps[k]!.allowFail);
    if (failed >= 0 && !killed) throw new GitError(this.steps[failed]!.args, results[failed]!.code, results[failed]!.stderr);
    // Stopped (timeout) or never started: the command that was running is the one after the last that ended, with git()'s null code.
    const running = this.steps[Math.min(Math.max(-1, ...outs.byStep.keys()) + 1, this.steps.length - 1)];
    throw new GitError(running?.args ?? [], null, errs.tail || error.message);
  }

  private step(args: readonly string[], allowFail: boolean, line: (k: number, words: string) => string): number {
    const k = this.steps.length;
    this.steps.push({ args, allowFail });
    const words = args.map((a) => {
      this.argv.push(a);
      return `"\${${this.argv.length + 1}}"`; // $1 is the nonce
    });
    this.lines.push(line(k, words.join(" ")) + (allowFail ? "" : "; [ $c -eq 0 ] || exit $c"));
    return k;
  }

  /** The marker after command k, on both streams. */
  private mark(k: number): string {
    return `printf '\\000%s %d %d\\000' "$1" ${k} $c; printf '\\000%s %d %d\\000' "$1" ${k} $c >&2`;
  }
}

/** What precedes each marker of `nonce`, by command index, and what follows the last. */
function sections(text: string, nonce: string): { byStep: Map<number, { text: string; code: number }>; tail: string } {
  const byStep = new Map<number, { text: string; code: number }>();
  const marker = new RegExp(`\0${nonce} (\\d+) (\\d+)\0`, "g");
  let from = 0;
  for (const m of text.matchAll(marker)) {
    byStep.set(Number(m[1]), { text: text.slice(from, m.index), code: Number(m[2]) });
    from = m.index! + m[0].length;
  }
  return { byStep, tail: text.slice(from) };
}
