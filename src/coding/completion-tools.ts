/**
 * The tools a coding loop's agent ends its turn with, defined once and served two ways: natively
 * to the HTTP driver (`AgentRequest.terminalTools`), and over MCP to a CLI agent (`pulse session
 * mcp --session ID`), whose call then shows in the agent's stream. Either way the call is the
 * signal resolver's first source, ahead of a `<signal>` tag in the agent's words.
 */
import type { TerminalTool } from "../agents/contract.js";

export const SIGNALS = ["CONTINUE", "COMPLETE", "BLOCKED"] as const;

/** Seed 000's signal, as a tool: the session loop's completion tool. */
export const PULSE_SIGNAL_TOOL: TerminalTool = {
  name: "pulse_signal",
  description: "End this turn with the session's signal: CONTINUE when there is more to do, COMPLETE when the goal is achieved, BLOCKED (with a reason) when you need a person.",
  parameters: {
    type: "object",
    properties: {
      signal: { type: "string", enum: [...SIGNALS] },
      reason: { type: "string", description: "why (required for BLOCKED): what you need" },
    },
    required: ["signal"],
    additionalProperties: false,
  },
};

/**
 * Seed 001's baseline: a problem that was there before the workflow's pulses (a compiler code, a
 * failing test's name), so the gate does not blame a pulse for it.
 */
const BASELINE_FIELDS = {
  issueType: { type: "string", enum: ["Error", "Warning"] },
  source: { type: "string", enum: ["Build", "Lint", "Test"] },
  pattern: { type: "string", minLength: 1, description: "an error code or a piece of the message, as it appears in the output" },
  filePath: { type: "string", description: "the file it is in, if it is in one" },
  description: { type: "string" },
} as const;

/** The preflight agent records one pre-existing problem (it may call it several times). */
export const RECORD_BASELINE_TOOL: TerminalTool = {
  name: "record_baseline",
  description: "Record a problem that exists before any pulse (an error or warning of the build, lint or tests), so pulses are not blamed for it. Call it once per problem, then preflight_done.",
  parameters: { type: "object", properties: { ...BASELINE_FIELDS }, required: ["issueType", "source", "pattern"], additionalProperties: false },
};

/** The preflight agent's completion: what it set up, and the commands the pulses will be held to. */
export const PREFLIGHT_DONE_TOOL: TerminalTool = {
  name: "preflight_done",
  description: "End the preflight: say what you set up. Do not modify tracked files; only untracked artifacts (node_modules, build output) may be created.",
  parameters: {
    type: "object",
    properties: {
      summary: { type: "string", minLength: 1 },
      setupCommands: { type: "array", items: { type: "string" } },
      buildSuccess: { type: "boolean" },
      verificationCommands: { type: "array", items: { type: "string" }, description: "shell commands (build, tests, lint) every pulse's work will be checked with" },
      baselinesRecorded: { type: "integer", minimum: 0 },
    },
    required: ["summary", "buildSuccess"],
    additionalProperties: false,
  },
};

/** The pulse's completion; `withEscape` reveals `unresolvedIssues` (after repeated rejections: it halts orchestration). */
export function pulseDoneTool(withEscape: boolean): TerminalTool {
  return {
    name: "pulse_done",
    description: `End the pulse: its summary becomes the commit message (a Conventional Commit: feat:, fix:, refactor:, docs:, test:, chore:). The files changed are read from git.${withEscape ? " unresolvedIssues: only for problems you genuinely cannot fix; naming any halts the workflow for a person." : ""}`,
    parameters: {
      type: "object",
      properties: {
        summary: { type: "string", minLength: 1 },
        filesChanged: { type: "array", items: { type: "string" } },
        ...(withEscape
          ? { unresolvedIssues: { type: "array", items: { type: "object", properties: { issue: { type: "string" }, reason: { type: "string" } }, required: ["issue", "reason"], additionalProperties: false } } }
          : {}),
      },
      required: ["summary"],
      additionalProperties: false,
    },
  };
}

/** The pulse needs another turn: what is done and what remains. */
export const REQUEST_EXTENSION_TOOL: TerminalTool = {
  name: "request_extension",
  description: "Ask for another turn on this pulse (request it early rather than risk truncation): what you completed and what remains.",
  parameters: {
    type: "object",
    properties: { reason: { type: "string", minLength: 1 }, completed: { type: "array", items: { type: "string" } }, remaining: { type: "array", items: { type: "string" } } },
    required: ["reason"],
    additionalProperties: false,
  },
};

/** Names the public code uses for the same tool: `complete_pulse` is Autarch's `pulse_done`. */
export const TOOL_ALIASES: Readonly<Record<string, readonly string[]>> = { pulse_done: ["pulse_done", "complete_pulse"] };

/** Whether a call (as a driver reports it: `pulse_done`, `mcp__pulse__pulse_done`, `pulse.pulse_done`) is of the tool `name`. */
export function isToolCall(callName: string, name: string): boolean {
  return (TOOL_ALIASES[name] ?? [name]).some((n) => callName === n || callName.endsWith(`__${n}`) || callName.endsWith(`.${n}`));
}

/**
 * Seed 004's acknowledgement, as a completion tool: offered to an agent whose turn is a replan
 * (a guidance change is pending), natively or over MCP, and judged by the guidance gate after
 * the turn: only the pending event is accepted, recorded with plan.md's hash.
 */
export const PULSE_ACK_REPLAN_TOOL: TerminalTool = {
  name: "pulse_ack_replan",
  description: "After updating .pulse/plan.md for the changed guidance, acknowledge the replan with the pending replan event id you were given. Only the current pending event is accepted.",
  parameters: {
    type: "object",
    properties: { event_id: { type: "string", description: "the pending replan event id (evt_…)" } },
    required: ["event_id"],
    additionalProperties: false,
  },
};
