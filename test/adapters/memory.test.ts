import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InMemoryMemory } from "../../adapters/memory/index.js";
import { SubstrateRequestError } from "../../src/substrates/contracts.js";
import type { OutcomeSignal } from "../../src/tokens/types.js";
import { ctx, rejection, TRACE, traceId } from "./helpers.js";

function outcome(status: OutcomeSignal["status"], parents: string[], action_id = "act_1"): OutcomeSignal {
  return { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id, status, causal_parent_ids: parents };
}

describe("call context", () => {
  const memory = new InMemoryMemory();
  const bad: Array<[string, unknown]> = [
    ["uppercase trace id", { trace_id: TRACE.toUpperCase(), workspace_id: "ws" }],
    ["31-digit trace id", { trace_id: TRACE.slice(1), workspace_id: "ws" }],
    ["all-zero trace id", { trace_id: "0".repeat(32), workspace_id: "ws" }],
    ["missing trace id", { workspace_id: "ws" }],
    ["empty workspace", { trace_id: TRACE, workspace_id: "" }],
    ["numeric workspace", { trace_id: TRACE, workspace_id: 7 }],
    ["empty tx id", { trace_id: TRACE, workspace_id: "ws", tx_id: "" }],
    ["no context at all", undefined],
  ];
  it.each(bad)("refuses a %s with BAD_CONTEXT", async (_, context) => {
    const error = await rejection(memory.store_node({ node: { content: "x" } }, context as never));
    expect(error).toBeInstanceOf(SubstrateRequestError);
    expect(error).toMatchObject({ slot: "memory", code: "BAD_CONTEXT" });
  });

  it("accepts the near miss: a valid trace id with a non-zero digit and any workspace name", async () => {
    const result = await memory.store_node({ node: { content: "x" } }, { trace_id: "0".repeat(31) + "1", workspace_id: "w" });
    expect(result.existing).toBe(false);
  });

  it("refuses a call whose signal already fired, so a timed-out phase cannot write", async () => {
    const controller = new AbortController();
    controller.abort(new Error("phase timed out"));
    const error = await rejection(memory.store_node({ node: { content: "late" } }, ctx("ws", { signal: controller.signal })));
    expect(error.message).toBe("phase timed out");
    expect(memory.inspect("ws").nodes).toEqual([]);
  });
});

