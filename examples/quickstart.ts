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

// route: §7.4 κ-routing is on, so with max_kappa > 0 the decision must be "deliberate".
runtime.handle("route_topology", ({ tokens }) => {
  const topology = tokens.find((t) => t.token === "TopologyContext");
  return { decision: topology && "max_kappa" in topology && topology.max_kappa > 0 ? "deliberate" : "fast" };
});

// act: every act passes policy and auth first (the runtime does that); it must name the
// beliefs it rests on (§7.6 outcome grounding).
runtime.handle("act_store", async ({ input, substrates, iteration }) => {
  const node = await substrates.memory.store_node({ node: { type: "action", content: `answer #${iteration}` } });
  return { action_id: node.node_id, causal_parent_ids: (input as { node_ids?: string[] } | null)?.node_ids ?? [] };
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
  if (event.type === "phase.completed") console.log(`  ${event.phase_id.padEnd(16)} ${event.replayed ? "replayed" : "completed"}`);
});

for (let i = 1; i <= 3; i++) {
  console.log(`iteration ${i}`);
  const result = await loop.runIteration({ workspace: "ws_demo", input: { query: "answer" } });
  console.log(`  -> ${result.status}${result.closed ? ", closed" : ""}, trace ${result.trace_id}, ${result.audit_events} audit events`);
}
const telemetry = loop.telemetry();
console.log(`iterations ${telemetry.iteration_count}, closure rate ${telemetry.closure_rate}`);
