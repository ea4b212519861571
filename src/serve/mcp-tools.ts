/**
 * The session tools over MCP (one server, any transport: stdio for `pulse session mcp`,
 * Streamable HTTP at /mcp of `pulse serve`): pulse_start, pulse_status, pulse_pause,
 * pulse_resume, pulse_abort, pulse_list, pulse_events, with the seed's argument names. Later loops add their
 * tools to the same server. A refused call is a tool error saying why, never a crash.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { VERSION } from "../version.js";
import { SESSION_STATUSES } from "../coding/session/records.js";
import type { SessionApi } from "./session-api.js";
import { PULSE_SIGNAL_TOOL, SIGNALS } from "../coding/completion-tools.js";
import { GuidanceSidecar } from "../coding/guidance/sidecar.js";
import { workdirOf } from "../coding/session/workspace.js";
import { registerGuidanceTools } from "./guidance-mcp.js";

type ToolResult = { content: { type: "text"; text: string }[]; isError?: boolean; structuredContent?: Record<string, unknown> };

async function answer(fn: () => Promise<unknown>): Promise<ToolResult> {
  try {
    const value = await fn();
    return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }], structuredContent: { result: value } as Record<string, unknown> };
  } catch (e) {
    return { content: [{ type: "text", text: (e as Error).message }], isError: true };
  }
}

const id = { sessionId: z.string().min(4).describe("the session id (or a unique prefix of at least 4 characters)") };

/** Budgets that pause a session when reached (checked by the session service, naming the field). */
const BUDGETS = {
  maxCost: z.union([z.number(), z.string()]).optional().describe("US dollars (across resumes) at which the session pauses, e.g. 5"),
  maxTokens: z.union([z.number(), z.string()]).optional().describe("tokens (across resumes) at which the session pauses"),
  maxWall: z.union([z.string(), z.number()]).optional().describe("the time its turns may take in all before it pauses, e.g. \"8h\" (or milliseconds)"),
};

export interface SessionMcpOptions {
  /** With onlySession: leave out pulse_status (the none and prefetch strategies give no history this way). */
  noHistory?: boolean;
  /**
   * Serve only pulse_status, and only of this session (id or unique prefix): what an agent
   * running inside the session is handed, so it can read its history but never steer, or see,
   * any session.
   */
  onlySession?: string;
}

