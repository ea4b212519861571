/**
 * Workspace evidence from git: what an iteration did, measured rather than claimed. A commit is
 * HEAD having moved from the start; files changed are the union of what was committed since the
 * start and what is changed now; no progress is neither.
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { git, GitError, GitScript, gitStatus, parseStatus, STATUS_ARGS } from "./git.js";

export interface EvidenceStart {
  /** HEAD when the iteration started; null in a repository without commits. */
  startSha: string | null;
  branch: string | null;
  /** Paths already changed at the start: not this iteration's work unless changed again. */
  dirtyAtStart: Record<string, string>;
}

export interface Commit {
  sha: string;
  subject: string;
}

export interface WorkspaceEvidence {
  startSha: string | null;
  headSha: string | null;
  branch: string | null;
  commits: Commit[];
  filesCommitted: string[];
  filesUncommitted: string[];
  /** Union of both, sorted. */
  filesChanged: string[];
  diffStat: { files: number; insertions: number; deletions: number };
  progress: boolean;
}

export async function startEvidence(cwd: string): Promise<EvidenceStart> {
  const { head, branch, paths } = await gitStatus(cwd);
  return { startSha: head, branch, dirtyAtStart: await fingerprints(cwd, paths) };
}

/** The paths changed since the start and not committed: collectEvidence's filesUncommitted (unsorted), for less. */
export async function uncommittedSince(cwd: string, start: EvidenceStart): Promise<string[]> {
  return changedAgain(cwd, start, (await gitStatus(cwd)).paths);
}

/** A path dirty at the start counts only if it changed again since: only those need fingerprints. */
async function changedAgain(cwd: string, start: EvidenceStart, dirty: string[]): Promise<string[]> {
  const before = start.dirtyAtStart;
  const compared = dirty.filter((p) => before[p] !== undefined);
  const now = compared.length > 0 ? await fingerprints(cwd, compared) : {};
  return dirty.filter((p) => before[p] === undefined || before[p] !== now[p]);
}

/**
 * What is left uncommitted, committed by collectEvidence before it looks (a checkpoint's `add -A`
 * and commit): `ifChanged` commits only when git status lists a path, which is uncommittedSince's
 * answer when nothing was dirty at the start.
 */
export interface CommitFirst {
  message: string;
  ifChanged?: boolean;
}

export async function collectEvidence(cwd: string, start: EvidenceStart, options: { commitFirst?: CommitFirst } = {}): Promise<WorkspaceEvidence> {
  // The commit, status, log, names and numstat in one process: each spawn from here costs milliseconds.
  // Log and names run whether or not HEAD moved (status says that), their answers read only when it did.
  const script = new GitScript();
  const first = options.commitFirst;
  if (first?.ifChanged) script.ifChanged();
  if (first) {
    script.git(["add", "-A"]);
    script.commit(first.message);
  }
  if (first?.ifChanged) script.end();
  const logArgs = ["log", "--format=%H%x00%s", start.startSha ? `${start.startSha}..HEAD` : "HEAD"];
  const namesArgs = start.startSha ? ["diff", "--name-only", "-z", start.startSha, "HEAD"] : ["ls-tree", "-r", "--name-only", "-z", "HEAD"];
  const steps = {
    status: script.git(STATUS_ARGS),
    log: script.git(logArgs, { allowFail: true }),
    names: script.git(namesArgs, { allowFail: true }),
    numstat: start.startSha ? script.git(["diff", "--numstat", "-z", start.startSha]) : -1,
  };
  const out = await script.run(cwd);
  const { head, branch, paths: dirty, untracked } = await parseStatus(cwd, out[steps.status]!.stdout);
  const moved = head !== null && head !== start.startSha;
  // What git() would have thrown, had the command run on its own.
  const read = (k: number, args: readonly string[]) => {
    const r = out[k]!;
    if (r.code !== 0) throw new GitError(args, r.code, r.stderr);
    return r;
  };
  const log = moved ? read(steps.log, logArgs) : undefined;
  const names = moved ? read(steps.names, namesArgs) : undefined;
  const numstat = steps.numstat >= 0 ? out[steps.numstat] : undefined;
  const filesUncommitted = await changedAgain(cwd, start, dirty);
  const commits: Commit[] = [];
  for (const line of log?.stdout.split("\n").filter(Boolean) ?? []) {
    const [sha, subject] = line.split("\0");
    commits.push({ sha: sha!, subject: subject ?? "" });
  }
  const filesCommitted = names?.stdout.split("\0").filter(Boolean) ?? [];
  const filesChanged = [...new Set([...filesCommitted, ...filesUncommitted])].sort();
  return {
    startSha: start.startSha,
    headSha: head,
    branch,
    commits,
    filesCommitted: filesCommitted.sort(),
    filesUncommitted: filesUncommitted.sort(),
    filesChanged,
    diffStat: await diffStat(cwd, numstat?.stdout, filesUncommitted, untracked),
    progress: moved || filesUncommitted.length > 0,
  };
}

/** Insertions and deletions from the start to the working tree (`numstat`: git diff --numstat -z from the start), untracked files counted by lines. */
async function diffStat(cwd: string, numstat: string | undefined, uncommitted: string[], untracked: string[]): Promise<WorkspaceEvidence["diffStat"]> {
  let insertions = 0;
  let deletions = 0;
  const files = new Set<string>();
  if (numstat !== undefined) {
    // -z numstat: "ins\tdel\tpath\0", or "ins\tdel\t\0from\0to\0" for renames.
    const parts = numstat.split("\0");
    for (let i = 0; i < parts.length; i++) {
      const m = /^(\d+|-)\t(\d+|-)\t(.*)$/s.exec(parts[i]!);
      if (!m) continue;
      insertions += m[1] === "-" ? 0 : Number(m[1]);
      deletions += m[2] === "-" ? 0 : Number(m[2]);
      if (m[3]) files.add(m[3]);
      else files.add(parts[(i += 2)]!);
    }
  }
  for (const path of untracked) {
    if (!uncommitted.includes(path) || files.has(path)) continue;
    files.add(path);
    const { stdout } = await git(cwd, ["diff", "--no-index", "--numstat", "/dev/null", path], { allowFail: true });
    insertions += Number(/^(\d+)/.exec(stdout)?.[1] ?? 0);
  }
  return { files: files.size, insertions, deletions };
}

/** A content fingerprint of each path (blob hash, or "deleted"), to tell whether it changed again. */
async function fingerprints(cwd: string, paths: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const present = paths.filter((p) => {
    const ok = existsSync(join(cwd, p)) && !statSync(join(cwd, p)).isDirectory();
    if (!ok) out[p] = "deleted";
    return ok;
  });
  // One git call per 500 paths: hash-object takes many files at once.
  for (let i = 0; i < present.length; i += 500) {
    const batch = present.slice(i, i + 500);
    const { stdout } = await git(cwd, ["hash-object", "--no-filters", "--", ...batch]);
    stdout.split("\n").forEach((sha, k) => {
      if (k < batch.length) out[batch[k]!] = sha.trim();
    });
  }
  return out;
}
