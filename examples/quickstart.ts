/**
 * The runtime in one file: the spec's §4 Graphonomous loop with handlers that really use the
 * memory substrate. Run it with `npm run build && node dist/examples/quickstart.js`.
 */
import { createRuntime } from "../src/index.js";

const runtime = await createRuntime();

// retrieve: read context; the memory substrate also returns its TopologyContext (κ).
runtime.handle("retrieve_ctx", async ({ input, substrates }) => {
  const query = (input as { query?: string } | null)?.query ?? "";
  const { nodes, topology } = await substrates.memory.retrieve_context({ query, k: 5 });
  return { query, node_ids: nodes.map((n) => n.id), topology };
});

// route: §7.4 κ-routing is on, so with max_kappa > 0 the decision must be "deliberate". The
// beliefs retrieved travel on to the act, which must name what it rests on.
runtime.handle("route_topology", ({ input, tokens }) => {
  const topology = tokens.find((t) => t.token === "TopologyContext");
  const node_ids = (input as { node_ids?: string[] } | null)?.node_ids ?? [];
  return { node_ids, decision: topology && "max_kappa" in topology && topology.max_kappa > 0 ? "deliberate" : "fast" };
});

// act: every act passes policy and auth first (the runtime does that); it must name the
// beliefs it rests on (§7.6 outcome grounding).
runtime.handle("act_store", async ({ input, substrates, iteration }) => {
  const node = await substrates.memory.store_node({ node: { type: "action", content: `answer #${iteration}` } });
  const causal_parent_ids = (input as { node_ids?: string[] } | null)?.node_ids ?? [];
  console.log(`  (act stores ${node.node_id}, grounded on ${causal_parent_ids.length ? causal_parent_ids.join(", ") : "nothing retrieved yet"})`);
  return { action_id: node.node_id, causal_parent_ids };
});

// learn: may append or update confidence only (§7.2); rewriting history is refused.
runtime.handle("learn_outcome", async ({ input, substrates, trace_id }) => {
  const act = input as { action_id: string; causal_parent_ids: string[] };
  const updates = await substrates.memory.learn_from_outcome({
    outcome: { token: "OutcomeSignal", version: "0.1", trace_id, action_id: act.action_id, status: "success", causal_parent_ids: act.causal_parent_ids },
  });
  return { status: "success", updated: updates.length };
});

runtime.handle("consolidate_idle", async ({ substrates }) => substrates.memory.consolidate({}));

const loop = await runtime.load("manifests/graphonomous.continual_learning.yaml");
loop.subscribe((event) => {
  if (event.type === "phase.completed") console.log(`  ${event.phase_id.padEnd(16)} ${event.replayed ? "replayed (same signature: cached output, no side effects)" : "completed"}`);
});

// The same query twice: the idempotent retrieve of the second iteration replays the first's.
// A new query runs it again, and finds the answer the first act stored.
for (const [i, query] of ["answer", "answer", "answer #1"].entries()) {
  console.log(`iteration ${i + 1}: query "${query}"`);
  const result = await loop.runIteration({ workspace: "ws_demo", input: { query } });
  console.log(`  -> ${result.status}${result.closed ? ", closed" : ""}, trace ${result.trace_id}, ${result.audit_events} audit events`);
}
const telemetry = loop.telemetry();
console.log(`iterations ${telemetry.iteration_count}, closure rate ${telemetry.closure_rate}`);
