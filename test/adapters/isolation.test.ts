import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { inMemorySubstrates } from "../../adapters/memory/index.js";
import type { InMemorySubstrateSet } from "../../adapters/memory/index.js";
import type { CallContext } from "../../src/substrates/contracts.js";
import { auditEvent } from "./helpers.js";

const WORKSPACES = ["ws_0", "ws_1", "ws_2"];
// A few trace ids shared by every workspace, so a leak through a shared key would show.
const TRACES = ["11111111111111111111111111111111", "22222222222222222222222222222222"];

type Command =
  | { kind: "node"; ws: number; id: string | null; trace: number }
  | { kind: "edge"; ws: number; src: string; dst: string; trace: number }
  | { kind: "learn"; ws: number; parents: string[]; trace: number }
  | { kind: "consolidate"; ws: number; trace: number }
  | { kind: "audit"; ws: number; trace: number; eventId: string }
  | { kind: "tx"; ws: number; trace: number; commit: boolean; id: string | null };

const ids = fc.constantFrom("shared", "n1", "n2", "node_1", "node_2");
const ws = fc.nat(WORKSPACES.length - 1);
const trace = fc.nat(TRACES.length - 1);
const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constant("node" as const), ws, id: fc.option(ids), trace }),
  fc.record({ kind: fc.constant("edge" as const), ws, src: ids, dst: ids, trace }),
  fc.record({ kind: fc.constant("learn" as const), ws, parents: fc.array(ids, { maxLength: 3 }), trace }),
  fc.record({ kind: fc.constant("consolidate" as const), ws, trace }),
  fc.record({ kind: fc.constant("audit" as const), ws, trace, eventId: fc.constantFrom("evt_1", "evt_2") }),
  fc.record({ kind: fc.constant("tx" as const), ws, trace, commit: fc.boolean(), id: fc.option(ids) }),
);

let counter = 0;

async function run(set: InMemorySubstrateSet, c: Command): Promise<void> {
  const workspace = WORKSPACES[c.ws]!;
  const context: CallContext = { trace_id: TRACES[c.trace]!, workspace_id: workspace };
  // Every written value names its workspace, so a read can tell where it came from.
  const content = `${workspace}:${counter++}`;
  const ignoreRefusals = (p: Promise<unknown>) => p.catch((e: { code?: string }) => expect(e.code).toMatch(/^(NODE_EXISTS|UNKNOWN_NODE|DUPLICATE_EVENT_ID|TX_CONFLICT)$/));
  switch (c.kind) {
    case "node":
      return void (await ignoreRefusals(set.memory.store_node({ node: c.id ? { id: c.id, content } : { content } }, context)));
    case "edge":
      return void (await ignoreRefusals(set.memory.store_edge({ src: c.src, dst: c.dst, type: workspace }, context)));
    case "learn":
      return void (await set.memory.learn_from_outcome({ outcome: { token: "OutcomeSignal", version: "0.1", trace_id: context.trace_id, action_id: content, status: "success", causal_parent_ids: c.parents } }, context));
    case "consolidate":
      return void (await set.memory.consolidate({}, context));
    case "audit":
      return void (await ignoreRefusals(set.audit.append_event({ event: auditEvent({ event_id: c.eventId, trace_id: context.trace_id, workspace_id: workspace, loop_id: content }) }, context)));
    case "tx": {
      const { tx_id } = await set.memory.begin_transaction({}, context);
      const inTx = { ...context, tx_id };
      await ignoreRefusals(set.memory.store_node({ node: c.id ? { id: c.id, content } : { content } }, inTx));
      await ignoreRefusals(c.commit ? set.memory.commit_transaction({ tx_id }, context) : set.memory.rollback_transaction({ tx_id }, context));
      return;
    }
  }
}

/** `quiet`: no write runs concurrently, so two reads in a row must agree. */
async function checkIsolation(set: InMemorySubstrateSet, quiet = true): Promise<void> {
  for (const workspace of WORKSPACES) {
    const context = { trace_id: TRACES[0]!, workspace_id: workspace };
    const own = (value: unknown) => expect(String(value).startsWith(`${workspace}:`)).toBe(true);
    const { nodes, topology } = await set.memory.retrieve_context({ query: "", k: 1000 }, context);
    nodes.forEach((n) => own(n.content));
    const whole = await set.memory.topology_analyze({}, context);
    for (const edge of [...topology.edges!, ...whole.edges!]) expect(edge.type).toBe(workspace);
    if (quiet) expect(whole.nodes!.map((n) => n.id).sort()).toEqual(nodes.map((n) => n.id).sort());
    for (const m of set.memory.mutations(workspace)) expect(TRACES).toContain(m.trace_id);
    for (const traceId of TRACES) {
      for (const event of await set.audit.query_by_trace({ trace_id: traceId }, context)) {
        expect(event.workspace_id).toBe(workspace);
        own(event.loop_id);
      }
    }
  }
}

describe("multi-tenant isolation", () => {
  it("random sequences of writes across workspaces never show up in another workspace", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 40 }), async (commands) => {
        const set = inMemorySubstrates();
        for (const c of commands) await run(set, c);
        await checkIsolation(set);
      }),
      { numRuns: 150 },
    );
  });

  it("concurrent interleavings of the same writes never leak either", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 30 }), fc.scheduler(), async (commands, s) => {
        const set = inMemorySubstrates();
        const runs = commands.map((c) => s.schedule(Promise.resolve(c)).then((cmd) => run(set, cmd)));
        const checks = [0, 1, 2].map(() => s.schedule(Promise.resolve()).then(() => checkIsolation(set, false)));
        await s.waitAll();
        await Promise.all([...runs, ...checks]);
        await checkIsolation(set);
      }),
      { numRuns: 100 },
    );
  });

  it("the same node id, signature and event id live independently in two workspaces", async () => {
    const set = inMemorySubstrates();
    const a = { trace_id: TRACES[0]!, workspace_id: "ws_a" };
    const b = { trace_id: TRACES[0]!, workspace_id: "ws_b" };
    await set.memory.store_node({ node: { id: "n", content: "A", signature: "s" } }, a);
    const inB = await set.memory.store_node({ node: { id: "n", content: "B", signature: "s" } }, b);
    expect(inB.existing).toBe(false);
    await set.audit.append_event({ event: auditEvent({ trace_id: TRACES[0]!, workspace_id: "ws_a", loop_id: "a.loop" }) }, a);
    await set.audit.append_event({ event: auditEvent({ trace_id: TRACES[0]!, workspace_id: "ws_b", loop_id: "b.loop" }) }, b);
    expect((await set.audit.query_by_trace({ trace_id: TRACES[0]! }, b)).map((e) => e.loop_id)).toEqual(["b.loop"]);
    expect((await set.memory.retrieve_context({ query: "" }, a)).nodes.map((n) => n.content)).toEqual(["A"]);
  });
});
