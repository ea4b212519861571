/**
 * Done means verified: the checks a loop runs itself (`--verify CMD`), their baseline taken
 * before the agent started, and the verdict on a COMPLETE. A check's failures are the lines of
 * its output that name a failure, normalised so that a rerun of the same failure compares equal
 * (paths' line and column numbers, durations, counts, hex ids, temporary directories removed). A
 * COMPLETE passes only if no check fails that passed at the baseline and no failure appears in a
 * check that already failed there. Pure: running the commands is the caller's.
 */

export interface CheckRun {
  command: string;
  exit: number;
  output: string;
  durationMs: number;
}

/** Runs checks in a directory (bound where the program is assembled: adapters/agents/cli/checks.ts). */
export type CheckRunner = (commands: readonly string[], options: { cwd: string; timeoutMs: number; signal?: AbortSignal; onSpawn?: (info: { pid: number; pgid: number; startTime: number; marker: string }) => void; marker?: string }) => Promise<CheckRun[]>;

export interface CheckBaseline {
  command: string;
  exit: number;
  failures: string[];
}

export interface CheckVerdict {
  command: string;
  exit: number;
  /** Failures this run has that the baseline did not (empty: the check holds). */
  newFailures: string[];
  durationMs: number;
}

export interface GateVerdict {
  passed: boolean;
  checks: CheckVerdict[];
}

const FAILURE = /\b(fail(ed|ure|s|ing)?|error|errors|exception|panic(ked)?|not ok|assert(ion)?error|traceback|✗|×|✘)\b|^\s*(✗|×|✘|FAIL|ERR!?)\b/i;
// "0 failed", "no errors", and TAP's "# fail 0" (node --test), "errors: 0": counts of nothing, not failures.
const PASSING = /\b(0|no) (fail(ed|ures?)?|errors?)\b|\b(fail(ed|ures?)?|errors?):?\s+0\b/i;

/** One output line with what varies between runs of the same failure taken out. */
export function normaliseLine(line: string): string {
  return line
    .replace(/\x1b\[[0-9;]*m/g, "") // colour
    .replace(/\/tmp\/[^\s:'"]+/g, "<tmp>")
    .replace(/(:\d+)(:\d+)?\b/g, ":N") // file:line:col
    .replace(/\b\d+(\.\d+)?\s?(ms|s|sec|seconds|m|min)\b/gi, "<time>")
    .replace(/\b[0-9a-f]{7,40}\b/gi, "<id>")
    .replace(/\d+/g, "N")
    .replace(/\s+/g, " ")
    .trim();
}

/** The distinct normalised failure lines of a check's output. */
export function failuresOf(output: string): string[] {
  const out = new Set<string>();
  for (const line of output.split(/\r?\n/)) {
    if (!FAILURE.test(line) || PASSING.test(line)) continue;
    const n = normaliseLine(line);
    if (n) out.add(n.slice(0, 300));
  }
  return [...out];
}

export function baselineOf(run: CheckRun): CheckBaseline {
  return { command: run.command, exit: run.exit, failures: failuresOf(run.output) };
}

/** Each check against its baseline (by command; a check with no baseline is held to passing). */
export function compareToBaseline(runs: readonly CheckRun[], baseline: readonly CheckBaseline[]): GateVerdict {
  const checks = runs.map((run): CheckVerdict => {
    const base = baseline.find((b) => b.command === run.command);
    if (run.exit === 0) return { command: run.command, exit: 0, newFailures: [], durationMs: run.durationMs };
    const now = failuresOf(run.output);
    const named = now.length > 0 ? now : [`exit ${run.exit}`];
    if (!base || base.exit === 0) return { command: run.command, exit: run.exit, newFailures: named, durationMs: run.durationMs };
    const before = new Set(base.failures);
    // It failed before too: only failures it did not have then are new (a new exit code alone is not).
    const fresh = now.filter((f) => !before.has(f));
    return { command: run.command, exit: run.exit, newFailures: fresh, durationMs: run.durationMs };
  });
  return { passed: checks.every((c) => c.newFailures.length === 0), checks };
}

/** What the agent is told of a rejected COMPLETE. */
export function describeVerdict(v: GateVerdict, maxLines = 20): string {
  const lines: string[] = [];
  for (const c of v.checks) {
    if (c.newFailures.length === 0) continue;
    lines.push(`\`${c.command}\` (exit ${c.exit}):`);
    for (const f of c.newFailures.slice(0, maxLines)) lines.push(`  - ${f}`);
    if (c.newFailures.length > maxLines) lines.push(`  - … and ${c.newFailures.length - maxLines} more`);
  }
  return lines.join("\n");
}

/**
 * Seed 001's pattern baselines: problems recorded before the agent's work (a compiler code, a
 * failing test's name), matched against failure lines after both are normalised, so a line
 * naming a known problem (in the recorded file, when one is given) is never counted as new.
 */
export interface PatternBaseline {
  issueType: "Error" | "Warning";
  source: "Build" | "Lint" | "Test";
  pattern: string;
  filePath?: string;
  description?: string;
}

export function isKnownFailure(line: string, patterns: readonly PatternBaseline[]): boolean {
  const l = line.toLowerCase();
  return patterns.some((p) => {
    const pattern = normaliseLine(p.pattern).toLowerCase();
    if (!pattern || !l.includes(pattern)) return false;
    return !p.filePath || l.includes(normaliseLine(p.filePath).toLowerCase());
  });
}

/** A verdict with the failures the pattern baselines name taken out (a check is held to its baseline for the rest). */
export function excuseKnown(v: GateVerdict, patterns: readonly PatternBaseline[]): GateVerdict {
  if (patterns.length === 0) return v;
  const checks = v.checks.map((c) => ({ ...c, newFailures: c.newFailures.filter((f) => !isKnownFailure(f, patterns)) }));
  return { passed: checks.every((c) => c.newFailures.length === 0), checks };
}