describe("store_node", () => {
  it("assigns node_<n> ids and returns the memory's audit event id", async () => {
    const memory = new InMemoryMemory();
    const a = await memory.store_node({ node: { type: "belief", content: "sky is blue" } }, ctx());
    const b = await memory.store_node({ node: { type: "belief", content: "grass is green" } }, ctx());
    expect(a).toEqual({ node_id: "node_1", audit_event_id: expect.stringMatching(/^mem_evt_\d+$/), existing: false });
    expect(b.node_id).toBe("node_2");
    expect(a.audit_event_id).not.toBe(b.audit_event_id);
  });

  it("deduplicates on signature: the second store returns the first node, unchanged", async () => {
    const memory = new InMemoryMemory();
    const first = await memory.store_node({ node: { content: "v1", signature: "sig-1" } }, ctx());
    const again = await memory.store_node({ node: { content: "v2", signature: "sig-1" } }, ctx());
    expect(again).toEqual({ ...first, existing: true });
    expect(memory.inspect("ws_a").nodes.map((n) => n.node.content)).toEqual(["v1"]);
  });

  it("treats a different signature as a different node (near miss of dedup)", async () => {
    const memory = new InMemoryMemory();
    await memory.store_node({ node: { content: "v1", signature: "sig-1" } }, ctx());
    const other = await memory.store_node({ node: { content: "v1", signature: "sig-2" } }, ctx());
    expect(other.existing).toBe(false);
  });

  it("honours a new caller-chosen id and skips it when allocating", async () => {
    const memory = new InMemoryMemory();
    await memory.store_node({ node: { id: "node_1", content: "mine" } }, ctx());
    const next = await memory.store_node({ node: { content: "allocated" } }, ctx());
    expect(next.node_id).toBe("node_2");
  });

  it("refuses to rewrite an existing id with different content (NODE_EXISTS), but replays the same content", async () => {
    const memory = new InMemoryMemory();
    const first = await memory.store_node({ node: { id: "n", type: "belief", content: { a: 1, b: 2 }, confidence: 0.7 } }, ctx());
    const error = await rejection(memory.store_node({ node: { id: "n", type: "belief", content: { a: 1, b: 3 } } }, ctx()));
    expect(error).toMatchObject({ code: "NODE_EXISTS" });
    // Key order and confidence do not make a rewrite: confidence is learning's business.
    const replay = await memory.store_node({ node: { id: "n", content: { b: 2, a: 1 }, type: "belief", confidence: 0.1 } }, ctx());
    expect(replay).toEqual({ ...first, existing: true });
  });

  it("refuses malformed nodes and accepts their near misses", async () => {
    const memory = new InMemoryMemory();
    for (const node of [null, [], "text", { confidence: 1.5 }, { confidence: -0.1 }, { id: "" }, { signature: 5 }, { causal_parent_ids: [1] }, { content: () => 1 }, { content: Number.NaN }, { content: new Date() }]) {
      expect(await rejection(memory.store_node({ node } as never, ctx()))).toMatchObject({ code: "BAD_REQUEST" });
    }
    for (const node of [{}, { confidence: 0 }, { confidence: 1 }, { causal_parent_ids: [] }, { content: { nested: [1, "two", null] } }]) {
      expect((await memory.store_node({ node }, ctx())).existing).toBe(false);
    }
  });

  it("copies the node: mutating the caller's object or a retrieved one does not reach the store", async () => {
    const memory = new InMemoryMemory();
    const node = { content: { tags: ["a"] } };
    await memory.store_node({ node }, ctx());
    node.content.tags.push("mutated");
    const { nodes } = await memory.retrieve_context({ query: "" }, ctx());
    (nodes[0]!.content as { tags: string[] }).tags.push("mutated too");
    const again = await memory.retrieve_context({ query: "" }, ctx());
    expect(again.nodes[0]!.content).toEqual({ tags: ["a"] });
  });

  it("defaults confidence to 0.5", async () => {
    const memory = new InMemoryMemory();
    await memory.store_node({ node: { content: "x" } }, ctx());
    expect(memory.inspect("ws_a").nodes[0]!.node.confidence).toBe(0.5);
  });
});

describe("trace echo (§5.5, §7.7)", () => {
  it("records the trace id of the call that wrote each node, edge and mutation", async () => {
    const memory = new InMemoryMemory();
    const [t1, t2, t3] = [traceId(), traceId(), traceId()];
    await memory.store_node({ node: { id: "a", content: "a" } }, { trace_id: t1, workspace_id: "ws" });
    await memory.store_node({ node: { id: "b", content: "b" } }, { trace_id: t2, workspace_id: "ws" });
    const { edge_id } = await memory.store_edge({ src: "a", dst: "b", type: "causal" }, { trace_id: t3, workspace_id: "ws" });
    await memory.learn_from_outcome({ outcome: outcome("success", ["a"]) }, { trace_id: t3, workspace_id: "ws" });
    const state = memory.inspect("ws");
    expect(state.nodes.map((n) => n.trace_id)).toEqual([t1, t2]);
    expect(state.edges).toEqual([{ edge_id, src: "a", dst: "b", type: "causal", trace_id: t3 }]);
    expect(memory.mutations("ws").map(({ operation, trace_id, ids }) => ({ operation, trace_id, ids }))).toEqual([
      { operation: "store_node", trace_id: t1, ids: ["a"] },
      { operation: "store_node", trace_id: t2, ids: ["b"] },
      { operation: "store_edge", trace_id: t3, ids: [edge_id] },
      { operation: "learn_from_outcome", trace_id: t3, ids: ["a"] },
    ]);
  });

  it("does not log reads or deduplicated stores as mutations", async () => {
    const memory = new InMemoryMemory();
    await memory.store_node({ node: { content: "x", signature: "s" } }, ctx());
    await memory.store_node({ node: { content: "x", signature: "s" } }, ctx());
    await memory.retrieve_context({ query: "x" }, ctx());
    await memory.topology_analyze({}, ctx());
    expect(memory.mutations("ws_a")).toHaveLength(1);
  });
});

