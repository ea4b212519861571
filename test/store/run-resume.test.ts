/**
 * `pulse run` on a store holding an interrupted iteration: it says what it resumes, continues at
 * the phase after the last committed one with the same trace id, and the trail has no gap.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../../adapters/sqlite/store.js";
import { initSignatures } from "../../src/runtime/signature.js";
import { runBin } from "../cli/run-bin.js";
import { event, tempDir, TRACE } from "./stores.js";

beforeAll(() => initSignatures());

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

describe("pulse run resumes an interrupted iteration", () => {
  it("prints `resumed examples.hello #12 at decide`, finishes it under its trace id, then runs on", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    const store = new SqliteStore(path);
    const at = { loop_id: "examples.hello", workspace_id: "default", trace_id: TRACE };
    // Eleven iterations finished before; the twelfth stopped after its fetch phase committed.
    await store.commit({ ...at, started: { number: 12, entry: "fetch", input: null, started_at: "2026-11-24T12:00:00.000Z" }, counters: { iterations: 12, started: true }, audit: [event(0, { ...at, event_type: "iteration.started", phase_id: null, data: { iteration: 12, entry: "fetch" } })] });
    await store.commit({ ...at, phase: { phase_id: "fetch", signature: "blake3:f", status: "completed", output: { nodes: [], topology: null }, next: "decide" }, audit: [event(1, { ...at, phase_id: "fetch", data: { kind: "retrieve" } })] });
    await store.close();

    const r = runBin("pulse", ["run", "manifests/examples/hello.loop.yaml", "--once", "--no-color", "--store", `sqlite:${path}`]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("resumed examples.hello #12 at decide");
    expect(r.stdout).toMatch(/examples\.hello +#12 \(resumed\) +✓ decide/);
    expect(r.stdout).toMatch(/examples\.hello +#13 \(kickoff\) +✓ fetch/);

    const after = new SqliteStore(path);
    expect(await after.interrupted("examples.hello")).toEqual([]);
    const trail = (await after.queryAudit({ trace_id: TRACE, limit: 100 })).events.map((e) => e.event);
    expect(trail.map((e) => e.seq)).toEqual(trail.map((_, i) => i));
    expect(trail.map((e) => e.event_type).slice(0, 4)).toEqual(["iteration.started", "phase.completed", "iteration.resumed", "phase.routed"]);
    expect(trail.filter((e) => e.phase_id === "fetch")).toHaveLength(1);
    // Its end, then what became of the OutcomeSignal its learn phase sent (no listener in this run).
    expect(trail.slice(-3).map((e) => e.event_type)).toEqual(["iteration.completed", "signal.emitted", "signal.dropped"]);
    expect((await after.verifyAudit()).every((c) => c.ok)).toBe(true);
    expect((await after.counters("examples.hello")).get("default")?.iterations).toBe(13);
    await after.close();
  });

  it("refuses a corrupt store in one line, exit 1, without a stack trace", () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    writeFileSync(path, "not a database\n".repeat(400));
    const r = runBin("pulse", ["run", "manifests/examples/hello.loop.yaml", "--once", "--store", `sqlite:${path}`]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/^pulse run: .*pulse\.db: not a pulse store, or a damaged one/);
    expect(r.stdout).toBe("");
  });
});
