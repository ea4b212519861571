/**
 * Strongly connected components and κ for TopologyContext (§6.1, §7.4).
 *
 * κ is OS-002's "topology entanglement", which the PULSE spec uses but never defines. This
 * adapter defines it as the cyclomatic number of each component: κ = E − N + 1, where N is the
 * component's node count and E the number of distinct ordered (src, dst) pairs among its members
 * (edge types are labels, not extra structure, so two typed edges a→b count once). Consequences:
 * a single node without a self-loop has κ = 0, a self-loop gives κ = 1, a simple cycle κ = 1, and
 * every component of two or more nodes has κ ≥ 1. So max_kappa > 0 exactly when the subgraph has
 * a cycle, which is what §7.4 needs: cyclic beliefs route to deliberation.
 */
import type { StronglyConnectedComponent, TopologyContext, TopologyEdge, TopologyNode } from "../../src/tokens/types.js";
import { TOKEN_VERSION } from "../../src/tokens/types.js";

/**
 * Tarjan's algorithm with an explicit stack instead of recursion: knowledge graphs can hold long
 * chains, and a recursive walk overflows the call stack at a few thousand nodes.
 * `successors[v]` lists the targets of v's edges (indices). Components come out in reverse
 * topological order; members in the order they were popped.
 */
export function stronglyConnectedComponents(successors: readonly (readonly number[])[]): number[][] {
  const n = successors.length;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const nextEdge = new Int32Array(n);
  const stack: number[] = [];
  const walk: number[] = [];
  const components: number[][] = [];
  let counter = 0;

  const visit = (v: number) => {
    index[v] = low[v] = counter++;
    stack.push(v);
    onStack[v] = 1;
    walk.push(v);
  };

  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    visit(root);
    while (walk.length > 0) {
      const v = walk[walk.length - 1]!;
      const out = successors[v]!;
      const e = nextEdge[v]!;
      if (e < out.length) {
        nextEdge[v] = e + 1;
        const w = out[e]!;
        if (index[w] === -1) visit(w);
        else if (onStack[w]) low[v] = Math.min(low[v]!, index[w]!);
        continue;
      }
      walk.pop();
      if (walk.length > 0) {
        const parent = walk[walk.length - 1]!;
        low[parent] = Math.min(low[parent]!, low[v]!);
      }
      if (low[v] === index[v]) {
        const component: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = 0;
          component.push(w);
        } while (w !== v);
        components.push(component);
      }
    }
  }
  return components;
}

/** κ of a component from its size and the number of distinct ordered pairs inside it. */
export function kappa(memberCount: number, internalPairs: number): number {
  return internalPairs - memberCount + 1;
}

/**
 * The TopologyContext of a subgraph. `nodes` fixes the order of everything in the token
 * (members, components), so equal graphs give equal tokens; edges whose ends are not both in
 * `nodes` are left out.
 */
export function topologyContext(traceId: string, nodes: readonly TopologyNode[], edges: readonly TopologyEdge[]): TopologyContext {
  const position = new Map<string, number>();
  nodes.forEach((node, i) => position.set(node.id, i));
  const inside = edges.filter((edge) => position.has(edge.src) && position.has(edge.dst));

  // A pair (s, d) is the number s·n + d: exact while n² < 2⁵³, far beyond any in-memory graph.
  const n = nodes.length;
  const pairs = new Set<number>();
  const successors: number[][] = nodes.map(() => []);
  for (const edge of inside) {
    const s = position.get(edge.src)!;
    const d = position.get(edge.dst)!;
    const pair = s * n + d;
    if (pairs.has(pair)) continue;
    pairs.add(pair);
    successors[s]!.push(d);
  }

  const components = stronglyConnectedComponents(successors).map((members) => members.sort((a, b) => a - b));
  components.sort((a, b) => a[0]! - b[0]!);
  const componentOf = new Int32Array(n);
  components.forEach((members, c) => members.forEach((m) => (componentOf[m] = c)));
  const internal = new Array<number>(components.length).fill(0);
  for (const pair of pairs) {
    const c = componentOf[Math.floor(pair / n)]!;
    if (c === componentOf[pair % n]) internal[c]!++;
  }

  const width = Math.max(3, String(components.length).length);
  const sccs: StronglyConnectedComponent[] = components.map((members, c) => {
    const k = kappa(members.length, internal[c]!);
    return {
      id: `scc_${String(c + 1).padStart(width, "0")}`,
      members: members.map((m) => nodes[m]!.id),
      kappa: k,
      routing: k > 0 ? "deliberate" : "fast",
    };
  });
  const maxKappa = sccs.reduce((max, scc) => Math.max(max, scc.kappa), 0);
  return {
    token: "TopologyContext",
    version: TOKEN_VERSION,
    trace_id: traceId,
    nodes: nodes.map((node) => ({ ...node })),
    edges: inside.map((edge) => ({ ...edge })),
    sccs,
    max_kappa: maxKappa,
    routing: maxKappa > 0 ? "deliberate" : "fast",
  };
}
