/**
 * A loopback stand-in for online knowledge endpoints: the custom_api contract (POST, JSON
 * `{ query, k, index? }` → `{ entries }`) and a SearXNG-like `GET /search?q=…&format=json`
 * (→ `{ results }`). Each request takes the next answer from a queue (status, raw body, delay);
 * every request is recorded.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface SearchAnswer {
  status?: number;
  /** The body as sent (a string for bad JSON), else JSON of `json`. */
  raw?: string;
  json?: unknown;
  delayMs?: number;
}

export interface SearchApi {
  url: string;
  requests: { method: string; url: string; body: string; headers: Record<string, string | string[] | undefined> }[];
  answers: SearchAnswer[];
  close(): Promise<void>;
}

export async function startSearchApi(answers: SearchAnswer[] = []): Promise<SearchApi> {
  const api = { requests: [], answers } as unknown as SearchApi;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      api.requests.push({ method: req.method ?? "", url: req.url ?? "", body, headers: req.headers });
      const a = api.answers.shift() ?? { status: 500, raw: "no answer left" };
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(a.status ?? 200, { "content-type": "application/json" });
        res.end(a.raw ?? JSON.stringify(a.json ?? {}));
      };
      if (a.delayMs) setTimeout(send, a.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api.close = () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r())));
  return api;
}
