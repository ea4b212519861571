import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InMemoryMemory, stronglyConnectedComponents, topologyContext } from "../../adapters/memory/index.js";
import { ctx, TRACE } from "./helpers.js";

/** Reference: u and v share a component iff each reaches the other (transitive closure). */
function bruteForce(n: number, edges: Array<[number, number]>) {
  const reach = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => i === j));
  for (const [s, d] of edges) reach[s]![d] = true;
  for (let k = 0; k < n; k++) for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (reach[i]![k] && reach[k]![j]) reach[i]![j] = true;
  const components: number[][] = [];
  const placed = new Set<number>();
  for (let i = 0; i < n; i++) {
    if (placed.has(i)) continue;
    const members = [];
    for (let j = 0; j < n; j++) if (reach[i]![j] && reach[j]![i]) members.push(j);
    members.forEach((m) => placed.add(m));
    components.push(members);
  }
  const pairs = new Set(edges.map(([s, d]) => `${s}>${d}`));
  return components.map((members) => {
    const inside = [...pairs].filter((p) => p.split(">").every((x) => members.includes(Number(x)))).length;
    return { members, kappa: inside - members.length + 1 };
  });
}

const graphs = fc.integer({ min: 0, max: 9 }).chain((n) =>
  fc.record({
    n: fc.constant(n),
    edges: n === 0 ? fc.constant([] as Array<[number, number, string]>) : fc.array(fc.tuple(fc.nat(n - 1), fc.nat(n - 1), fc.constantFrom("causal", "supports")), { maxLength: 25 }),
  }),
);

describe("SCCs and κ", () => {
  it("agree with a brute-force reference on random small graphs", () => {
    fc.assert(
      fc.property(graphs, ({ n, edges }) => {
        const nodes = Array.from({ length: n }, (_, i) => ({ id: `n${i}` }));
        const token = topologyContext(TRACE, nodes, edges.map(([s, d, type]) => ({ src: `n${s}`, dst: `n${d}`, type })));
        const expected = bruteForce(n, edges.map(([s, d]) => [s, d]));
        const actual = token.sccs!.map((scc) => ({ members: scc.members.map((m) => Number(m.slice(1))), kappa: scc.kappa }));
        const key = (c: { members: number[] }) => c.members.join(",");
        expect([...actual].sort((a, b) => key(a).localeCompare(key(b)))).toEqual([...expected].sort((a, b) => key(a).localeCompare(key(b))));
        const maxKappa = Math.max(0, ...expected.map((c) => c.kappa));
        expect(token.max_kappa).toBe(maxKappa);
        expect(token.routing).toBe(maxKappa > 0 ? "deliberate" : "fast");
        for (const scc of token.sccs!) expect(scc.routing).toBe(scc.kappa > 0 ? "deliberate" : "fast");
      }),
      { numRuns: 400 },
    );
  });

  it.each([
    ["a single node", ["a"], [], [0]],
    ["a self-loop", ["a"], [["a", "a"]], [1]],
    ["a chain", ["a", "b", "c"], [["a", "b"], ["b", "c"]], [0, 0, 0]],
    ["a two-cycle", ["a", "b"], [["a", "b"], ["b", "a"]], [1]],
    ["a triangle with a chord", ["a", "b", "c"], [["a", "b"], ["b", "c"], ["c", "a"], ["a", "c"]], [2]],
    ["parallel typed edges count once", ["a", "b"], [["a", "b"], ["a", "b"], ["b", "a"]], [1]],
  ] as const)("κ of %s", (_, ids, pairs, kappas) => {
    const edges = pairs.map(([src, dst], i) => ({ src, dst, type: `t${i % 2}` }));
    const token = topologyContext(TRACE, ids.map((id) => ({ id })), edges);
    expect(token.sccs!.map((s) => s.kappa)).toEqual(kappas);
  });

  it("gives components stable ids in node order and leaves out edges that leave the subgraph", () => {
    const token = topologyContext(TRACE, [{ id: "x" }, { id: "y" }], [{ src: "x", dst: "y" }, { src: "y", dst: "x" }, { src: "y", dst: "elsewhere" }]);
    expect(token).toEqual({
      token: "TopologyContext",
      version: "0.1",
      trace_id: TRACE,
      nodes: [{ id: "x" }, { id: "y" }],
      edges: [{ src: "x", dst: "y" }, { src: "y", dst: "x" }],
      sccs: [{ id: "scc_001", members: ["x", "y"], kappa: 1, routing: "deliberate" }],
      max_kappa: 1,
      routing: "deliberate",
    });
  });

  it("walks a 200,000-node chain closed into one cycle without recursion", () => {
    const n = 200_000;
    const successors = Array.from({ length: n }, (_, i) => [(i + 1) % n]);
    const components = stronglyConnectedComponents(successors);
    expect(components).toHaveLength(1);
    expect(components[0]).toHaveLength(n);
  });
});

describe("topology_analyze", () => {
  it("analyses the whole graph, or the subgraph induced by node_ids (unknown ids ignored)", async () => {
    const memory = new InMemoryMemory();
    for (const id of ["a", "b", "c"]) await memory.store_node({ node: { id, type: "belief" } }, ctx());
    await memory.store_edge({ src: "a", dst: "b", type: "causal" }, ctx());
    await memory.store_edge({ src: "b", dst: "a", type: "causal" }, ctx());
    await memory.store_edge({ src: "b", dst: "c", type: "causal" }, ctx());
    const whole = await memory.topology_analyze({}, ctx());
    expect(whole.sccs!.map((s) => [s.members, s.kappa])).toEqual([[["a", "b"], 1], [["c"], 0]]);
    expect(whole.nodes).toEqual([
      { id: "a", type: "belief", confidence: 0.5 },
      { id: "b", type: "belief", confidence: 0.5 },
      { id: "c", type: "belief", confidence: 0.5 },
    ]);
    const part = await memory.topology_analyze({ node_ids: ["c", "b", "ghost"] }, ctx());
    expect(part).toMatchObject({ max_kappa: 0, routing: "fast", edges: [{ src: "b", dst: "c", type: "causal" }] });
    expect(part.nodes!.map((n) => n.id)).toEqual(["c", "b"]);
  });
});
