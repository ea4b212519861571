/**
 * Installs pulse's guidance hooks for one run of an agent CLI, in the CLI's own format, in the
 * run's folder: the user's settings are read, never written (hook-settings.ts says how each CLI
 * is given them). Returns the template values and environment the preset's `hooks` entry uses.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { claudeHookSettings, geminiHookSettings, qwenHookSettings, type HookEvent, type HookFormat } from "../../../src/coding/guidance/hook-settings.js";

/** A settings file as JSON, or {} when missing; one that is not a JSON object is not merged (the hook still goes in). */
function readSettings(path: string): Record<string, unknown> {
  try {
    const v = JSON.parse(readFileSync(path, "utf8")) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export interface HookInstall {
  /** `{hookSettings}`: the settings file; `{hookHome}`: the config home (qwen); `{cliHome}`: the CLI's own config home it stands in for. */
  values: Record<string, string>;
}

/**
 * `command(event)` is the shell command a hook runs. `home` is the HOME the CLI runs with (its
 * config is found from it).
 */
export function installHooks(format: HookFormat, runDir: string, command: (event: HookEvent) => string, home: string = homedir()): HookInstall {
  const file = join(runDir, "settings.json");
  if (format === "claude") {
    writeFileSync(file, JSON.stringify(claudeHookSettings(command)));
    return { values: { hookSettings: file } };
  }
  if (format === "gemini") {
    // The machine's own system defaults (the layer pulse's file replaces for this run) are kept in it.
    writeFileSync(file, JSON.stringify(geminiHookSettings(command, readSettings("/etc/gemini-cli/system-defaults.json"))));
    return { values: { hookSettings: file } };
  }
  // qwen reads hooks from the user's settings only: a config home of the run's, its settings.json
  // the user's plus the hooks, everything else of the user's qwen home linked (credentials,
  // memory, extensions); the runtime folder (sessions, for resume) stays the user's.
  const user = join(home, ".qwen");
  const hookHome = join(runDir, "qwen-home");
  mkdirSync(hookHome, { recursive: true });
  if (existsSync(user)) for (const name of readdirSync(user)) if (name !== "settings.json") symlinkSync(join(user, name), join(hookHome, name));
  writeFileSync(join(hookHome, "settings.json"), JSON.stringify(qwenHookSettings(command, readSettings(join(user, "settings.json")))));
  return { values: { hookSettings: join(hookHome, "settings.json"), hookHome, cliHome: user } };
}
