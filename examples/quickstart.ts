/**
 * The runtime in one file: the spec's §4 Graphonomous loop with handlers that really use the
 * memory substrate. Run it with `npm run build && node dist/examples/quickstart.js`.
 */
import { createRuntime, type TopologyContext } from "../src/index.js";

const runtime = await createRuntime();

// What each phase is given, as its author knows it: handle<Input>() types ctx.input.
interface Query {
  query: string;
}
interface Retrieved {
  query: string;
  node_ids: string[];
  topology: TopologyContext;
}
interface Act {
  action_id: string;
  causal_parent_ids: string[];
}

// retrieve: read context; the memory substrate also returns its TopologyContext (κ).
runtime.handle<Query, Retrieved>("retrieve_ctx", async ({ input, substrates }) => {
  const { nodes, topology } = await substrates.memory.retrieve_context({ query: input.query, k: 5 });
  return { query: input.query, node_ids: nodes.map((n) => n.id).filter((id): id is string => id !== undefined), topology };
});

// route: §7.4 κ-routing is on, so with max_kappa > 0 the decision must be "deliberate". The
// beliefs retrieved travel on to the act, which must name what it rests on.
runtime.handle<Retrieved>("route_topology", ({ input }) => ({
  node_ids: input.node_ids,
  decision: input.topology.max_kappa > 0 ? "deliberate" : "fast",
}));

// act: every act passes policy and auth first (the runtime does that); it must name the
// beliefs it rests on (§7.6 outcome grounding).
runtime.handle<{ node_ids: string[] }, Act>("act_store", async ({ input, substrates, iteration }) => {
  const node = await substrates.memory.store_node({ node: { type: "action", content: `answer #${iteration}` } });
  console.log(`  (act stores ${node.node_id}, grounded on ${input.node_ids.length ? input.node_ids.join(", ") : "nothing retrieved yet"})`);
  return { action_id: node.node_id, causal_parent_ids: input.node_ids };
});

// learn: may append or update confidence only (§7.2); rewriting history is refused.
runtime.handle<Act>("learn_outcome", async ({ input, substrates, trace_id }) => {
  const outcome = { token: "OutcomeSignal", version: "0.1", trace_id, action_id: input.action_id, status: "success", causal_parent_ids: input.causal_parent_ids } as const;
  const updates = await substrates.memory.learn_from_outcome({ outcome });
  return { status: "success", updated: updates.length };
});

runtime.handle("consolidate_idle", async ({ substrates }) => substrates.memory.consolidate({}));

const loop = await runtime.load("manifests/graphonomous.continual_learning.yaml");
loop.subscribe((event) => {
  if (event.type === "phase.completed") console.log(`  ${event.phase_id.padEnd(16)} ${event.replayed ? "replayed (a duplicate: the cached output, no side effects)" : "completed"}`);
});

// The same query twice: the first iteration's act wrote to memory, so the second reads again and
// finds that answer (a read is replayed only while the world it read is unchanged).
for (const [i, query] of ["answer", "answer", "answer #1"].entries()) {
  console.log(`iteration ${i + 1}: query "${query}"`);
  const result = await loop.runIteration({ workspace: "ws_demo", input: { query } });
  console.log(`  -> ${result.status}${result.closed ? ", closed" : ""}, trace ${result.trace_id}, ${result.audit_events} audit events`);
}

// With nothing written in between, the same read is a duplicate: replayed, byte for byte.
console.log(`the retrieve phase alone, twice, nothing written in between:`);
for (let i = 0; i < 2; i++) await loop.invokePhase("retrieve_ctx", { workspace: "ws_demo", input: { query: "answer" } });

const telemetry = loop.telemetry();
console.log(`iterations ${telemetry.iteration_count}, closure rate ${telemetry.closure_rate}`);
