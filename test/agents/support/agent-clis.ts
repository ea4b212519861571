import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

/**
 * The bin folder of the real agent CLIs (test/agent-clis, installed into the cache by
 * `node test/agent-clis/install.mjs`, which .ci/run does), or undefined when not installed.
 */
export function agentClisBin(): string | undefined {
  const r = spawnSync(process.execPath, ["test/agent-clis/install.mjs", "--check"], { encoding: "utf8" });
  const dir = r.status === 0 ? r.stdout.trim() : undefined;
  return dir && existsSync(dir) ? dir : undefined;
}

export function cliPath(bin: string, name: string): string | undefined {
  const p = join(bin, name);
  return existsSync(p) ? p : undefined;
}
