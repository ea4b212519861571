import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpSubstrates } from "../../adapters/http/client.js";
import { createSubstrateServer } from "../../adapters/http/server.js";
import type { SubstrateServer } from "../../adapters/http/server.js";
import { inMemorySubstrates } from "../../adapters/memory/index.js";
import { SUBSTRATE_OPERATIONS } from "../../src/substrates/contracts.js";
import type { SubstrateSet } from "../../src/substrates/contracts.js";
import { outcome, SCRIPT, SCRIPT_OPTIONS as options, ws } from "./script.js";
import type { Call } from "./script.js";

let server: SubstrateServer;
let remote: SubstrateSet;

beforeAll(async () => {
  server = createSubstrateServer(inMemorySubstrates(options));
  remote = httpSubstrates((await server.listen()).url);
});
afterAll(() => server.close());

describe("HTTP client against the server over loopback", () => {
  it("the script covers every operation of every slot", () => {
    const covered = new Set(SCRIPT.map((c) => `${c.slot}.${c.operation}`));
    const all = Object.entries(SUBSTRATE_OPERATIONS).flatMap(([slot, ops]) => ops.map((op) => `${slot}.${op}`));
    expect(all.filter((op) => !covered.has(op))).toEqual([]);
  });

  it("gives the same answers and refusals as calling the in-memory adapters directly", async () => {
    const local = inMemorySubstrates(options);
    for (const call of SCRIPT) {
      const direct = await outcome(local, call);
      const overHttp = await outcome(remote, call);
      expect(overHttp, `${call.slot}.${call.operation} ${JSON.stringify(call.args)}`).toEqual(direct);
    }
  });

  it("agrees with the in-memory adapters on random call sequences", async () => {
    const id = fc.constantFrom("node_1", "node_2", "n", "m");
    const calls: fc.Arbitrary<Call> = fc.oneof(
      fc.record({ slot: fc.constant("memory" as const), operation: fc.constant("store_node"), args: fc.record({ node: fc.record({ id: fc.option(id, { nil: undefined }), content: fc.constantFrom("x", "y", { k: [1] }), signature: fc.option(fc.constantFrom("s1", "s2"), { nil: undefined }) }, { requiredKeys: [] }) }), ctx: fc.constant(ws("r")) }),
      fc.record({ slot: fc.constant("memory" as const), operation: fc.constant("store_edge"), args: fc.record({ src: id, dst: id, type: fc.constantFrom("a", "b") }), ctx: fc.constant(ws("r")) }),
      fc.record({ slot: fc.constant("memory" as const), operation: fc.constant("learn_from_outcome"), args: fc.record({ outcome: fc.record({ action_id: fc.constantFrom("a1", "a2"), status: fc.constantFrom("success", "failure", "partial", "timeout"), causal_parent_ids: fc.array(id, { maxLength: 3 }) }) }), ctx: fc.constant(ws("r")) }),
      fc.record({ slot: fc.constant("memory" as const), operation: fc.constantFrom("consolidate", "topology_analyze"), args: fc.constant({}), ctx: fc.constant(ws("r")) }),
      fc.record({ slot: fc.constant("memory" as const), operation: fc.constant("retrieve_context"), args: fc.record({ query: fc.constantFrom("", "X", "k", undefined), k: fc.integer({ min: 0, max: 3 }) }), ctx: fc.constant(ws("r")) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(calls, { maxLength: 15 }), async (sequence) => {
        const local = inMemorySubstrates(options);
        const fresh = createSubstrateServer(inMemorySubstrates(options));
        const client = httpSubstrates((await fresh.listen()).url);
        try {
          for (const call of sequence) expect(await outcome(client, call)).toEqual(await outcome(local, call));
        } finally {
          await fresh.close();
        }
      }),
      { numRuns: 40 },
    );
  });
});
