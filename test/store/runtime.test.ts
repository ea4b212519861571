/**
 * The runtime on a Store: each phase commits as one unit (journal, idempotency record, memory,
 * audit events), and a runtime opened on the same file continues where the last one stopped.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../../adapters/sqlite/store.js";
import { createRuntime } from "../../src/embedded.js";
import { initSignatures } from "../../src/runtime/signature.js";
import type { Store } from "../../src/store/contracts.js";
import { baseManifest } from "../helpers/manifests.js";
import { tempDir } from "./stores.js";

beforeAll(() => initSignatures());

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

function manifest() {
  const m = baseManifest();
  m.phases[0].idempotent = true;
  m.phases[0].signature = "hash(query)";
  return m;
}

/** A runtime on the store whose act phase stores a node and counts its executions. */
async function runtimeOn(store: Store, counts: Record<string, number>) {
  const runtime = await createRuntime({ store });
  const count = (id: string) => (counts[id] = (counts[id] ?? 0) + 1);
  runtime.handle("fetch", async ({ input, substrates }) => (count("fetch"), { query: (input as { query?: string })?.query ?? null, seen: (await substrates.memory.retrieve_context({ query: "" })).nodes.length }));
  runtime.handle("decide", async () => (count("decide"), { decision: "go" }));
  runtime.handle("apply", async ({ substrates, signature }) => {
    count("apply");
    const { node_id } = await substrates.memory.store_node({ node: { content: `step ${counts.apply}` } });
    return { action_id: signature, node_id, causal_parent_ids: [] };
  });
  runtime.handle("learn", async () => (count("learn"), { learned: true }));
  const loop = await runtime.load(manifest());
  return { runtime, loop };
}

describe("the runtime on a SQLite store", () => {
  it("carries iteration numbers, memory and idempotency records over to a runtime opened on the same file", async () => {
    dir = tempDir();
    mkdirSync(dir, { recursive: true });
    const path = join(dir, "pulse.db");
    const counts: Record<string, number> = {};
    let store: Store = new SqliteStore(path);
    let { loop } = await runtimeOn(store, counts);
    const first = await loop.runIteration({ workspace: "ws_a", input: { query: "q1" } });
    const second = await loop.runIteration({ workspace: "ws_a", input: { query: "q1" } });
    expect([first.status, second.status], JSON.stringify(first.error)).toEqual(["completed", "completed"]);
    expect([first.iteration, second.iteration]).toEqual([1, 2]);
    await store.close();

    store = new SqliteStore(path);
    ({ loop } = await runtimeOn(store, counts));
    const third = await loop.runIteration({ workspace: "ws_a", input: { query: "q1" } });
    expect(third.iteration).toBe(3);
    // fetch read memory after the last write, so it runs again; its output sees both nodes.
    expect(third.phases.map((p) => p.status)).toEqual(["completed", "completed", "completed", "completed"]);
    const outputs = third.phases;
    expect(outputs[0]?.phase_id).toBe("fetch");
    expect(counts.apply).toBe(3);
    const reports = await store.verifyAudit();
    expect(reports).toEqual([{ workspace_id: "ws_a", ok: true, events: expect.any(Number) }]);
    const trail = await store.queryAudit({ trace_id: third.trace_id, limit: 100 });
    expect(trail.events.map((e) => e.event.event_type)).toEqual(["iteration.started", "phase.completed", "phase.routed", "substrate.mutated", "phase.completed", "phase.completed", "iteration.completed"]);
    expect(trail.events.map((e) => e.event.seq)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    const memory = store.memory("memory://m");
    const nodes = (await memory.retrieve_context({ query: "" }, { trace_id: third.trace_id, workspace_id: "ws_a" })).nodes;
    expect(nodes.map((n) => n.content).sort()).toEqual(["step 1", "step 2", "step 3"]);
    expect(await store.interrupted("test.loop")).toEqual([]);
    await store.close();
  });

  it("replays an idempotent phase committed in an earlier run instead of running it again", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    const counts: Record<string, number> = {};
    let store: Store = new SqliteStore(path);
    const m = manifest();
    m.phases[1].idempotent = true;
    const make = async (s: Store) => {
      const runtime = await createRuntime({ store: s });
      runtime.handle("fetch", async () => ((counts.fetch = (counts.fetch ?? 0) + 1), { fixed: true }));
      runtime.handle("decide", async () => ((counts.decide = (counts.decide ?? 0) + 1), { decision: "go", at: counts.decide }));
      runtime.handle("apply", async ({ signature }) => ({ action_id: signature, causal_parent_ids: [] }));
      runtime.handle("learn", async () => ({ ok: 1 }));
      return runtime.load(m);
    };
    let loop = await make(store);
    const a = await loop.runIteration({ workspace: "ws_a", input: { query: "x" } });
    await store.close();
    store = new SqliteStore(path);
    loop = await make(store);
    const b = await loop.runIteration({ workspace: "ws_a", input: { query: "x" } });
    expect(a.phases[1]?.status).toBe("completed");
    expect(b.phases[1]?.status).toBe("replayed");
    expect(counts.decide).toBe(1);
    await store.close();
  });
});
