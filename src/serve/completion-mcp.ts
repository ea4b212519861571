/**
 * A loop's completion tools (src/coding/completion-tools.ts) over MCP on stdio, for a CLI agent
 * (`pulse workflow mcp --phase …`): each tool is listed with its JSON Schema as defined once,
 * and a call is only acknowledged: the call itself, in the agent's stream, is what the loop
 * reads (as the session's pulse_signal).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { serveStdio } from "./stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { TerminalTool } from "../agents/contract.js";
import { VERSION } from "../version.js";

export function createCompletionToolServer(tools: readonly TerminalTool[]): Server {
  const server = new Server({ name: "pulse", version: VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters as { type: "object" } })) }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const tool = tools.find((t) => t.name === req.params.name);
    if (!tool) return { content: [{ type: "text", text: `no tool ${req.params.name} here: the tools are ${tools.map((t) => t.name).join(", ")}` }], isError: true };
    const missing = ((tool.parameters.required as string[] | undefined) ?? []).filter((k) => (req.params.arguments ?? {})[k] === undefined);
    if (missing.length > 0) return { content: [{ type: "text", text: `${tool.name} needs ${missing.join(", ")}` }], isError: true };
    const ends = tool.name !== "record_baseline";
    return { content: [{ type: "text", text: ends ? `${tool.name} received: end your turn now` : "baseline recorded" }] };
  });
  return server;
}

export async function serveCompletionTools(tools: readonly TerminalTool[]): Promise<number> {
  const server = createCompletionToolServer(tools);
  await serveStdio(server);
  await server.close();
  return 0;
}
