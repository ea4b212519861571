import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { httpSubstrate, httpSubstrateFactory, httpSubstrates } from "../../adapters/http/client.js";
import { createSubstrateServer } from "../../adapters/http/server.js";
import type { SubstrateCall, SubstrateServerOptions } from "../../adapters/http/server.js";
import { InMemoryMemory, inMemorySubstrates } from "../../adapters/memory/index.js";
import { withFaults } from "../../adapters/testing/faults.js";
import { SubstrateRegistry } from "../../src/substrates/registry.js";
import { SubstrateRequestError, SubstrateUnavailableError } from "../../src/substrates/contracts.js";
import type { SubstrateSet } from "../../src/substrates/contracts.js";
import { ctx, rejection, TRACE } from "./helpers.js";

const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(substrates: Partial<SubstrateSet>, options: SubstrateServerOptions = {}) {
  const server = createSubstrateServer(substrates, options);
  servers.push(server);
  const { url } = await server.listen();
  return { server, url };
}

/** A raw POST, to see exactly what goes over the wire. */
async function post(url: string, path: string, body: string | Uint8Array, headers: Record<string, string> = { "content-type": "application/json" }) {
  const response = await fetch(url + path, { method: "POST", headers, body });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as any };
}

const request = (args: unknown, context: unknown = { trace_id: TRACE, workspace_id: "ws" }) => JSON.stringify({ args, context });

describe("error mapping", () => {
  it("a refusal is a 4xx with its code, and the client throws SubstrateRequestError with the same code", async () => {
    const { url } = await serve(inMemorySubstrates());
    await post(url, "/v1/memory/store_node", request({ node: { id: "n", content: 1 } }));
    const conflict = await post(url, "/v1/memory/store_node", request({ node: { id: "n", content: 2 } }));
    expect(conflict.status).toBe(409);
    expect(conflict.json).toEqual({ error: { code: "NODE_EXISTS", message: expect.stringContaining("already exists") } });
    const badContext = await post(url, "/v1/memory/store_node", request({ node: {} }, { trace_id: "0".repeat(32), workspace_id: "ws" }));
    expect([badContext.status, badContext.json.error.code]).toEqual([400, "BAD_CONTEXT"]);
    for (const [path, args, status, code] of [
      ["/v1/memory/commit_transaction", { tx_id: "tx_9" }, 409, "UNKNOWN_TX"],
      ["/v1/memory/store_edge", { src: "a" }, 400, "BAD_REQUEST"],
    ] as const) {
      const answer = await post(url, path, request(args));
      expect([answer.status, answer.json.error.code]).toEqual([status, code]);
    }

    const client = httpSubstrates(url);
    const error = await rejection(client.memory.store_node({ node: { id: "n", content: 3 } }, ctx("ws")));
    expect(error).toBeInstanceOf(SubstrateRequestError);
    expect(error).toMatchObject({ slot: "memory", code: "NODE_EXISTS" });
  });

  it("SubstrateUnavailableError on the server is a 503, and unavailable again on the client", async () => {
    const faults = withFaults(inMemorySubstrates());
    const { url } = await serve(faults.substrates);
    faults.fail("policy", "unavailable");
    const raw = await post(url, "/v1/policy/check_policy", request({ actor: "a", action: "b", resource: "c" }));
    expect([raw.status, raw.json.error.code]).toEqual([503, "SUBSTRATE_UNAVAILABLE"]);
    const error = await rejection(httpSubstrates(url).policy.check_policy({ actor: "a", action: "b", resource: "c" }, ctx()));
    expect(error).toBeInstanceOf(SubstrateUnavailableError);
    expect(error.slot).toBe("policy");
  });

  it("an unexpected error is a 500 with a generic message: no stack, no detail on the wire", async () => {
    const broken = new InMemoryMemory();
    broken.retrieve_context = async () => {
      throw new Error("secret connection string postgres://admin:hunter2@db");
    };
    const { url } = await serve({ memory: broken });
    const raw = await post(url, "/v1/memory/retrieve_context", request({ query: "" }));
    expect(raw.status).toBe(500);
    expect(raw.json).toEqual({ error: { code: "INTERNAL", message: "the substrate failed while handling the call" } });
    expect(raw.text).not.toMatch(/hunter2|at |\.ts/);
    expect(await rejection(httpSubstrates(url).memory.retrieve_context({ query: "" }, ctx()))).toBeInstanceOf(SubstrateUnavailableError);
  });

  it("a result JSON cannot carry is a 500, not a crash", async () => {
    const odd = new InMemoryMemory();
    odd.topology_analyze = async () => ({ big: 10n }) as never;
    const { url } = await serve({ memory: odd });
    const raw = await post(url, "/v1/memory/topology_analyze", request({}));
    expect([raw.status, raw.json.error.code]).toEqual([500, "INTERNAL"]);
  });

  it("a refused connection is unavailable", async () => {
    const { server, url } = await serve(inMemorySubstrates());
    await server.close();
    const error = await rejection(httpSubstrates(url).auth.permission_check({ agent_id: "a", operation: "b" }, ctx()));
    expect(error).toBeInstanceOf(SubstrateUnavailableError);
    expect(error.message).toMatch(/cannot reach .*ECONNREFUSED/);
  });

  it("a timeout is unavailable, and the server stops the abandoned call", async () => {
    const faults = withFaults(inMemorySubstrates());
    const seen: SubstrateCall[] = [];
    const { url } = await serve(faults.substrates, { onCall: (call) => seen.push(call) });
    faults.fail("memory", "hang");
    const started = Date.now();
    const error = await rejection(httpSubstrates(url, { timeoutMs: 150 }).memory.retrieve_context({ query: "" }, ctx()));
    expect(error).toBeInstanceOf(SubstrateUnavailableError);
    expect(error.message).toMatch(/within 150 ms/);
    expect(Date.now() - started).toBeLessThan(2000);
    await expect.poll(() => seen.length).toBe(1);
    expect(seen[0]!.error).toMatchObject({ status: 503, code: "SUBSTRATE_UNAVAILABLE" });
  });

  it("the caller's own cancellation rejects with the caller's reason, not as unavailability", async () => {
    const faults = withFaults(inMemorySubstrates());
    const { url } = await serve(faults.substrates);
    faults.fail("memory", "hang");
    const controller = new AbortController();
    const reason = new Error("phase timeout");
    setTimeout(() => controller.abort(reason), 50);
    expect(await rejection(httpSubstrates(url).memory.retrieve_context({ query: "" }, ctx("ws", { signal: controller.signal })))).toBe(reason);
  });

  it("answers outside the protocol: a 4xx without JSON is a request error, a 200 without result is unavailable", async () => {
    const fake = (status: number, body: string) => (async () => new Response(body, { status })) as typeof fetch;
    const notFound = await rejection(httpSubstrates("http://proxy.invalid", { fetch: fake(404, "<html>nope</html>") }).memory.consolidate({}, ctx()));
    expect(notFound).toMatchObject({ name: "SubstrateRequestError", code: "HTTP_404" });
    const garbage = await rejection(httpSubstrates("http://proxy.invalid", { fetch: fake(200, "hello") }).memory.consolidate({}, ctx()));
    expect(garbage).toBeInstanceOf(SubstrateUnavailableError);
    const ok = await httpSubstrates("http://proxy.invalid", { fetch: fake(200, '{"result": {"tx_id": "t"}}') }).memory.begin_transaction({}, ctx());
    expect(ok).toEqual({ tx_id: "t" });
  });
});

