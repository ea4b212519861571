import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");

/** Runs a shipped bin (as built by `npm run build`) and captures everything. */
export type Bin = "pulse" | "pulse-validate" | "pulse-diagram" | "pulse-conform";

export function runBin(bin: Bin, args: string[], options: { input?: string; env?: Record<string, string>; cwd?: string } = {}) {
  const path = resolve(ROOT, "dist/bin", `${bin}.mjs`);
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run build\` first (npm test does)`);
  const env: Record<string, string> = { PATH: process.env.PATH ?? "", ...options.env };
  const r = spawnSync(process.execPath, [path, ...args], { cwd: options.cwd ?? ROOT, input: options.input ?? "", encoding: "utf8", env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
