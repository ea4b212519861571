/**
 * A loopback stand-in for a provider's chat and embeddings APIs (OpenAI-compatible, as Ollama
 * serves them on /v1 too): chat answers from a queue (status, content, delay), embeddings are
 * character-trigram hashing vectors (a real, if small, embedding: similar spellings get similar
 * vectors). Every request is recorded.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { trigramVector } from "../../../bench/agent-retrieval-data.js";

export { trigramVector };

export interface Reply {
  status?: number;
  content?: string;
  error?: string;
  delayMs?: number;
  headers?: Record<string, string>;
}

export interface ModelApi {
  url: string;
  chat: { path: string; body: Record<string, unknown>; headers: Record<string, string | string[] | undefined> }[];
  embedded: string[];
  embeddingRequests: number;
  replies: Reply[];
  close(): Promise<void>;
}

export async function startModelApi(replies: Reply[] = []): Promise<ModelApi> {
  const api = { chat: [], embedded: [], embeddingRequests: 0, replies } as unknown as ModelApi;
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", () => {
      const body = JSON.parse(raw || "{}") as Record<string, unknown>;
      if (req.url?.endsWith("/embeddings")) {
        api.embeddingRequests++;
        const input = (Array.isArray(body.input) ? body.input : [body.input]) as string[];
        api.embedded.push(...input);
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify({ object: "list", model: body.model, data: input.map((t, index) => ({ object: "embedding", index, embedding: trigramVector(t) })) }));
      }
      api.chat.push({ path: req.url ?? "", body, headers: req.headers });
      const r = api.replies.shift() ?? { status: 500, error: "the mock has no reply left" };
      const send = () => {
        res.writeHead(r.status ?? 200, { "content-type": "application/json", ...r.headers });
        if ((r.status ?? 200) !== 200) return res.end(JSON.stringify({ error: { message: r.error ?? "error" } }));
        res.end(JSON.stringify({ id: "c", model: body.model, choices: [{ index: 0, message: { role: "assistant", content: r.content ?? "" }, finish_reason: "stop" }], usage: { prompt_tokens: 50, completion_tokens: 7 } }));
      };
      if (r.delayMs) setTimeout(send, r.delayMs);
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api.close = () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r())));
  return api;
}
