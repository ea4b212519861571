import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ChatReply {
  status?: number;
  headers?: Record<string, string>;
  content?: string | null;
  toolCalls?: { name: string; arguments: unknown }[];
  body?: unknown;
}

/** A loopback /v1/chat/completions that answers from a queue and records each request body. */
export async function startChatMock(replies: ChatReply[]): Promise<{ url: string; bodies: Record<string, unknown>[]; close: () => Promise<void> }> {
  const bodies: Record<string, unknown>[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      bodies.push(JSON.parse(raw));
      const r = replies.shift() ?? { content: "(no more replies)" };
      n++;
      res.writeHead(r.status ?? 200, { "content-type": "application/json", ...r.headers });
      if (r.body !== undefined) return res.end(JSON.stringify(r.body));
      const toolCalls = r.toolCalls?.map((c, i) => ({ id: `call_${n}_${i}`, type: "function", function: { name: c.name, arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments) } }));
      res.end(JSON.stringify({ id: `c${n}`, model: "mock-llm", choices: [{ index: 0, message: { role: "assistant", content: r.content ?? null, ...(toolCalls ? { tool_calls: toolCalls } : {}) }, finish_reason: toolCalls ? "tool_calls" : "stop" }], usage: { prompt_tokens: 100, completion_tokens: 10 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bodies, close: () => new Promise((r) => server.close(() => r())) };
}
