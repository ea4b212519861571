/**
 * Installs pulse's guidance hooks for one run of an agent CLI, in the CLI's own format, in the
 * run's folder: the user's settings are read, never written (hook-settings.ts says how each CLI
 * is given them). Returns the template values and environment the preset's `hooks` entry uses.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
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
  /** A folder of the run's outside its run folder, removed with it. */
  cleanup?: string;
  /** Why the CLI will not read the hooks (then it is steered at boundaries only). */
  warning?: string;
}

/**
 * A private folder for gemini's settings file: gemini skips a settings file any of whose parent
 * folders others may write to (the temp folder is), so it goes under pulse's cache folder
 * (mode 700). Null when a parent there is writable by others too.
 */
function secureDir(env: Readonly<Record<string, string | undefined>>): { dir: string } | { insecure: string } {
  const base = join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "pulse", "hooks");
  mkdirSync(base, { recursive: true, mode: 0o700 });
  for (let d = base; ; d = dirname(d)) {
    if ((statSync(d).mode & 0o022) !== 0) return { insecure: d };
    if (dirname(d) === d) break;
  }
  const dir = mkdtempSync(join(base, "gemini-"));
  chmodSync(dir, 0o700);
  return { dir };
}

/**
 * `command(event)` is the shell command a hook runs. `home` is the HOME the CLI runs with (its
 * config is found from it).
 */
export function installHooks(format: HookFormat, runDir: string, command: (event: HookEvent) => string, home: string = homedir(), env: Readonly<Record<string, string | undefined>> = process.env): HookInstall {
  const file = join(runDir, "settings.json");
  if (format === "claude") {
    writeFileSync(file, JSON.stringify(claudeHookSettings(command)));
    return { values: { hookSettings: file } };
  }
  if (format === "gemini") {
    const where = secureDir(env);
    if ("insecure" in where) return { values: {}, warning: `gemini skips settings in a folder others may write to (${where.insecure}): its hooks are not installed, it is steered at iteration boundaries only` };
    // The machine's own system defaults (the layer pulse's file replaces for this run) are kept in it.
    const defaults = join(where.dir, "system-defaults.json");
    writeFileSync(defaults, JSON.stringify(geminiHookSettings(command, readSettings("/etc/gemini-cli/system-defaults.json"))), { mode: 0o600 });
    return { values: { hookSettings: defaults }, cleanup: where.dir };
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