describe("store_edge", () => {
  it("is idempotent on (src, dst, type) and distinguishes types", async () => {
    const memory = new InMemoryMemory();
    await memory.store_node({ node: { id: "a" } }, ctx());
    await memory.store_node({ node: { id: "b" } }, ctx());
    const e1 = await memory.store_edge({ src: "a", dst: "b", type: "causal" }, ctx());
    const e2 = await memory.store_edge({ src: "a", dst: "b", type: "causal" }, ctx());
    const e3 = await memory.store_edge({ src: "a", dst: "b", type: "supports" }, ctx());
    const e4 = await memory.store_edge({ src: "b", dst: "a", type: "causal" }, ctx());
    expect(e2).toEqual(e1);
    expect(new Set([e1.edge_id, e3.edge_id, e4.edge_id]).size).toBe(3);
    expect(memory.mutations("ws_a").filter((m) => m.operation === "store_edge")).toHaveLength(3);
  });

  it("refuses an edge to a node that does not exist in the workspace (near miss: one that does)", async () => {
    const memory = new InMemoryMemory();
    await memory.store_node({ node: { id: "a" } }, ctx("ws_a"));
    await memory.store_node({ node: { id: "b" } }, ctx("ws_b"));
    expect(await rejection(memory.store_edge({ src: "a", dst: "b", type: "t" }, ctx("ws_a")))).toMatchObject({ code: "UNKNOWN_NODE" });
    expect(await rejection(memory.store_edge({ src: "a", dst: "a", type: "" }, ctx("ws_a")))).toMatchObject({ code: "BAD_REQUEST" });
    await expect(memory.store_edge({ src: "a", dst: "a", type: "self" }, ctx("ws_a"))).resolves.toMatchObject({ edge_id: expect.any(String) });
  });
});

describe("learn_from_outcome (§7.2: confidence only)", () => {
  async function seeded() {
    const memory = new InMemoryMemory();
    await memory.store_node({ node: { id: "hi", type: "belief", content: "c", confidence: 0.98, causal_parent_ids: ["root"] } }, ctx());
    await memory.store_node({ node: { id: "lo", confidence: 0.02 } }, ctx());
    await memory.store_node({ node: { id: "mid", confidence: 0.5 } }, ctx());
    return memory;
  }

  it.each([
    ["success", [["hi", 0.98, 1], ["lo", 0.02, 0.07], ["mid", 0.5, 0.55]]],
    ["partial", [["hi", 0.98, 0.99], ["lo", 0.02, 0.03], ["mid", 0.5, 0.51]]],
    ["failure", [["hi", 0.98, 0.93], ["lo", 0.02, 0], ["mid", 0.5, 0.45]]],
    ["timeout", [["hi", 0.98, 0.98], ["lo", 0.02, 0.02], ["mid", 0.5, 0.5]]],
  ] as const)("%s moves confidence by its step, clamped to [0, 1]", async (status, expected) => {
    const memory = await seeded();
    const updates = await memory.learn_from_outcome({ outcome: outcome(status, ["hi", "lo", "mid", "unknown", "hi"]) }, ctx());
    expect(updates).toEqual(expected.map(([node_id, previous, confidence]) => ({ node_id, previous, confidence })));
    const stored = Object.fromEntries(memory.inspect("ws_a").nodes.map(({ node }) => [node.id, node.confidence]));
    expect(stored).toEqual(Object.fromEntries(expected.map(([id, , c]) => [id, c])));
  });

  it("changes nothing but confidence", async () => {
    const memory = await seeded();
    const before = memory.inspect("ws_a").nodes.find((n) => n.node.id === "hi")!;
    await memory.learn_from_outcome({ outcome: outcome("failure", ["hi"]) }, ctx());
    const after = memory.inspect("ws_a").nodes.find((n) => n.node.id === "hi")!;
    expect(after).toEqual({ ...before, node: { ...before.node, confidence: 0.93 } });
  });

  it("is idempotent per (action_id, status): learning the same outcome twice applies it once", async () => {
    const memory = await seeded();
    const first = await memory.learn_from_outcome({ outcome: outcome("success", ["mid"]) }, ctx());
    const again = await memory.learn_from_outcome({ outcome: outcome("success", ["mid"]) }, ctx());
    expect(again).toEqual(first);
    // Near miss: another action is a new outcome.
    const next = await memory.learn_from_outcome({ outcome: outcome("success", ["mid"], "act_2") }, ctx());
    expect(next).toEqual([{ node_id: "mid", previous: 0.55, confidence: 0.6 }]);
  });

  it("refuses a malformed outcome", async () => {
    const memory = await seeded();
    for (const bad of [undefined, {}, { action_id: "a", status: "won" }, { action_id: "", status: "success" }, { action_id: "a", status: "success", causal_parent_ids: "hi" }]) {
      expect(await rejection(memory.learn_from_outcome({ outcome: bad } as never, ctx()))).toMatchObject({ code: "BAD_REQUEST" });
    }
    await expect(memory.learn_from_outcome({ outcome: { action_id: "a", status: "success" } } as never, ctx())).resolves.toEqual([]);
  });

  it("does not drift: twenty successes from 0 reach exactly 1", async () => {
    const memory = new InMemoryMemory();
    await memory.store_node({ node: { id: "n", confidence: 0 } }, ctx());
    for (let i = 0; i < 20; i++) await memory.learn_from_outcome({ outcome: outcome("success", ["n"], `act_${i}`) }, ctx());
    expect(memory.inspect("ws_a").nodes[0]!.node.confidence).toBe(1);
  });
});

