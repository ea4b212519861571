/**
 * Issue 15 (d): memory a host's own code writes outside a phase (a direct call to the store's
 * memory substrate, with or without a transaction of its own) is committed to the SQLite file
 * on its own, at once; a phase's transaction still waits for the phase's unit of work.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../../adapters/sqlite/store.js";
import { initSignatures } from "../../src/runtime/signature.js";
import { tempDir, TRACE } from "./stores.js";

beforeAll(() => initSignatures());

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

const ctx = { trace_id: TRACE, workspace_id: "ws_a" };

describe("memory written outside a phase, on the SQLite store", () => {
  it("is in the file at once, written directly or in a transaction of its own; a phase's uncommitted unit is not", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    const store = new SqliteStore(path);
    const memory = store.memory("memory://graph");
    await memory.store_node({ node: { id: "direct", content: "written with no transaction" } }, ctx);
    await memory.store_edge({ src: "direct", dst: "direct", type: "self" }, ctx);
    const { tx_id } = await memory.begin_transaction({}, ctx);
    await memory.store_node({ node: { id: "own_tx", content: "a transaction of its own" } }, { ...ctx, tx_id });
    await memory.commit_transaction({ tx_id }, ctx);
    // A phase's transaction (the runtime marks its commit) waits for the unit that never comes here.
    const { tx_id: phaseTx } = await memory.begin_transaction({}, ctx);
    await memory.store_node({ node: { id: "phase", content: "belongs to a phase" } }, { ...ctx, tx_id: phaseTx });
    await memory.commit_transaction({ tx_id: phaseTx }, { ...ctx, journaled: true });
    // Learning about a node written outside a phase is itself written outside a phase.
    await memory.learn_from_outcome({ outcome: { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: "a1", status: "success", causal_parent_ids: ["direct"] } }, ctx);
    const before = (await memory.retrieve_context({ query: "", k: 10 }, ctx)).nodes.find((n) => n.id === "direct")?.confidence;
    // Killed rather than closed: nothing is flushed on the way out (a second store reads the file).
    const reader = new SqliteStore(path);
    const seen = await reader.memory("memory://graph").retrieve_context({ query: "", k: 10 }, ctx);
    expect(seen.nodes.map((n) => n.id).sort()).toEqual(["direct", "own_tx"]);
    expect(seen.nodes.find((n) => n.id === "direct")?.confidence).toBe(before);
    expect(seen.topology.edges).toEqual([{ src: "direct", dst: "direct", type: "self" }]);
    await reader.close();
    await store.close();
  });
});
