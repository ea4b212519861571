/**
 * An MCP server on standard input and output, as a CLI agent or an MCP client launches it: served
 * until the client closes the transport or its end of stdin (or `stop` fires); the caller closes it.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

export async function serveStdio(server: { connect(transport: Transport): Promise<void> }, onStop?: (stop: () => void) => void): Promise<void> {
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
    onStop?.(resolve);
  });
  await server.connect(transport);
  await closed;
}
