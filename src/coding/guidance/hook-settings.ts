/**
 * The hooks pulse installs in an agent CLI for one run, in the CLI's own settings format (kept
 * apart from the hook's verdict so the CLI driver needs nothing else of the kit). Each format
 * adds pulse's hooks to what the CLI would read anyway, never in place of it:
 * - claude: a `--settings` file of its own (claude merges it over the user's settings);
 * - gemini: a system-defaults file (`GEMINI_CLI_SYSTEM_DEFAULTS_PATH`, the lowest layer; gemini
 *   concatenates hook arrays across layers), holding the machine's own defaults plus pulse's hooks;
 * - qwen: a config home (`QWEN_HOME`) whose settings.json is the user's plus pulse's hooks (qwen
 *   reads hooks from the user's settings only), the rest of the user's qwen home linked into it.
 */
export const HOOK_EVENTS = ["pre-tool-use", "stop"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];
export type HookFormat = "claude" | "gemini" | "qwen";

/** The tools that change the workspace, by CLI: reads, searches and MCP tools pass. */
export const MUTATING_TOOLS_BY_FORMAT: Record<HookFormat, readonly string[]> = {
  claude: ["Bash", "Edit", "MultiEdit", "Write", "NotebookEdit"],
  gemini: ["run_shell_command", "write_file", "replace"],
  qwen: ["run_shell_command", "write_file", "edit"],
};
export const MUTATING_TOOLS: readonly string[] = [...new Set(Object.values(MUTATING_TOOLS_BY_FORMAT).flat())];
/** The shell tools, whose command pulse reads (a `pulse guidance ack` through the shell is the replan's own step). */
export const SHELL_TOOLS: readonly string[] = ["Bash", "run_shell_command"];

const anchored = (names: readonly string[]) => `^(${names.join("|")})$`;

/** claude's settings for one run: the two hooks, each calling `command` with the event's name. */
export function claudeHookSettings(command: (event: HookEvent) => string): Record<string, unknown> {
  return {
    hooks: {
      PreToolUse: [{ matcher: MUTATING_TOOLS_BY_FORMAT.claude.join("|"), hooks: [{ type: "command", command: command("pre-tool-use"), timeout: 30 }] }],
      Stop: [{ hooks: [{ type: "command", command: command("stop"), timeout: 30 }] }],
    },
  };
}

type Settings = Record<string, unknown>;

function withHooks(existing: Settings, add: Record<string, unknown[]>): Settings {
  const hooks = existing.hooks && typeof existing.hooks === "object" && !Array.isArray(existing.hooks) ? (existing.hooks as Record<string, unknown>) : {};
  const merged: Record<string, unknown> = { ...hooks };
  for (const [event, defs] of Object.entries(add)) merged[event] = [...(Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : []), ...defs];
  return { ...existing, hooks: merged };
}

/** gemini's system defaults for one run: the machine's own (`existing`) with BeforeTool and AfterAgent hooks added (timeouts in ms). */
export function geminiHookSettings(command: (event: HookEvent) => string, existing: Settings = {}): Settings {
  return withHooks(existing, {
    BeforeTool: [{ matcher: anchored(MUTATING_TOOLS_BY_FORMAT.gemini), hooks: [{ type: "command", name: "pulse-guidance-pre-tool-use", command: command("pre-tool-use"), timeout: 30_000 }] }],
    AfterAgent: [{ hooks: [{ type: "command", name: "pulse-guidance-stop", command: command("stop"), timeout: 30_000 }] }],
  });
}

/** qwen's user settings for one run: the user's own (`existing`) with PreToolUse and Stop hooks added. */
export function qwenHookSettings(command: (event: HookEvent) => string, existing: Settings = {}): Settings {
  return withHooks(existing, {
    PreToolUse: [{ matcher: anchored(MUTATING_TOOLS_BY_FORMAT.qwen), hooks: [{ type: "command", name: "pulse-guidance-pre-tool-use", command: command("pre-tool-use"), timeout: 30_000 }] }],
    Stop: [{ hooks: [{ type: "command", name: "pulse-guidance-stop", command: command("stop"), timeout: 30_000 }] }],
  });
}
