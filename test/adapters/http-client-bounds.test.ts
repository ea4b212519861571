// The HTTP substrate client against servers that misbehave: answers of any size are refused past
// maxResponseBytes (at once when Content-Length declares it), and redirects are never followed.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { httpSubstrates } from "../../adapters/http/client.js";
import { createSubstrateServer } from "../../adapters/http/server.js";
import { inMemorySubstrates } from "../../adapters/memory/index.js";
import { SubstrateRequestError, SubstrateUnavailableError } from "../../src/substrates/contracts.js";
import { ctx, rejection } from "./helpers.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** A raw server; `hits` counts the requests it received. */
async function raw(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const hits: { method: string; url: string; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      hits.push({ method: req.method ?? "", url: req.url ?? "", body });
      handler(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

const ok = (result: unknown) => JSON.stringify({ result });

describe("response size", () => {
  it("refuses an answer whose Content-Length is over the limit, without reading it, naming the limit", async () => {
    const { url } = await raw((_, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(50 * 1024 * 1024) });
      res.write("{");
      // Never finishes: the client must not wait for 50 MiB.
    });
    const error = await rejection(httpSubstrates(url, { maxResponseBytes: 1024 }).auth.permission_check({ agent_id: "a", operation: "o" }, ctx()));
    expect(error).toBeInstanceOf(SubstrateUnavailableError);
    expect(error.message).toMatch(/: its answer declares 52428800 bytes, more than the 1024 allowed \(maxResponseBytes; not read further\)/);
  });

  it("stops reading a streamed answer (no Content-Length) once it passes the limit", async () => {
    let written = 0;
    const { url } = await raw((_, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (written < 200 * 1024 * 1024 && res.write(chunk)) written += chunk.length;
        if (written < 200 * 1024 * 1024 && !res.destroyed) res.once("drain", pump);
      };
      res.on("close", () => (written = Number.POSITIVE_INFINITY));
      pump();
    });
    const error = await rejection(httpSubstrates(url, { maxResponseBytes: 256 * 1024 }).memory.retrieve_context({ query: "" }, ctx()));
    expect(error).toBeInstanceOf(SubstrateUnavailableError);
    expect(error.message).toMatch(/: its answer is longer than the 262144 bytes allowed \(maxResponseBytes/);
  });

  it("the near miss: an answer of exactly the limit is read", async () => {
    const body = ok("allow");
    const { url } = await raw((_, res) => res.writeHead(200, { "content-type": "application/json" }).end(body));
    expect(await httpSubstrates(url, { maxResponseBytes: Buffer.byteLength(body) }).auth.permission_check({ agent_id: "a", operation: "o" }, ctx())).toBe("allow");
    const over = await rejection(httpSubstrates(url, { maxResponseBytes: Buffer.byteLength(body) - 1 }).auth.permission_check({ agent_id: "a", operation: "o" }, ctx()));
    expect(over).toBeInstanceOf(SubstrateUnavailableError);
  });
});

describe("redirects", () => {
  it("a 307 to another origin is not followed: nothing reaches it, and the error names the location", async () => {
    const elsewhere = await raw((_, res) => res.writeHead(200, { "content-type": "application/json" }).end(ok({ node_id: "n", audit_event_id: "e", existing: false })));
    const { url } = await raw((_, res) => res.writeHead(307, { location: `${elsewhere.url}/steal` }).end());
    const error = await rejection(httpSubstrates(url).memory.store_node({ node: { content: "secret" } }, ctx("ws_secret")));
    expect(error).toBeInstanceOf(SubstrateRequestError);
    expect(error).toMatchObject({ code: "REDIRECTED" });
    expect(error.message).toContain(`answered 307, redirecting to "${elsewhere.url}/steal"`);
    expect(elsewhere.hits).toEqual([]);
  });

  it("a 302 on a write is an error, never a GET whose 200 passes for success", async () => {
    const target = await raw((_, res) => res.writeHead(200, { "content-type": "application/json" }).end(ok({ node_id: "fake", audit_event_id: "e", existing: false })));
    const { url, hits } = await raw((_, res) => res.writeHead(302, { location: target.url }).end());
    const error = await rejection(httpSubstrates(url).memory.store_node({ node: { content: "x" } }, ctx()));
    expect(error).toMatchObject({ code: "REDIRECTED" });
    expect(hits.map((h) => h.method)).toEqual(["POST"]);
    expect(target.hits).toEqual([]);
  });

  it("the near miss: the same call to the service itself succeeds", async () => {
    const server = createSubstrateServer(inMemorySubstrates());
    const { url } = await server.listen();
    closers.push(() => server.close());
    expect(await httpSubstrates(url).memory.store_node({ node: { content: "x" } }, ctx())).toMatchObject({ node_id: "node_1", existing: false });
  });
});
