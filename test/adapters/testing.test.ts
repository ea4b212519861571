import { describe, expect, it } from "vitest";
import { inMemorySubstrates, inMemorySubstrateFactory, InMemoryMemory } from "../../adapters/memory/index.js";
import { withFaults } from "../../adapters/testing/faults.js";
import { recordCalls } from "../../adapters/testing/recorder.js";
import { SubstrateRegistry } from "../../src/substrates/registry.js";
import { SubstrateRequestError, SubstrateUnavailableError } from "../../src/substrates/contracts.js";
import type { SubstrateSet } from "../../src/substrates/contracts.js";
import { ctx, rejection, TRACE } from "./helpers.js";

describe("withFaults", () => {
  it("passes calls through and counts them per slot and operation", async () => {
    const faults = withFaults(inMemorySubstrates());
    await faults.substrates.memory.store_node({ node: { content: "x" } }, ctx());
    await faults.substrates.memory.store_node({ node: { content: "y" } }, ctx());
    await faults.substrates.auth.permission_check({ agent_id: "a", operation: "o" }, ctx());
    expect(faults.calls.memory.store_node).toBe(2);
    expect(faults.calls.auth.permission_check).toBe(1);
    expect(faults.calls.audit.append_event).toBe(0);
  });

  it("fails a slot on command in each mode, and only that slot", async () => {
    const faults = withFaults(inMemorySubstrates());
    const { memory, policy } = faults.substrates;
    faults.fail("memory", "unavailable");
    expect(await rejection(memory.retrieve_context({ query: "" }, ctx()))).toBeInstanceOf(SubstrateUnavailableError);
    await expect(policy.check_policy({ actor: "a", action: "b", resource: "c" }, ctx())).resolves.toEqual({ decision: "allow" });
    faults.fail("memory", "error");
    const refused = await rejection(memory.retrieve_context({ query: "" }, ctx()));
    expect(refused).toBeInstanceOf(SubstrateRequestError);
    expect(refused).toMatchObject({ slot: "memory", code: "INJECTED_FAULT" });
    faults.heal("memory");
    await expect(memory.retrieve_context({ query: "" }, ctx())).resolves.toMatchObject({ nodes: [] });
    expect(faults.calls.memory.retrieve_context).toBe(3);
  });

  it("fails only the next `count` calls, then heals by itself", async () => {
    const faults = withFaults(inMemorySubstrates());
    faults.fail("auth", "unavailable", 2);
    const check = () => faults.substrates.auth.permission_check({ agent_id: "a", operation: "o" }, ctx());
    expect(await rejection(check())).toBeInstanceOf(SubstrateUnavailableError);
    expect(await rejection(check())).toBeInstanceOf(SubstrateUnavailableError);
    await expect(check()).resolves.toBe("allow");
    expect(() => faults.fail("auth", "error", 0)).toThrow(RangeError);
  });

  it("hangs until the call's signal aborts, then rejects with its reason; the failed write never happened", async () => {
    const faults = withFaults(inMemorySubstrates());
    faults.fail("memory", "hang");
    const controller = new AbortController();
    const pending = faults.substrates.memory.store_node({ node: { content: "x" } }, ctx("ws", { signal: controller.signal }));
    let settled = false;
    pending.catch(() => {}).finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(settled).toBe(false);
    controller.abort(new Error("phase timeout"));
    expect((await rejection(pending)).message).toBe("phase timeout");
    faults.heal("memory");
    expect((await faults.substrates.memory.retrieve_context({ query: "" }, ctx("ws"))).nodes).toEqual([]);
  });
});

describe("recordCalls", () => {
  it("records slot, operation, args, context and outcome in call order", async () => {
    const recorder = recordCalls(inMemorySubstrates());
    const args = { node: { content: { n: 1 } } };
    await recorder.substrates.memory.store_node(args, ctx("ws", { signal: new AbortController().signal }));
    args.node.content.n = 2;
    await recorder.substrates.memory.store_edge({ src: "node_1", dst: "nope", type: "t" }, ctx("ws", { tx_id: undefined })).catch(() => {});
    expect(recorder.calls).toEqual([
      { slot: "memory", operation: "store_node", args: { node: { content: { n: 1 } } }, context: { trace_id: TRACE, workspace_id: "ws" }, result: { node_id: "node_1", audit_event_id: "mem_evt_1", existing: false } },
      { slot: "memory", operation: "store_edge", args: { src: "node_1", dst: "nope", type: "t" }, context: { trace_id: TRACE, workspace_id: "ws" }, error: expect.objectContaining({ code: "UNKNOWN_NODE" }) },
    ]);
  });

  it("keeps `this` bound to the original substrate and skips slots the set lacks", async () => {
    const { memory, policy, audit, auth } = inMemorySubstrates();
    const recorder = recordCalls<SubstrateSet>({ memory, policy, audit, auth });
    expect(recorder.substrates.time).toBeUndefined();
    await recorder.substrates.memory.store_node({ node: { content: "x" } }, ctx());
    expect(memory.inspect("ws_a").nodes).toHaveLength(1);
  });
});

describe("in-memory factory", () => {
  it("gives one instance per slot and URI through the registry, isolating URIs from each other", async () => {
    const registry = new SubstrateRegistry().fallbackTo(inMemorySubstrateFactory());
    const a = registry.bind({ memory: "graphonomous://one", policy: "delegatic://p", audit: "delegatic://a", auth: "os006://u" });
    const b = registry.bind({ memory: "graphonomous://one", policy: "delegatic://p", audit: "delegatic://a", auth: "os006://u", time: "ticktick://t" });
    const c = registry.bind({ memory: "graphonomous://two", policy: "delegatic://p", audit: "delegatic://a", auth: "os006://u" });
    expect(a.memory).toBe(b.memory);
    expect(a.memory).not.toBe(c.memory);
    expect(a.memory).toBeInstanceOf(InMemoryMemory);
    expect(b.time).toBeDefined();
    await a.memory.store_node({ node: { content: "x" } }, ctx());
    expect((await c.memory.retrieve_context({ query: "" }, ctx())).nodes).toEqual([]);
  });

  it("passes host options to the adapters it makes", async () => {
    const factory = inMemorySubstrateFactory({ policyRules: [{ decision: "deny" }], agentStates: { x: "suspended" } });
    expect(await factory("policy", "p://").check_policy({ actor: "a", action: "b", resource: "c" }, ctx())).toEqual({ decision: "deny" });
    expect(await factory("auth", "u://").agent_lifecycle({ agent_id: "x" }, ctx())).toEqual({ state: "suspended" });
  });
});
