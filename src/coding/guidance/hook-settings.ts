/**
 * The hooks pulse installs in an agent CLI for one run, in the CLI's own settings format (kept
 * apart from the hook's verdict so the CLI driver needs nothing else of the kit).
 */
export const HOOK_EVENTS = ["pre-tool-use", "stop"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** The tools that change the workspace (claude's names); reads, searches and MCP tools pass. */
export const MUTATING_TOOLS = ["Bash", "Edit", "MultiEdit", "Write", "NotebookEdit"];

/** claude's settings for one run: the two hooks, each calling `command` with the event's name. */
export function claudeHookSettings(command: (event: HookEvent) => string): Record<string, unknown> {
  return {
    hooks: {
      PreToolUse: [{ matcher: MUTATING_TOOLS.join("|"), hooks: [{ type: "command", command: command("pre-tool-use"), timeout: 30 }] }],
      Stop: [{ hooks: [{ type: "command", command: command("stop"), timeout: 30 }] }],
    },
  };
}