describe("trace propagation", () => {
  it("every call carries a traceparent with the context's trace id and a fresh span id", async () => {
    const seen: SubstrateCall[] = [];
    const { url } = await serve(inMemorySubstrates(), { onCall: (call) => seen.push(call) });
    const client = httpSubstrates(url);
    await client.memory.store_node({ node: { content: "x" } }, ctx("ws"));
    await client.auth.agent_lifecycle({ agent_id: "a" }, ctx("ws"));
    expect(seen.map((c) => c.traceparent)).toEqual([expect.stringMatching(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`)), expect.stringMatching(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`))]);
    expect(seen[0]!.traceparent).not.toBe(seen[1]!.traceparent);
    expect(seen[0]).toMatchObject({ slot: "memory", operation: "store_node", args: { node: { content: "x" } }, context: { trace_id: TRACE, workspace_id: "ws" }, result: { node_id: "node_1" } });
    expect(seen[0]!.endedAt).toBeGreaterThanOrEqual(seen[0]!.startedAt);
  });

  it("refuses a traceparent that contradicts the context or is malformed; accepts none at all", async () => {
    const { url } = await serve(inMemorySubstrates());
    const headers = (traceparent?: string) => ({ "content-type": "application/json", ...(traceparent ? { traceparent } : {}) });
    const body = request({ agent_id: "a" });
    const other = "a".repeat(32);
    expect((await post(url, "/v1/auth/agent_lifecycle", body, headers(`00-${other}-${"1".repeat(16)}-01`))).json.error).toMatchObject({ code: "BAD_CONTEXT", message: expect.stringContaining(other) });
    expect((await post(url, "/v1/auth/agent_lifecycle", body, headers(`00-${TRACE}-${"0".repeat(16)}-01`))).status).toBe(400);
    expect((await post(url, "/v1/auth/agent_lifecycle", body, headers(`00-${TRACE}-${"1".repeat(16)}-01-extra`))).status).toBe(400);
    expect((await post(url, "/v1/auth/agent_lifecycle", body, headers(`00-${TRACE}-${"1".repeat(16)}-01`))).status).toBe(200);
    expect((await post(url, "/v1/auth/agent_lifecycle", body, headers(`01-${TRACE}-${"1".repeat(16)}-01-future`))).status).toBe(200);
    expect((await post(url, "/v1/auth/agent_lifecycle", body, headers())).status).toBe(200);
  });

  it("carries tx_id, and never lets a JSON field stand in for the server's abort signal", async () => {
    const seen: unknown[] = [];
    const spy = new InMemoryMemory();
    const original = spy.retrieve_context.bind(spy);
    spy.retrieve_context = async (args, context) => {
      seen.push({ ...context, signal: context.signal instanceof AbortSignal });
      return original(args, context);
    };
    const { url } = await serve({ memory: spy });
    await post(url, "/v1/memory/retrieve_context", request({ query: "" }, { trace_id: TRACE, workspace_id: "ws", signal: "x", extra: 1 }));
    expect(seen).toEqual([{ trace_id: TRACE, workspace_id: "ws", signal: true }]);
    const client = httpSubstrates(url);
    const { tx_id } = await client.memory.begin_transaction({}, ctx("ws"));
    await client.memory.retrieve_context({ query: "" }, ctx("ws", { tx_id }));
    expect(seen[1]).toEqual({ trace_id: TRACE, workspace_id: "ws", tx_id, signal: true });
  });
});

