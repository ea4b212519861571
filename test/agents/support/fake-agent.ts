import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CliDriver, type CliDriverOptions } from "../../../adapters/agents/cli/cli-driver.js";
import { BUILTIN_PRESETS } from "../../../adapters/agents/cli/presets.js";
import { pidAlive } from "../../../src/coding/liveness.js";

export const FAKE_AGENT = fileURLToPath(new URL("../fixtures/fake-agent.mjs", import.meta.url));

/** A CLI driver running the fake agent under the claude (or codex) preset. */
export function fakeDriver(env: Record<string, string>, options: CliDriverOptions = {}, preset: "claude" | "codex" = "claude"): CliDriver {
  return new CliDriver(BUILTIN_PRESETS[preset]!, {
    command: FAKE_AGENT,
    killGraceMs: 300,
    pipeGraceMs: 300,
    ...options,
    env: { FAKE_AGENT_FORMAT: preset, ...env, ...options.env },
    parentEnv: options.parentEnv ?? { PATH: process.env.PATH, HOME: process.env.HOME },
  });
}

export function tempDir(prefix = "pulse-test-"): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

export function pidsIn(file: string): number[] {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Waits until none of the pids is alive (zombies reaped), or the time is up. */
export async function allGone(pids: number[], withinMs = 5_000): Promise<boolean> {
  const end = Date.now() + withinMs;
  while (Date.now() < end) {
    if (pids.every((p) => !pidAlive(p))) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
