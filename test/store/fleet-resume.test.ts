/**
 * A host in a fleet does not resume what its store shows as interrupted: on a store the fleet
 * shares, that iteration may be running on a live host right now. Without a fleet it resumes.
 */
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../adapters/memory/store.js";
import { createHost } from "../../src/embedded.js";
import type { FleetGate } from "../../src/fleet/contracts.js";
import type { HostEvent } from "../../src/host/host.js";
import { initSignatures } from "../../src/runtime/signature.js";
import { baseManifest } from "../helpers/manifests.js";
import { event, TRACE } from "./stores.js";

const gate: FleetGate = { cadenceOrigin: 0, admit: async () => true, finished: async () => undefined };

/** A store whose test.loop #3 committed fetch and stopped before decide. */
async function interruptedStore(): Promise<MemoryStore> {
  await initSignatures();
  const store = new MemoryStore();
  const at = { loop_id: "test.loop", workspace_id: "default", trace_id: TRACE };
  await store.commit({ ...at, started: { number: 3, entry: "fetch", input: null, started_at: "2026-11-24T12:00:00.000Z" }, counters: { iterations: 3, started: true }, audit: [event(0, { ...at, event_type: "iteration.started", phase_id: null, data: { iteration: 3 } })] });
  await store.commit({ ...at, phase: { phase_id: "fetch", signature: "blake3:f", status: "completed", output: { query: null }, next: "decide" }, audit: [event(1, { ...at, phase_id: "fetch" })] });
  return store;
}

async function startOn(store: MemoryStore, fleet?: FleetGate): Promise<{ notes: string[]; stop: () => Promise<unknown> }> {
  const host = await createHost({ store, ...(fleet ? { fleet } : {}) });
  const notes: string[] = [];
  host.subscribe((e: HostEvent) => {
    if (e.type === "host.note") notes.push(e.message);
  });
  await host.load(baseManifest());
  host.start();
  await new Promise((r) => setTimeout(r, 200));
  return { notes, stop: () => host.stop({ timeoutMs: 2000 }) };
}

describe("resume on a store a fleet may share", () => {
  it("in a fleet: the interrupted iteration is left to the lease holder's takeover, and the host says so", async () => {
    const store = await interruptedStore();
    const { notes, stop } = await startOn(store, gate);
    await stop();
    expect(notes.some((n) => n.startsWith("not resumed here: test.loop #3 at decide"))).toBe(true);
    expect((await store.interrupted("test.loop")).map((i) => i.trace_id)).toEqual([TRACE]);
  });

  it("without a fleet: the same store's iteration is resumed at decide and finished", async () => {
    const store = await interruptedStore();
    const { notes, stop } = await startOn(store);
    await stop();
    expect(notes).toContain("resumed test.loop #3 at decide");
    expect(await store.interrupted("test.loop")).toEqual([]);
  });
});
