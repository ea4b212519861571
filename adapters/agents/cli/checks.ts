/**
 * Runs a loop's checks (`--verify CMD`) as pulse runs an agent: `bash -c CMD` in the worktree,
 * closed stdin, its own process group, the environment allowlist, a wall-clock limit, each
 * process reported as it starts (so the store names it while it lives). Output is kept capped;
 * the gate (src/coding/gate.ts) reads the failures out of it.
 */
import type { SpawnInfo } from "../../../src/agents/contract.js";
import type { CheckRun } from "../../../src/coding/gate.js";
import { buildEnv } from "./env.js";
import { runProcess } from "./run-process.js";

export interface CheckOptions {
  cwd: string;
  parentEnv: Readonly<Record<string, string | undefined>>;
  timeoutMs: number;
  signal?: AbortSignal;
  onSpawn?: (info: SpawnInfo) => void;
  marker?: string;
}

export async function runChecks(commands: readonly string[], o: CheckOptions): Promise<CheckRun[]> {
  const runs: CheckRun[] = [];
  for (const command of commands) {
    const started = performance.now();
    const env = buildEnv({ parent: o.parentEnv, passThrough: [], set: { CI: "true" }, cwd: o.cwd });
    const out = await runProcess(
      { command: "bash", args: ["-c", command], cwd: o.cwd, env, timeoutMs: o.timeoutMs, killGraceMs: 2_000, maxOutputBytes: 1 << 20 },
      { ...(o.signal ? { signal: o.signal } : {}), ...(o.onSpawn ? { onSpawn: o.onSpawn } : {}), ...(o.marker ? { marker: o.marker } : {}) },
    );
    const why = out.reason === "timeout" ? `\nerror: the check timed out after ${o.timeoutMs} ms` : out.reason === "spawn_error" ? `\nerror: ${out.error ?? "could not start bash"}` : "";
    const exit = out.reason === "exited" ? (out.code ?? 1) : 124;
    runs.push({ command, exit, output: `${out.stdout}\n${out.stderr}${why}`, durationMs: Math.round(performance.now() - started) });
    if (o.signal?.aborted) break;
  }
  return runs;
}
