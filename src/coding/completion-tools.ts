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