describe("consolidate", () => {
  it("merges identical (type, content) into the oldest, moves edges, and reports the ConsolidationEvent", async () => {
    const memory = new InMemoryMemory();
    const c = ctx();
    await memory.store_node({ node: { id: "old", type: "belief", content: { x: 1 }, confidence: 0.4, signature: "s-old", causal_parent_ids: ["p1"] } }, c);
    await memory.store_node({ node: { id: "other", type: "belief", content: { x: 2 } } }, c);
    await memory.store_node({ node: { id: "dup", type: "belief", content: { x: 1 }, confidence: 0.9, signature: "s-dup", causal_parent_ids: ["p2"] } }, c);
    await memory.store_node({ node: { id: "fact", type: "fact", content: { x: 1 } } }, c);
    await memory.store_edge({ src: "other", dst: "dup", type: "supports" }, c);
    await memory.store_edge({ src: "dup", dst: "old", type: "same" }, c);
    const event = await memory.consolidate({ scope: null }, c);
    expect(event).toEqual({
      token: "ConsolidationEvent",
      version: "0.1",
      trace_id: TRACE,
      timescale: "medium",
      affected_node_ids: ["dup"],
      merged_into_ids: ["old"],
      convergence_status: "unstable",
      metric_deltas: { graph_size: -1 },
    });
    const state = memory.inspect("ws_a");
    expect(state.nodes.map((n) => n.node.id)).toEqual(["old", "other", "fact"]);
    expect(state.nodes[0]!.node).toMatchObject({ confidence: 0.9, causal_parent_ids: ["p1", "p2"], signature: "s-old" });
    expect(state.edges.map(({ src, dst, type }) => [src, dst, type])).toEqual([["other", "old", "supports"]]);
    // The merged node's signature now leads to the survivor.
    expect(await memory.store_node({ node: { content: "anything", signature: "s-dup" } }, c)).toMatchObject({ node_id: "old", existing: true });
  });

  it("is idempotent: the second run merges nothing and reports stable", async () => {
    const memory = new InMemoryMemory();
    await memory.store_node({ node: { content: "same" } }, ctx());
    await memory.store_node({ node: { content: "same" } }, ctx());
    expect((await memory.consolidate({}, ctx())).convergence_status).toBe("unstable");
    const second = await memory.consolidate({}, ctx());
    expect(second).toMatchObject({ convergence_status: "stable", affected_node_ids: [], merged_into_ids: [], metric_deltas: { graph_size: 0 } });
  });

  it("limits the merge to scope.node_ids", async () => {
    const memory = new InMemoryMemory();
    for (const id of ["a", "b", "c"]) await memory.store_node({ node: { id, content: "same" } }, ctx());
    const event = await memory.consolidate({ scope: { node_ids: ["b", "c"] } }, ctx());
    expect(event).toMatchObject({ affected_node_ids: ["c"], merged_into_ids: ["b"] });
    expect(await rejection(memory.consolidate({ scope: { node_ids: "b" } }, ctx()))).toMatchObject({ code: "BAD_REQUEST" });
  });
});

