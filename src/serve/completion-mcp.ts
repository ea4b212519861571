/**
 * A loop's completion tools (src/coding/completion-tools.ts) over MCP on stdio, for a CLI agent
 * (`pulse workflow mcp --phase …`): each tool is listed with its JSON Schema as defined once,
 * and a call is only acknowledged: the call itself, in the agent's stream, is what the loop
 * reads (as the session's pulse_signal). With a working directory, the guidance tools of its
 * `.pulse/` too (src/serve/guidance-mcp.ts), answered for real: a workflow's agent acknowledges
 * a replan through them.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { serveStdio } from "./stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { TerminalTool } from "../agents/contract.js";
import { GuidanceSidecar } from "../coding/guidance/sidecar.js";
import { VERSION } from "../version.js";
import { callGuidanceTool, GUIDANCE_TOOL_LISTINGS } from "./guidance-mcp.js";

/**
 * `guidance`: the working directory whose guidance (`.pulse/`) the agent may read the interrupt
 * status of and acknowledge a replan in (pulse_should_interrupt, pulse_ack_replan), as a
 * session's agent does through its own server.
 */
export function createCompletionToolServer(tools: readonly TerminalTool[], guidance?: string): Server {
  const server = new Server({ name: "pulse", version: VERSION }, { capabilities: { tools: {} } });
  const listed = [...tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters as { type: "object" } })), ...(guidance ? GUIDANCE_TOOL_LISTINGS : [])];
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const answered = guidance ? await callGuidanceTool(() => GuidanceSidecar.open({ root: guidance }), req.params.name, req.params.arguments) : undefined;
    if (answered) return answered;
    const tool = tools.find((t) => t.name === req.params.name);
    if (!tool) return { content: [{ type: "text", text: `no tool ${req.params.name} here: the tools are ${listed.map((t) => t.name).join(", ")}` }], isError: true };
    const missing = ((tool.parameters.required as string[] | undefined) ?? []).filter((k) => (req.params.arguments ?? {})[k] === undefined);
    if (missing.length > 0) return { content: [{ type: "text", text: `${tool.name} needs ${missing.join(", ")}` }], isError: true };
    const ends = tool.name !== "record_baseline";
    return { content: [{ type: "text", text: ends ? `${tool.name} received: end your turn now` : "baseline recorded" }] };
  });
  return server;
}

export async function serveCompletionTools(tools: readonly TerminalTool[], guidance?: string): Promise<number> {
  const server = createCompletionToolServer(tools, guidance);
  await serveStdio(server);
  await server.close();
  return 0;
}
