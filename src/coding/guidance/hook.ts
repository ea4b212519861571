/**
 * Inside a turn: the verdict of the hooks pulse installs in an agent CLI that has them (claude's
 * and qwen's `PreToolUse` and `Stop`, gemini's `BeforeTool` and `AfterAgent`; hook-settings.ts). While a replan is pending, a
 * mutating tool call is blocked, except the replan's own edit of `.pulse/plan.md` and the
 * acknowledgement itself; and the agent is kept from stopping once, so it replans in this turn
 * instead of ending on a stale plan. A pure function of the hook's input and the gate.
 */
import { replanBriefing, type HeldReplan } from "./gate.js";
import { MUTATING_TOOLS, SHELL_TOOLS, type HookEvent } from "./hook-settings.js";

export { HOOK_EVENTS, type HookEvent } from "./hook-settings.js";


/** What claude, gemini and qwen send a hook on stdin (the fields pulse reads; the same names in all three). */
export interface HookInput {
  hook_event_name?: string;
  tool_name?: string;
  tool_input?: Record<string, unknown>;
  /** Stop: true when the agent goes on because a Stop hook blocked it already. */
  stop_hook_active?: boolean;
}


export interface HookVerdict {
  block: boolean;
  /** Why, for the agent (claude feeds a blocking hook's stderr to the model). */
  message?: string;
}

function replanStep(input: HookInput): boolean {
  const t = input.tool_input ?? {};
  const path = typeof t.file_path === "string" ? t.file_path : typeof t.notebook_path === "string" ? t.notebook_path : "";
  if (/(^|[\\/])\.pulse[\\/]plan\.md$/.test(path)) return true;
  // The acknowledgement (and a look at what is pending) through the CLI, for an agent without the MCP tool.
  return SHELL_TOOLS.includes(input.tool_name ?? "") && typeof t.command === "string" && /^\s*(\S*\/)?pulse(\.mjs)? guidance (ack|status)\b[^;&|`$<>]*$/.test(t.command);
}

export function hookVerdict(event: HookEvent, input: HookInput, held: HeldReplan | null): HookVerdict {
  if (!held) return { block: false };
  if (event === "pre-tool-use") {
    if (!MUTATING_TOOLS.includes(input.tool_name ?? "") || replanStep(input)) return { block: false };
    return { block: true, message: `pulse blocked ${input.tool_name}: the guidance changed while you were working.\n\n${replanBriefing(held)}` };
  }
  // Blocked once: a second stop in a row is let through (the session's gate holds its next iteration anyway).
  if (input.stop_hook_active) return { block: false };
  return { block: true, message: `pulse: do not stop yet: the guidance changed while you were working.\n\n${replanBriefing(held)}` };
}

