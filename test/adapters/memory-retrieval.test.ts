// How the in-memory memory substrate's retrieve_context matches (docs/substrates-http.md), and that
// its indexes answer exactly what a scan of every node would, in and out of transactions, while
// the cost of a call stays flat as the graph fills.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InMemoryMemory } from "../../adapters/memory/index.js";
import { wordsOf } from "../../adapters/memory/node-index.js";
import { ctx, TRACE } from "./helpers.js";

describe("retrieve_context matching", () => {
  async function seeded() {
    const memory = new InMemoryMemory();
    await memory.store_node({ node: { id: "b1", type: "belief", content: "The sky is blue", confidence: 0.6 } }, ctx());
    await memory.store_node({ node: { id: "a1", type: "action", content: { answer: "Answer #1", loop: "examples.hello" }, confidence: 0.7 } }, ctx());
    await memory.store_node({ node: { id: "a2", type: "action", content: "answer #2", confidence: 0.5 } }, ctx());
    await memory.store_node({ node: { id: "n1", content: "a skyline belief" } }, ctx());
    return memory;
  }
  const ids = async (memory: InMemoryMemory, query: unknown) => (await memory.retrieve_context({ query }, ctx())).nodes.map((n) => n.id);

  it("matches whole words of the node's type and content, case-insensitively, every word of the query", async () => {
    const memory = await seeded();
    expect(await ids(memory, "belief")).toEqual(["b1", "n1"]); // b1 by its type, n1 by its content
    expect(await ids(memory, "action")).toEqual(["a1", "a2"]);
    expect(await ids(memory, "answer")).toEqual(["a1", "a2"]);
    expect(await ids(memory, "ANSWER #1")).toEqual(["a1"]);
    expect(await ids(memory, "hello answer")).toEqual(["a1"]); // structured content: keys and values
    // Near misses: a part of a word, or one word of the query missing, matches nothing.
    expect(await ids(memory, "sky")).toEqual(["b1"]); // not "skyline"
    expect(await ids(memory, "ans")).toEqual([]);
    expect(await ids(memory, "blue moon")).toEqual([]);
  });

  it("filters by type exactly with {type}, and by words too with {type, text}; other JSON is matched by its words", async () => {
    const memory = await seeded();
    expect(await ids(memory, { type: "belief" })).toEqual(["b1"]);
    expect(await ids(memory, { type: "action", text: "answer 2" })).toEqual(["a2"]);
    expect(await ids(memory, { type: "Belief" })).toEqual([]);
    expect(await ids(memory, { loop: "hello" })).toEqual(["a1"]);
    expect(await ids(memory, "")).toEqual(["a1", "b1", "a2", "n1"]);
    expect(await ids(memory, "  #  ")).toEqual(["a1", "b1", "a2", "n1"]); // no words: every node
  });

  it("sees a transaction's own writes, and not another's", async () => {
    const memory = await seeded();
    const { tx_id } = await memory.begin_transaction({}, ctx());
    await memory.store_node({ node: { id: "t1", type: "belief", content: "sky at dawn", confidence: 0.99 } }, ctx("ws_a", { tx_id }));
    await memory.learn_from_outcome({ outcome: { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: "x", status: "failure", causal_parent_ids: ["b1"] } }, ctx("ws_a", { tx_id }));
    expect((await memory.retrieve_context({ query: "sky" }, ctx("ws_a", { tx_id }))).nodes.map((n) => [n.id, n.confidence])).toEqual([
      ["t1", 0.99],
      ["b1", 0.55],
    ]);
    expect((await memory.retrieve_context({ query: "sky" }, ctx())).nodes.map((n) => [n.id, n.confidence])).toEqual([["b1", 0.6]]);
    await memory.commit_transaction({ tx_id }, ctx());
    expect(await ids(memory, "sky")).toEqual(["t1", "b1"]);
  });
});

/** What retrieve_context answered before the index: every node, filtered and sorted. */
function reference(memory: InMemoryMemory, query: string, k: number): string[] {
  const words = [...wordsOf(query)];
  return memory
    .inspect("ws_a")
    .nodes.map((n, created) => ({ n: n.node, created }))
    .filter(({ n }) => {
      const mine = wordsOf(n.content, wordsOf(n.type ?? ""));
      return words.every((w) => mine.has(w));
    })
    .sort((x, y) => y.n.confidence - x.n.confidence || x.created - y.created)
    .slice(0, k)
    .map(({ n }) => n.id);
}