export function createSessionMcpServer(api: SessionApi, options: SessionMcpOptions = {}): McpServer {
  const server = new McpServer({ name: "pulse", version: VERSION });
  if (options.onlySession !== undefined) {
    const own = options.onlySession;
    server.registerTool(
      PULSE_SIGNAL_TOOL.name,
      {
        description: PULSE_SIGNAL_TOOL.description,
        inputSchema: { signal: z.enum(SIGNALS).describe("CONTINUE, COMPLETE or BLOCKED"), reason: z.string().optional().describe("why (required for BLOCKED): what you need") },
      },
      // The call itself, in the agent's stream, is the signal pulse reads; this only acknowledges it.
      ({ signal, reason }) => {
        if (signal === "BLOCKED" && !reason?.trim()) return { content: [{ type: "text", text: "BLOCKED needs a reason: say what you need from a person" }], isError: true };
        return { content: [{ type: "text", text: `signal ${signal} received: end your turn now` }] };
      },
    );
    // The guidance tools of the session's working directory: a replan turn acknowledges through them.
    registerGuidanceTools(server, async () => GuidanceSidecar.open({ root: workdirOf((await api.status(own)).session) }));
    if (options.noHistory) return server;
    server.registerTool(
      "pulse_status",
      { description: "This session's status and the evidence of each earlier iteration (signal, commit, files, tokens).", inputSchema: { sessionId: z.string().optional().describe("this session's id (the only one served here)") } },
      ({ sessionId }) =>
        answer(async () => {
          const detail = await api.status(own);
          if (sessionId !== undefined && sessionId !== "" && !detail.session.id.startsWith(sessionId)) throw new Error(`only this session (${detail.session.id}) can be read here`);
          return detail;
        }),
    );
    return server;
  }
  server.registerTool(
    "pulse_start",
    {
      description: "Create and start an autonomous coding session: an agent iterates on the goal in the git repository until it signals COMPLETE or BLOCKED, or a limit stops it.",
      inputSchema: {
        goal: z.string().min(1).describe("what to accomplish"),
        projectPath: z.string().min(1).optional().describe("the git repository to work in (default: the server's directory)"),
        projectName: z.string().min(1).optional(),
        maxIterations: z.number().int().min(1).max(1000).optional(),
        branch: z.string().min(1).optional().describe("the session's branch (default pulse/session/<short id>)"),
        base: z.string().min(1).optional().describe("the commit or ref its branch starts from (default the repository's HEAD)"),
        inPlace: z.boolean().optional().describe("work in the repository's own checkout instead of a worktree of its own"),
        allowDirty: z.boolean().optional().describe("with inPlace: accept a checkout with uncommitted or untracked files"),
        anchor: z.string().min(1).optional().describe("the turn the first iteration starts from"),
        driver: z.string().min(1).optional().describe("claude, codex, openai, scripted, …"),
        script: z.string().min(1).optional().describe("the scripted driver's steps file"),
        contextStrategy: z.enum(["none", "prefetch", "mcp", "hybrid"]).optional(),
        turnTimeout: z.union([z.string(), z.number()]).optional().describe("a turn's wall-clock limit, e.g. \"20m\" (default: the profile's, else the driver's)"),
        silenceTimeout: z.union([z.string(), z.number()]).optional().describe("how long the agent may print nothing before it is stopped, e.g. \"5m\""),
        notify: z.array(z.string()).optional().describe("channels to notify, e.g. [\"telegram:123456789\", \"slack:https://hooks.slack.com/…\"]: only the kinds the server's profile allows (notify.allowFromRequests)"),
        ...BUDGETS,
      },
    },
    (args) => answer(() => api.start(args, "mcp")),
  );
  server.registerTool("pulse_status", { description: "A session's status and the evidence of each iteration (signal, commit, files, tokens).", inputSchema: id }, ({ sessionId }) => answer(() => api.status(sessionId)));
  server.registerTool("pulse_pause", { description: "Pause a session after its current iteration.", inputSchema: id }, ({ sessionId }) => answer(() => api.pause(sessionId)));
  server.registerTool(
    "pulse_resume",
    { description: "Resume a paused, blocked or failed session; maxCost, maxTokens, maxWall raise the budget that paused it.", inputSchema: { ...id, ...BUDGETS } },
    ({ sessionId, ...budgets }) => answer(() => api.resume(sessionId, budgets)),
  );
  server.registerTool("pulse_abort", { description: "Abort a session now: the agent is stopped and unfinished work kept in a recovery commit.", inputSchema: id }, ({ sessionId }) => answer(() => api.abort(sessionId)));
  server.registerTool(
    "pulse_steer",
    {
      description: "Change a session's direction: the text becomes new guidance in its working directory; the session holds before its next iteration until its agent has replanned and acknowledged (the steer, the ack and the plan hash are in its events).",
      inputSchema: { ...id, text: z.string().min(1).max(20_000).describe("the new guidance") },
    },
    ({ sessionId, text }) => answer(async () => {
      const r = await api.steer(sessionId, text, "mcp");
      return { session: r.session, event: r.event };
    }),
  );
  server.registerTool(
    "pulse_list",
    { description: "List sessions, newest first, optionally only those with a status.", inputSchema: { status: z.enum(SESSION_STATUSES as unknown as [string, ...string[]]).optional() } },
    ({ status }) => answer(() => api.list(status)),
  );
  server.registerTool(
    "pulse_events",
    {
      description: "A session's event stream as kept (session.started, iteration.started, agent text and tool calls, iteration.finished, session.finished…), a page after seq `after`; call again with after = next for what came since.",
      inputSchema: { ...id, after: z.number().int().min(0).optional().describe("the seq of the last event already read (default 0: from the start)") },
    },
    ({ sessionId, after }) => answer(() => api.events(sessionId, after ?? 0)),
  );
  return server;
}