describe("hostile and malformed requests", () => {
  it("answers garbage bodies with a 4xx and keeps serving", async () => {
    const { url } = await serve(inMemorySubstrates());
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string(), fc.uint8Array({ maxLength: 200 }), fc.json()), async (body) => {
        const answer = await post(url, "/v1/memory/store_node", body);
        expect(answer.status).toBeGreaterThanOrEqual(400);
        expect(answer.status).toBeLessThan(500);
        expect(typeof answer.json.error.code).toBe("string");
      }),
      { numRuns: 150 },
    );
    const health = await fetch(url + "/v1/health");
    expect(await health.json()).toEqual({ ok: true, slots: ["memory", "policy", "audit", "auth", "time"] });
  });

  it.each([
    ["not JSON", "{args:", "BAD_REQUEST"],
    ["an array", "[]", "BAD_REQUEST"],
    ["null", "null", "BAD_REQUEST"],
    ["args not an object", JSON.stringify({ args: 1, context: {} }), "BAD_REQUEST"],
    ["no args", JSON.stringify({ context: { trace_id: TRACE, workspace_id: "ws" } }), "BAD_REQUEST"],
    ["no context", JSON.stringify({ args: {} }), "BAD_CONTEXT"],
    ["context with a bad trace id", JSON.stringify({ args: {}, context: { trace_id: "xyz", workspace_id: "ws" } }), "BAD_CONTEXT"],
  ])("refuses a body that is %s with 400 %s", async (_, body, code) => {
    const { url } = await serve(inMemorySubstrates());
    const answer = await post(url, "/v1/memory/begin_transaction", body);
    expect([answer.status, answer.json.error.code]).toEqual([400, code]);
  });

  it("refuses a body over maxBodyBytes with 413, and accepts one just under", async () => {
    const { url } = await serve(inMemorySubstrates(), { maxBodyBytes: 2048 });
    const fits = request({ node: { content: "x".repeat(1800) } });
    expect(Buffer.byteLength(fits)).toBeLessThanOrEqual(2048);
    expect((await post(url, "/v1/memory/store_node", fits)).status).toBe(200);
    const big = await post(url, "/v1/memory/store_node", request({ node: { content: "x".repeat(4000) } }));
    expect([big.status, big.json.error.code]).toEqual([413, "PAYLOAD_TOO_LARGE"]);
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 64; i++) controller.enqueue(new TextEncoder().encode("y".repeat(1024)));
        controller.close();
      },
    });
    const chunked = await fetch(url + "/v1/memory/store_node", { method: "POST", headers: { "content-type": "application/json" }, body: stream, duplex: "half" } as RequestInit);
    expect(chunked.status).toBe(413);
    expect((await fetch(url + "/v1/health")).status).toBe(200);
  });

  it("the default limit is 1 MiB", async () => {
    const { url } = await serve(inMemorySubstrates());
    const answer = await post(url, "/v1/memory/store_node", request({ node: { content: "x".repeat((1 << 20) + 10) } }));
    expect(answer.status).toBe(413);
  });

  it.each([
    ["GET", "/", 404, "NOT_FOUND"],
    ["POST", "/v2/memory/store_node", 404, "NOT_FOUND"],
    ["POST", "/v1/memory", 404, "NOT_FOUND"],
    ["POST", "/v1/cache/get", 404, "UNKNOWN_SLOT"],
    ["POST", "/v1/__proto__/constructor", 404, "UNKNOWN_SLOT"],
    ["POST", "/v1/memory/delete_node", 404, "UNKNOWN_OPERATION"],
    ["POST", "/v1/audit/constructor", 404, "UNKNOWN_OPERATION"],
    ["GET", "/v1/memory/store_node", 405, "METHOD_NOT_ALLOWED"],
    ["DELETE", "/v1/health", 405, "METHOD_NOT_ALLOWED"],
  ])("%s %s → %i %s", async (method, path, status, code) => {
    const { url } = await serve(inMemorySubstrates());
    const response = await fetch(url + path, { method, headers: { "content-type": "application/json" }, body: method === "GET" ? undefined : request({}) });
    expect(response.status).toBe(status);
    expect(((await response.json()) as any).error.code).toBe(code);
  });

  it("refuses a body that is not declared as JSON with 415", async () => {
    const { url } = await serve(inMemorySubstrates());
    const answer = await post(url, "/v1/memory/begin_transaction", request({}), { "content-type": "text/plain" });
    expect([answer.status, answer.json.error.code]).toEqual([415, "UNSUPPORTED_MEDIA_TYPE"]);
    expect((await post(url, "/v1/memory/begin_transaction", request({}), { "content-type": "Application/JSON; charset=utf-8" })).status).toBe(200);
  });

  it("a slot this server does not serve is a 404 the client sees as a request error", async () => {
    const { url } = await serve({ audit: inMemorySubstrates().audit });
    expect(await (await fetch(url + "/v1/health")).json()).toEqual({ ok: true, slots: ["audit"] });
    const error = await rejection(httpSubstrates(url).memory.consolidate({}, ctx()));
    expect(error).toMatchObject({ name: "SubstrateRequestError", slot: "memory", code: "SLOT_NOT_SERVED" });
  });

  it("an onCall observer that throws does not break the call", async () => {
    const { url } = await serve(inMemorySubstrates(), {
      onCall: () => {
        throw new Error("observer bug");
      },
    });
    await expect(httpSubstrates(url).auth.agent_lifecycle({ agent_id: "a" }, ctx())).resolves.toEqual({ state: "active" });
  });
});

