/**
 * Issue 12: the in-memory memory substrate must not slow down as it fills. retrieve_context (the
 * call every retrieve phase makes) on graphs of 1,000, 20,000 and 100,000 nodes, for an empty
 * query (the most confident k) and for a word that a hundred nodes carry, beside the same calls
 * on the 1,000-node graph in the same run. Before the index, both scanned every node.
 */
import { InMemoryMemory } from "../adapters/memory/index.js";
import { interleaved, report } from "./measure.js";

const ctx = { trace_id: "0af7651916cd43dd8448eb211c80319c", workspace_id: "bench" };

async function graphOf(size: number): Promise<InMemoryMemory> {
  const memory = new InMemoryMemory();
  for (let i = 0; i < size; i++) {
    // Every hundredth node mentions "rare"; confidences spread over 0.3–0.7 as learning leaves them.
    await memory.store_node({ node: { type: i % 2 ? "action" : "belief", content: { text: `${i % 100 === 0 ? "rare " : ""}observation ${i}`, n: i }, confidence: 0.3 + (i % 41) / 100 } }, ctx);
  }
  return memory;
}

const sizes = [1_000, 20_000, 100_000];
const graphs = await Promise.all(sizes.map(graphOf));

/** The baseline, in the same run: what a call cost before the index, a pass over every node. */
const everyNode = Array.from({ length: 100_000 }, (_, i) => ({ words: new Set([...(i % 100 === 0 ? ["rare"] : []), "observation", String(i)]), confidence: 0.3 + (i % 41) / 100, created: i }));
function scan(word: string | undefined, k: number) {
  const hits = everyNode.filter((n) => word === undefined || n.words.has(word));
  return hits.sort((x, y) => y.confidence - x.confidence || x.created - y.created).slice(0, k);
}
const results: Record<string, number> = {};
// retrieve_context is async only in signature: awaiting each call measures the promise machinery,
// so the loop starts calls and settles them together.
for (const [query, label] of [["", "empty query, k=5"], ["rare", "word on 1% of nodes, k=5"]] as const) {
  const fns: Record<string, () => unknown> = {};
  for (const [i, size] of sizes.entries()) fns[`${size}`] = () => graphs[i]!.retrieve_context({ query, k: 5 }, ctx);
  const ns = interleaved(fns, { iterations: 1_000, rounds: 11, warmup: 200 });
  for (const size of sizes) results[`${label} @ ${size}`] = ns[`${size}`]!;
}
const scanNs = interleaved({ empty: () => scan(undefined, 5), rare: () => scan("rare", 5) }, { iterations: 5, rounds: 11, warmup: 2 });
const ratio = (label: string, size: number) => results[`${label} @ ${size}`]! / results[`${label} @ 1000`]!;
const rows = Object.entries(results).map(([name, ns]) => ({ name: `retrieve_context, ${name} nodes`, value: `${(ns / 1000).toFixed(1)} µs` }));
rows.push({ name: "baseline: a scan of 100,000 nodes, empty query", value: `${(scanNs.empty! / 1000).toFixed(1)} µs` });
rows.push({ name: "baseline: a scan of 100,000 nodes, word query", value: `${(scanNs.rare! / 1000).toFixed(1)} µs` });
rows.push({ name: "100,000 vs 1,000 nodes, empty query", value: `${ratio("empty query, k=5", 100_000).toFixed(2)}×` });
rows.push({ name: "100,000 vs 1,000 nodes, word query", value: `${ratio("word on 1% of nodes, k=5", 100_000).toFixed(2)}×` });
rows.push({ name: "scan / index at 100,000 nodes, empty query", value: `${(scanNs.empty! / results["empty query, k=5 @ 100000"]!).toFixed(0)}×` });
report({
  title: "In-memory memory substrate: retrieve_context as the graph fills",
  rows,
  target: "on 100,000 nodes within 3× of 1,000 nodes for the empty query, 10× for the 1% word (a scan grows 100×)",
  met: ratio("empty query, k=5", 100_000) < 3 && ratio("word on 1% of nodes, k=5", 100_000) < 10,
});
