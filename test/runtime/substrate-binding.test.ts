import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { inMemorySubstrates } from "../../adapters/memory/index.js";
import { createSubstrateServer } from "../../adapters/http/server.js";
import { httpSubstrates } from "../../adapters/http/client.js";
import { createRuntime, Runtime, VirtualClock, withEmbeddedDefaults } from "../../src/index.js";
import { SubstrateRegistry } from "../../src/substrates/registry.js";
import { manifestWith, validHandlers, TRACE } from "./harness.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function serve() {
  const backing = inMemorySubstrates();
  const calls: { slot: string; operation: string; trace: string; traceparent?: string }[] = [];
  const server = createSubstrateServer(backing, { onCall: (c) => calls.push({ slot: c.slot, operation: c.operation, trace: (c.context as { trace_id: string }).trace_id, traceparent: c.traceparent }) });
  const { url } = await server.listen();
  closers.push(() => server.close());
  return { url, backing, calls };
}

describe("binding substrates by URI", () => {
  it("binds a scheme to any adapter: graphonomous:// served by the in-memory adapters, per URI", async () => {
    const made: string[] = [];
    const registry = new SubstrateRegistry().scheme("graphonomous", (slot, uri) => {
      made.push(`${slot} ${uri}`);
      return inMemorySubstrates()[slot] as never;
    });
    const runtime = await createRuntime({ clock: new VirtualClock(0), registry });
    for (const [k, h] of Object.entries(validHandlers())) runtime.handleKind(k, h);
    const loop = await runtime.load(manifestWith((m) => (m.substrates.memory = "graphonomous://workspace/{ws_id}")));
    expect((await loop.runIteration()).status).toBe("completed");
    expect(made).toEqual(["memory graphonomous://workspace/{ws_id}"]);
  });

  it("runs a loop whose substrates are services over HTTP, the trace id reaching the server", async () => {
    const { url, backing, calls } = await serve();
    const runtime = await createRuntime();
    for (const [k, h] of Object.entries(validHandlers())) runtime.handleKind(k, h);
    const loop = await runtime.load(manifestWith(() => {}), { substrates: httpSubstrates(url) });
    loop.handle("apply", async ({ substrates }) => {
      const n = await substrates.memory.store_node({ node: { content: "over the wire" } });
      return { causal_parent_ids: [n.node_id] };
    });
    const r = await loop.runIteration({ workspace: "w", traceId: TRACE });
    expect(r.status).toBe("completed");
    expect(backing.memory.inspect("w").nodes.map((n) => [n.node.content, n.trace_id])).toEqual([["over the wire", TRACE]]);
    expect(calls.length).toBeGreaterThan(5);
    expect(calls.every((c) => c.trace === TRACE && c.traceparent?.split("-")[1] === TRACE)).toBe(true);
    expect(calls.map((c) => `${c.slot}.${c.operation}`)).toEqual(expect.arrayContaining(["policy.check_policy", "auth.permission_check", "memory.begin_transaction", "memory.store_node", "memory.commit_transaction", "audit.append_event"]));
    const audited = await backing.audit.query_by_trace({ trace_id: TRACE }, { trace_id: TRACE, workspace_id: "w" });
    expect(audited.map((e) => e.event_type)).toContain("substrate.mutated");
  });

  it("binds http(s) URIs of a manifest to the HTTP substrate client by default, other schemes to memory", async () => {
    const { url, backing, calls } = await serve();
    const runtime = await createRuntime();
    for (const [k, h] of Object.entries(validHandlers())) runtime.handleKind(k, h);
    const loop = await runtime.load(manifestWith((m) => ((m.substrates.memory = url), (m.substrates.audit = url))));
    loop.handle("apply", async ({ substrates }) => {
      const n = await substrates.memory.store_node({ node: { content: "to the service" } });
      return { causal_parent_ids: [n.node_id] };
    });
    expect((await loop.runIteration({ workspace: "w", traceId: TRACE })).status).toBe("completed");
    expect(backing.memory.inspect("w").nodes.map((n) => n.node.content)).toEqual(["to the service"]);
    const slots = new Set(calls.map((c) => c.slot));
    expect([...slots].sort()).toEqual(["audit", "memory"]); // policy and auth kept their memory:// URIs
  });

  it("keeps what the host registered: its own http scheme and its own fallback win over the defaults", async () => {
    const made: string[] = [];
    const mine = (slot: string, uri: string) => (made.push(`${slot} ${uri}`), inMemorySubstrates()[slot as "memory"] as never);
    const registry = new SubstrateRegistry().scheme("http", mine).fallbackTo(mine);
    const runtime = await createRuntime({ clock: new VirtualClock(0), registry });
    for (const [k, h] of Object.entries(validHandlers())) runtime.handleKind(k, h);
    const loop = await runtime.load(manifestWith((m) => (m.substrates.memory = "http://unreachable.invalid/")));
    expect((await loop.runIteration()).status).toBe("completed");
    expect(made.sort()).toEqual(["audit memory://a", "auth memory://u", "memory http://unreachable.invalid/", "policy memory://p"]);
  });

  it("the runtime core binds exactly the registry it is given; createRuntime (the composition root) adds the embedded defaults", async () => {
    const core = new Runtime({ clock: new VirtualClock(0) });
    const refused = await core.load(manifestWith(() => {})).catch((e: Error) => e);
    expect(String(refused)).toMatch(/no substrate adapter for memory "memory:\/\/m"/);
    const bound = new Runtime({ clock: new VirtualClock(0), registry: withEmbeddedDefaults() });
    for (const [k, h] of Object.entries(validHandlers())) bound.handleKind(k, h);
    expect((await (await bound.load(manifestWith(() => {}))).runIteration()).status).toBe("completed");
  });

  it("degrades instead of spinning when the HTTP substrate goes away", async () => {
    const { url } = await serve();
    const runtime = await createRuntime({ circuit: { failureThreshold: 2, cooldownMs: 60_000 } });
    for (const [k, h] of Object.entries(validHandlers())) runtime.handleKind(k, h);
    const loop = await runtime.load(manifestWith(() => {}), { substrates: httpSubstrates(url) });
    await closers.pop()!(); // the substrate service stops
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await loop.runIteration());
    expect(results.map((r) => r.status)).toEqual(["degraded", "degraded", "degraded", "degraded"]);
    expect(results.at(-1)!.error?.code).toBe("CIRCUIT_OPEN");
    expect(loop.status()).toBe("degraded");
  });

  it("degrades when the HTTP substrate hangs longer than the phase's timeout_ms (shorter than the client's 5 s): cut-off calls open the circuit", async () => {
    const hung: ServerResponse[] = [];
    const server = createServer((_req, res) => void hung.push(res)); // reads the call, never answers
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    closers.push(() => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const runtime = await createRuntime({ circuit: { failureThreshold: 3, cooldownMs: 60_000 } });
    for (const [k, h] of Object.entries(validHandlers())) runtime.handleKind(k, h);
    const loop = await runtime.load(manifestWith((m) => ((m.substrates.memory = url), (m.phases[0].timeout_ms = 50))));
    loop.handle("fetch", async ({ substrates }) => (await substrates.memory.retrieve_context({ query: "q" }), {}));
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await loop.runIteration());
    expect(results.map((r) => r.error?.code)).toEqual(["PHASE_TIMEOUT", "PHASE_TIMEOUT", "PHASE_TIMEOUT", "CIRCUIT_OPEN", "CIRCUIT_OPEN"]);
    expect(loop.status()).toBe("degraded");
    expect(hung).toHaveLength(3); // the open circuit kept the last two from the wire
  });
});
