/**
 * The workflow's tools on `pulse serve`'s MCP server (beside the session tools): workflow_start,
 * workflow_status, workflow_list, workflow_events, workflow_stop, workflow_resume, workflow_steer. A refused call
 * is a tool error saying why.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { WorkflowApi } from "./workflow-api.js";

async function answer(fn: () => Promise<unknown>) {
  try {
    const value = await fn();
    return { content: [{ type: "text" as const, text: JSON.stringify(value, null, 2) }], structuredContent: { result: value } as Record<string, unknown> };
  } catch (e) {
    return { content: [{ type: "text" as const, text: (e as Error).message }], isError: true };
  }
}

const id = { workflowId: z.string().min(4).describe("the workflow id (or a unique prefix of at least 4 characters)") };

export function registerWorkflowTools(server: McpServer, api: WorkflowApi): void {
  server.registerTool(
    "workflow_start",
    {
      description: "Start a pulsing workflow: the plan's pulses run one at a time in a worktree of the workflow's own, each ending in one verified commit on the workflow branch.",
      inputSchema: {
        plan: z.string().min(1).describe("the plan's text: Markdown with one pulse per top-level list item, or JSON {pulses: [{title, description}]}"),
        planName: z.string().optional().describe("a file name for the plan (plan.json reads JSON)"),
        repo: z.string().min(1).describe("the git repository (a path on the server's machine); never touched, the workflow works in a worktree"),
        base: z.string().optional().describe("the branch or commit the workflow branch starts from (default the repository's current branch)"),
        branch: z.string().optional(),
        driver: z.string().optional().describe("claude, codex, openai, scripted, …"),
        script: z.string().optional().describe("the scripted driver's steps file (from a directory the server allows)"),
        model: z.string().optional(),
        merge: z.enum(["ff", "squash", "rebase"]).optional().describe("merge into --base when every pulse succeeded (never into a checked-out branch)"),
      },
    },
    (args) => answer(() => api.start(args)),
  );
  server.registerTool("workflow_status", { description: "A workflow's review summary: pulses, commits, unresolved issues, baselines, gate results, cost.", inputSchema: id }, ({ workflowId }) => answer(() => api.status(workflowId)));
  server.registerTool("workflow_list", { description: "Every workflow, newest first.", inputSchema: {} }, () => answer(() => api.list()));
  server.registerTool(
    "workflow_events",
    { description: "A workflow's events after seq `after` (preflight, pulses, turns and their verdicts); call again with after = next.", inputSchema: { ...id, after: z.number().int().min(0).optional() } },
    ({ workflowId, after }) => answer(() => api.events(workflowId, after ?? 0)),
  );
  server.registerTool("workflow_stop", { description: "Stop a running workflow now; the pulse's work is kept in a recovery commit on its branch.", inputSchema: id }, ({ workflowId }) => answer(() => api.stop(workflowId)));
  server.registerTool(
    "workflow_steer",
    {
      description: "Change a workflow's direction: the text becomes new guidance in its worktree; its next pulse turn is held to replan and acknowledge (the steer, the hold and the ack with the plan hash are in its events).",
      inputSchema: { ...id, text: z.string().min(1).max(20_000).describe("the new guidance") },
    },
    ({ workflowId, text }) => answer(() => api.steer(workflowId, text, "mcp")),
  );
  server.registerTool("workflow_resume", { description: "Resume a halted, stopped, failed or interrupted workflow (in the server's process).", inputSchema: id }, ({ workflowId }) => answer(() => api.resume(workflowId)));
}
