/**
 * Timing helpers for benchmarks. Machines are noisy: every comparison is interleaved (A, B, A,
 * B, …) in one process and reported as a ratio of medians, never as an absolute promise.
 */
import { spawnSync } from "node:child_process";

export interface BenchRow {
  name: string;
  value: string;
}

export interface BenchResult {
  title: string;
  rows: BenchRow[];
  /** The target, and whether this run met it. */
  target: string;
  met: boolean;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Nanoseconds per call of fn, median over rounds of `iterations` calls each. */
export function nsPerCall(fn: () => unknown, iterations: number): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  return Number(process.hrtime.bigint() - start) / iterations;
}

export function interleaved(fns: Record<string, () => unknown>, options: { iterations: number; rounds: number; warmup?: number }): Record<string, number> {
  const names = Object.keys(fns);
  for (const name of names) for (let i = 0; i < (options.warmup ?? options.iterations); i++) fns[name]!();
  const samples: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < options.rounds; r++) for (const name of names) samples[name]!.push(nsPerCall(fns[name]!, options.iterations));
  return Object.fromEntries(names.map((n) => [n, median(samples[n]!)]));
}

/** Wall-clock milliseconds of whole commands, interleaved, median of `runs`. */
export function commandMs(commands: Record<string, string[]>, runs: number, cwd: string): Record<string, number> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((n) => [n, []]));
  for (let r = 0; r < runs + 2; r++) {
    for (const [name, [cmd, ...args]] of Object.entries(commands)) {
      const start = process.hrtime.bigint();
      const out = spawnSync(cmd as string, args, { cwd, stdio: "ignore" });
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (out.status !== 0 && out.status !== 1) throw new Error(`${name} exited with ${out.status}`);
      if (r >= 2) samples[name]!.push(ms); // the first runs warm the file cache
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([n, v]) => [n, median(v)]));
}

export function report(result: BenchResult): void {
  if (process.argv.includes("--json")) {
    process.stdout.write(JSON.stringify(result) + "\n");
    return;
  }
  console.log(`\n${result.title}`);
  for (const row of result.rows) console.log(`  ${row.name.padEnd(58)} ${row.value}`);
  console.log(`  target: ${result.target} — ${result.met ? "met" : "NOT met"}`);
}
