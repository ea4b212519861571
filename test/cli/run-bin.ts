import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");

/** Runs a shipped bin (as built by `npm run build`) and captures everything. */
export type Bin = "pulse" | "pulse-validate" | "pulse-diagram" | "pulse-conform";

/** How long a bin may run: a hung child fails its test with what it printed, never hangs the suite. */
export const RUN_BIN_TIMEOUT_MS = 120_000;

export function runBin(bin: Bin, args: string[], options: { input?: string; env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {}) {
  const path = resolve(ROOT, "dist/bin", `${bin}.mjs`);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` first (npm test does)`);
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", ...isolatedStore(), ...options.env };
  const timeout = options.timeoutMs ?? RUN_BIN_TIMEOUT_MS;
  const r = spawnSync(process.execPath, [path, ...args], { cwd: options.cwd ?? ROOT, input: options.input ?? "", encoding: "utf8", env, timeout, killSignal: "SIGKILL" });
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT") {
    throw new Error(`${bin} ${args.join(" ")} did not finish within ${timeout} ms and was killed\n--- its stdout ---\n${r.stdout ?? ""}\n--- its stderr ---\n${r.stderr ?? ""}`);
  }
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

let storeDirs: string[] | undefined;

/**
 * A fresh store for one `pulse run` (a SQLite file of its own, as the default would be): runs
 * started from the repository root would otherwise share .pulse/pulse.db and continue each
 * other's iterations. Tests of what carries over pass --store themselves.
 */
export function isolatedStore(): { PULSE_STORE: string } {
  if (!storeDirs) {
    const dirs: string[] = (storeDirs = []);
    process.on("exit", () => {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });
  }
  const dir = mkdtempSync(join(tmpdir(), "pulse-run-store-"));
  storeDirs.push(dir);
  return { PULSE_STORE: `sqlite:${join(dir, "pulse.db")}` };
}