describe("client wiring", () => {
  it("keeps connections alive instead of opening one per call", async () => {
    const { server, url } = await serve(inMemorySubstrates());
    let connections = 0;
    server.server.on("connection", () => connections++);
    const client = httpSubstrates(url);
    for (let i = 0; i < 50; i++) await client.auth.permission_check({ agent_id: "a", operation: "b" }, ctx());
    expect(connections).toBeLessThanOrEqual(2);
  });

  it("plugs into the registry for http URIs, and expands {ws_id} per call", async () => {
    const { url } = await serve(inMemorySubstrates());
    const registry = new SubstrateRegistry().scheme("http", httpSubstrateFactory({ timeoutMs: 1000 }));
    const set = registry.bind({ memory: url, policy: url, audit: url, auth: url });
    expect(await set.memory.store_node({ node: { content: "via registry" } }, ctx())).toMatchObject({ node_id: "node_1" });

    const urls: string[] = [];
    const recording = (async (input: string | URL | Request) => {
      urls.push(String(input));
      return new Response('{"result": {"state": "active"}}', { status: 200 });
    }) as typeof fetch;
    const perWorkspace = httpSubstrate("auth", "https://substrates.example/tenants/{ws_id}/", { fetch: recording });
    await perWorkspace.agent_lifecycle({ agent_id: "a" }, ctx("team a/b"));
    expect(urls).toEqual(["https://substrates.example/tenants/team%20a%2Fb/v1/auth/agent_lifecycle"]);
  });

  it("refuses a base URL that is not http(s)", () => {
    expect(() => httpSubstrates("graphonomous://memory")).toThrow(/not http or https/);
    expect(() => httpSubstrates("not a url")).toThrow(/not a valid URL/);
  });

  it("listen resolves the URL of an ephemeral port, and close ends open keep-alive connections", async () => {
    const server = createSubstrateServer(inMemorySubstrates());
    const { url } = await server.listen();
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await httpSubstrates(url).auth.agent_lifecycle({ agent_id: "a" }, ctx());
    const closing = server.close();
    await expect(closing).resolves.toBeUndefined();
    expect(server.server.listening).toBe(false);
    const again = createSubstrateServer(inMemorySubstrates());
    const taken = Number(new URL(url).port);
    const blocker = createSubstrateServer({});
    servers.push(blocker, again);
    await blocker.listen(taken);
    await expect(again.listen(taken)).rejects.toThrow(/EADDRINUSE/);
  });
});