describe("retrieve_context's indexes", () => {
  it("answer what scanning every node answers, after any mix of stores, learning, consolidation and transactions", async () => {
    const word = fc.constantFrom("red", "green", "blue", "sky");
    const op = fc.oneof(
      fc.record({ kind: fc.constant("store" as const), type: fc.option(fc.constantFrom("belief", "action"), { nil: undefined }), words: fc.array(word, { maxLength: 3 }), confidence: fc.constantFrom(0.1, 0.5, 0.9) }),
      fc.record({ kind: fc.constant("learn" as const), parents: fc.array(fc.integer({ min: 1, max: 30 }), { maxLength: 4 }), status: fc.constantFrom("success", "failure") as fc.Arbitrary<"success" | "failure">, n: fc.integer() }),
      fc.record({ kind: fc.constant("consolidate" as const) }),
      fc.record({ kind: fc.constant("edge" as const), a: fc.integer({ min: 1, max: 30 }), b: fc.integer({ min: 1, max: 30 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ op, inTx: fc.boolean() }), { maxLength: 40 }), fc.array(fc.tuple(fc.array(word, { maxLength: 2 }), fc.integer({ min: 0, max: 6 })), { minLength: 1, maxLength: 4 }), async (ops, queries) => {
        const memory = new InMemoryMemory();
        for (const { op: o, inTx } of ops) {
          const tx = inTx ? (await memory.begin_transaction({}, ctx())).tx_id : undefined;
          const c = tx ? ctx("ws_a", { tx_id: tx }) : ctx();
          try {
            if (o.kind === "store") await memory.store_node({ node: { ...(o.type ? { type: o.type } : {}), content: o.words.join(" "), confidence: o.confidence } }, c);
            else if (o.kind === "learn") await memory.learn_from_outcome({ outcome: { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: `a${o.n}`, status: o.status, causal_parent_ids: o.parents.map((p) => `node_${p}`) } }, c);
            else if (o.kind === "edge") await memory.store_edge({ src: `node_${o.a}`, dst: `node_${o.b}`, type: "rel" }, c);
            else await memory.consolidate({}, c);
          } catch {
            // An edge to a node that does not exist: refused, as it should be.
          }
          if (tx) await memory.commit_transaction({ tx_id: tx }, ctx());
        }
        const check = async () => {
          for (const [words, k] of queries) {
            const query = words.join(" ");
            const got = await memory.retrieve_context({ query, k }, ctx());
            expect(got.nodes.map((n) => n.id), `${query} k=${k}`).toEqual(reference(memory, query, k));
            // The topology covers exactly the edges among the retrieved nodes.
            const chosen = new Set(got.nodes.map((n) => n.id));
            const expected = memory.inspect("ws_a").edges.filter((e) => chosen.has(e.src) && chosen.has(e.dst)).map(({ src, dst, type }) => ({ src, dst, type }));
            expect(got.topology.edges).toEqual(expected);
          }
        };
        await check();
        await memory.consolidate({}, ctx());
        await check();
        // What one consolidation merged leaves nothing for the next.
        expect((await memory.consolidate({}, ctx())).convergence_status).toBe("stable");
      }),
      { numRuns: 150 },
    );
  });

  it("keep a call's cost flat as the graph fills: 40,000 nodes cost about what 1,000 do (a scan would cost 40×)", async () => {
    const timeOf = async (size: number) => {
      const memory = new InMemoryMemory();
      for (let i = 0; i < size; i++) await memory.store_node({ node: { type: "action", content: `step ${i}`, confidence: 0.3 + (i % 41) / 100 } }, ctx());
      const run = async () => {
        for (let i = 0; i < 300; i++) await memory.retrieve_context({ query: "", k: 5 }, ctx());
      };
      await run();
      const samples: number[] = [];
      for (let r = 0; r < 5; r++) {
        const start = performance.now();
        await run();
        samples.push(performance.now() - start);
      }
      return samples.sort((a, b) => a - b)[2] as number;
    };
    const small = await timeOf(1_000);
    const large = await timeOf(40_000);
    expect(large / small).toBeLessThan(8);
  });
});
