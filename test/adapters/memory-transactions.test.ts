import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InMemoryMemory } from "../../adapters/memory/index.js";
import type { OutcomeSignal } from "../../src/tokens/types.js";
import { ctx, rejection, TRACE } from "./helpers.js";

const outcome = (parents: string[], action_id = "act"): OutcomeSignal => ({ token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id, status: "success", causal_parent_ids: parents });

async function begin(memory: InMemoryMemory, workspace = "ws_a") {
  const { tx_id } = await memory.begin_transaction({}, ctx(workspace));
  return { tx_id, in: ctx(workspace, { tx_id }) };
}

describe("memory transactions", () => {
  it("reads inside the transaction see its own writes; reads outside do not, until commit", async () => {
    const memory = new InMemoryMemory();
    await memory.store_node({ node: { id: "base", content: "base" } }, ctx());
    const tx = await begin(memory);
    await memory.store_node({ node: { id: "new", content: "new" } }, tx.in);
    await memory.store_edge({ src: "base", dst: "new", type: "causal" }, tx.in);
    await memory.learn_from_outcome({ outcome: outcome(["base"]) }, tx.in);

    const inside = await memory.retrieve_context({ query: "" }, tx.in);
    expect(inside.nodes.map((n) => [n.id, n.confidence])).toEqual([["base", 0.55], ["new", 0.5]]);
    expect(inside.topology.edges).toEqual([{ src: "base", dst: "new", type: "causal" }]);
    const outside = await memory.retrieve_context({ query: "" }, ctx());
    expect(outside.nodes.map((n) => [n.id, n.confidence])).toEqual([["base", 0.5]]);
    expect(memory.mutations("ws_a")).toHaveLength(1);

    await memory.commit_transaction({ tx_id: tx.tx_id }, ctx());
    const after = await memory.retrieve_context({ query: "" }, ctx());
    expect(after.nodes.map((n) => [n.id, n.confidence])).toEqual([["base", 0.55], ["new", 0.5]]);
    expect(memory.mutations("ws_a").map((m) => m.operation)).toEqual(["store_node", "store_node", "store_edge", "learn_from_outcome"]);
  });

  it("rollback leaves no trace: state, mutation trail and later answers are as if nothing happened", async () => {
    const memory = new InMemoryMemory();
    await memory.store_node({ node: { id: "a", content: "same", signature: "sa" } }, ctx());
    await memory.store_node({ node: { id: "b", content: "same" } }, ctx());
    const before = memory.inspect("ws_a");
    const trail = memory.mutations("ws_a");
    const tx = await begin(memory);
    await memory.store_node({ node: { content: "staged", signature: "s1" } }, tx.in);
    await memory.store_edge({ src: "a", dst: "b", type: "t" }, tx.in);
    await memory.learn_from_outcome({ outcome: outcome(["a", "b"]) }, tx.in);
    await memory.consolidate({}, tx.in);
    await memory.rollback_transaction({ tx_id: tx.tx_id }, ctx());

    expect(memory.inspect("ws_a")).toEqual(before);
    expect(memory.mutations("ws_a")).toEqual(trail);
    expect(memory.openTransactions("ws_a")).toBe(0);
    // The rolled-back signature and outcome are unknown: storing and learning them works anew.
    expect((await memory.store_node({ node: { content: "staged", signature: "s1" } }, ctx())).existing).toBe(false);
    expect(await memory.learn_from_outcome({ outcome: outcome(["a"]) }, ctx())).toEqual([{ node_id: "a", previous: 0.5, confidence: 0.55 }]);
  });

  it("commit is atomic: readers interleaved with the commit see all of it or none of it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 30 }), fc.scheduler(), async (writes, s) => {
        const memory = new InMemoryMemory();
        const tx = await begin(memory);
        for (let i = 0; i < writes; i++) await memory.store_node({ node: { content: `n${i}` } }, tx.in);
        const seen: number[] = [];
        const reads = Array.from({ length: 5 }, () => s.schedule(Promise.resolve()).then(async () => seen.push((await memory.retrieve_context({ query: "", k: 100 }, ctx())).nodes.length)));
        const commit = s.schedule(Promise.resolve()).then(() => memory.commit_transaction({ tx_id: tx.tx_id }, ctx()));
        await s.waitAll();
        await Promise.all([...reads, commit]);
        expect(seen.every((n) => n === 0 || n === writes)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it("refuses unknown and finished transactions with UNKNOWN_TX", async () => {
    const memory = new InMemoryMemory();
    const tx = await begin(memory);
    await memory.commit_transaction({ tx_id: tx.tx_id }, ctx());
    expect(await rejection(memory.commit_transaction({ tx_id: tx.tx_id }, ctx()))).toMatchObject({ code: "UNKNOWN_TX" });
    expect(await rejection(memory.rollback_transaction({ tx_id: tx.tx_id }, ctx()))).toMatchObject({ code: "UNKNOWN_TX" });
    expect(await rejection(memory.store_node({ node: {} }, tx.in))).toMatchObject({ code: "UNKNOWN_TX" });
    expect(await rejection(memory.retrieve_context({ query: "" }, ctx("ws_a", { tx_id: "tx_999" })))).toMatchObject({ code: "UNKNOWN_TX" });
  });

  it("a transaction begun in one workspace is unknown in another, even with the same id", async () => {
    const memory = new InMemoryMemory();
    const a = await begin(memory, "ws_a");
    await memory.store_node({ node: { id: "secret" } }, a.in);
    expect(await rejection(memory.retrieve_context({ query: "" }, ctx("ws_b", { tx_id: a.tx_id })))).toMatchObject({ code: "UNKNOWN_TX" });
    expect(await rejection(memory.commit_transaction({ tx_id: a.tx_id }, ctx("ws_b")))).toMatchObject({ code: "UNKNOWN_TX" });
    // Near miss: ws_b's own first transaction may carry the same id, and it is a different one.
    const b = await begin(memory, "ws_b");
    expect(b.tx_id).toBe(a.tx_id);
    expect((await memory.retrieve_context({ query: "" }, b.in)).nodes).toEqual([]);
    await memory.commit_transaction({ tx_id: a.tx_id }, ctx("ws_a"));
    expect(memory.inspect("ws_a").nodes).toHaveLength(1);
    expect(memory.openTransactions("ws_b")).toBe(1);
  });

  it("transactions do not nest", async () => {
    const memory = new InMemoryMemory();
    const tx = await begin(memory);
    expect(await rejection(memory.begin_transaction({}, tx.in))).toMatchObject({ code: "NESTED_TX" });
  });

  it("refuses to commit over a concurrent change (TX_CONFLICT) and discards the transaction", async () => {
    const memory = new InMemoryMemory();
    await memory.store_node({ node: { id: "n" } }, ctx());
    const t1 = await begin(memory);
    const t2 = await begin(memory);
    await memory.learn_from_outcome({ outcome: outcome(["n"], "one") }, t1.in);
    await memory.learn_from_outcome({ outcome: outcome(["n"], "two") }, t2.in);
    await memory.commit_transaction({ tx_id: t1.tx_id }, ctx());
    expect(await rejection(memory.commit_transaction({ tx_id: t2.tx_id }, ctx()))).toMatchObject({ code: "TX_CONFLICT" });
    expect(memory.openTransactions("ws_a")).toBe(0);
    expect(memory.inspect("ws_a").nodes[0]!.node.confidence).toBe(0.55);
  });

  it("detects concurrent stores of one signature and edges whose endpoint was merged away", async () => {
    const memory = new InMemoryMemory();
    const t1 = await begin(memory);
    await memory.store_node({ node: { content: "x", signature: "s" } }, t1.in);
    await memory.store_node({ node: { content: "x", signature: "s" } }, ctx());
    expect(await rejection(memory.commit_transaction({ tx_id: t1.tx_id }, ctx()))).toMatchObject({ code: "TX_CONFLICT" });

    await memory.store_node({ node: { id: "keep", content: "dup" } }, ctx());
    await memory.store_node({ node: { id: "gone", content: "dup" } }, ctx());
    await memory.store_node({ node: { id: "other", content: "o" } }, ctx());
    const t2 = await begin(memory);
    await memory.store_edge({ src: "other", dst: "gone", type: "t" }, t2.in);
    await memory.consolidate({}, ctx());
    expect(await rejection(memory.commit_transaction({ tx_id: t2.tx_id }, ctx()))).toMatchObject({ code: "TX_CONFLICT" });
    expect(memory.inspect("ws_a").edges).toEqual([]);
  });

  it("near miss of a conflict: disjoint concurrent transactions both commit", async () => {
    const memory = new InMemoryMemory();
    await memory.store_node({ node: { id: "a" } }, ctx());
    await memory.store_node({ node: { id: "b" } }, ctx());
    const t1 = await begin(memory);
    const t2 = await begin(memory);
    await memory.learn_from_outcome({ outcome: outcome(["a"], "one") }, t1.in);
    await memory.learn_from_outcome({ outcome: outcome(["b"], "two") }, t2.in);
    await memory.store_edge({ src: "a", dst: "b", type: "t" }, t1.in);
    await memory.store_edge({ src: "a", dst: "b", type: "t" }, t2.in);
    await memory.commit_transaction({ tx_id: t1.tx_id }, ctx());
    await memory.commit_transaction({ tx_id: t2.tx_id }, ctx());
    const state = memory.inspect("ws_a");
    expect(state.nodes.map((n) => n.node.confidence)).toEqual([0.55, 0.55]);
    expect(state.edges).toHaveLength(1);
  });
});