describe("retrieve_context", () => {
  async function seeded() {
    const memory = new InMemoryMemory();
    await memory.store_node({ node: { id: "a", type: "belief", content: "The Sky is blue", confidence: 0.6 } }, ctx());
    await memory.store_node({ node: { id: "b", type: "belief", content: { text: "sky at night" }, confidence: 0.9 } }, ctx());
    await memory.store_node({ node: { id: "c", content: "grass", confidence: 0.95 } }, ctx());
    await memory.store_node({ node: { id: "d", content: "SKY again", confidence: 0.6 } }, ctx());
    await memory.store_edge({ src: "a", dst: "b", type: "causal" }, ctx());
    await memory.store_edge({ src: "b", dst: "a", type: "causal" }, ctx());
    await memory.store_edge({ src: "b", dst: "c", type: "causal" }, ctx());
    return memory;
  }

  it("returns matching nodes (case-insensitive, stringified content), most confident first, oldest on ties", async () => {
    const memory = await seeded();
    const { nodes, topology } = await memory.retrieve_context({ query: "sky", k: 10 }, ctx());
    expect(nodes.map((n) => n.id)).toEqual(["b", "a", "d"]);
    expect(topology).toMatchObject({ token: "TopologyContext", version: "0.1", trace_id: TRACE, max_kappa: 1, routing: "deliberate" });
    // The topology covers the retrieved nodes only: the edge to "c" is outside.
    expect(topology.edges).toEqual([
      { src: "a", dst: "b", type: "causal" },
      { src: "b", dst: "a", type: "causal" },
    ]);
  });

  it("honours k, and returns every node for an empty or absent query", async () => {
    const memory = await seeded();
    expect((await memory.retrieve_context({ query: "sky", k: 1 }, ctx())).nodes.map((n) => n.id)).toEqual(["b"]);
    expect((await memory.retrieve_context({ query: "", k: 10 }, ctx())).nodes).toHaveLength(4);
    expect((await memory.retrieve_context({ query: undefined }, ctx())).nodes).toHaveLength(4);
    expect((await memory.retrieve_context({ query: "sky", k: 0 }, ctx())).nodes).toEqual([]);
    expect((await memory.retrieve_context({ query: "nothing like it" }, ctx())).topology).toMatchObject({ nodes: [], sccs: [], max_kappa: 0, routing: "fast" });
  });

  it("refuses a k that is not an integer ≥ 0", async () => {
    const memory = await seeded();
    for (const k of [-1, 1.5, "3"]) expect(await rejection(memory.retrieve_context({ query: "", k } as never, ctx()))).toMatchObject({ code: "BAD_REQUEST" });
  });

  it("picks the same top k as a full sort, large graphs and ties included", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(0, 0.25, 0.5, 0.75, 1), { minLength: 0, maxLength: 120 }), fc.integer({ min: 1, max: 12 }), async (confidences, k) => {
        const memory = new InMemoryMemory();
        for (const [i, confidence] of confidences.entries()) await memory.store_node({ node: { id: `n${i}`, content: "c", confidence } }, ctx());
        const expected = confidences
          .map((confidence, i) => ({ id: `n${i}`, confidence, i }))
          .sort((x, y) => y.confidence - x.confidence || x.i - y.i)
          .slice(0, k)
          .map((n) => n.id);
        expect((await memory.retrieve_context({ query: "c", k }, ctx())).nodes.map((n) => n.id)).toEqual(expected);
      }),
      { numRuns: 80 },
    );
  });
});
