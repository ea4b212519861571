/**
 * Store schema version 4: an iteration's start does not rewrite its loop's counters row. The
 * counters a restart reads are `loops` (folded up to the watermark of finished iterations) and
 * the iteration rows after it. These check that what a restart reads is what was committed, on
 * both sides of a watermark move, and that the start of an iteration writes no counters row.
 */
import { join } from "node:path";
import { rmSync } from "node:fs";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { openDatabase } from "../../adapters/sqlite/driver.js";
import { SqliteStore } from "../../adapters/sqlite/store.js";
import { initSignatures } from "../../src/runtime/signature.js";
import { tempDir } from "./stores.js";

beforeAll(() => initSignatures());

const at = { loop_id: "examples.hello", workspace_id: "ws_a" };
const traceOf = (n: number, ws = 0) => (ws * 1_000_000 + n).toString(16).padStart(32, "0");
let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

/** Commits an iteration's start (with its first phase) and, unless `running`, its end, as the runtime does. */
async function iteration(store: SqliteStore, n: number, started: boolean, running = false, workspace_id = "ws_a") {
  const trace_id = traceOf(n, workspace_id === "ws_a" ? 0 : 1);
  const head = { ...at, workspace_id, trace_id };
  await store.commit({ ...head, started: { number: n, entry: "sense", input: { n }, started_at: "2026-11-27T00:00:00.000Z" }, counters: { iterations: n, started }, phase: { phase_id: "sense", signature: `blake3:${n}`, status: "completed", output: { n }, next: running ? "decide" : null }, audit: [] });
  if (!running) await store.commit({ ...head, finished: { status: "completed", closed: true }, counters: { iterations: n, started: true }, audit: [] });
}

describe("SQLite store counters (schema version 4)", () => {
  it("an iteration's start and end write no counters row once the loop has started; a restart still reads the last number", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    let store = new SqliteStore(path);
    await iteration(store, 1, false);
    await iteration(store, 2, true);
    await iteration(store, 3, true);
    await store.close();
    const db = openDatabase(path, { readonly: true });
    // No iteration's counters were written: the rows say as much (the first iteration started the loop).
    expect(db.prepare("SELECT count(*) AS n FROM loops").get()).toEqual({ n: 0 });
    db.close();
    store = new SqliteStore(path);
    expect(await store.counters(at.loop_id)).toEqual(new Map([["ws_a", { iterations: 3, started: true }]]));
    await store.close();
  });

  it("a first iteration still running reads back as not started (the loop's entry, not its re-entry)", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    let store = new SqliteStore(path);
    await iteration(store, 1, false, true);
    await store.close();
    store = new SqliteStore(path);
    expect(await store.counters(at.loop_id)).toEqual(new Map([["ws_a", { iterations: 1, started: false }]]));
    // The near miss: once it ends, the loop has started.
    await store.commit({ ...at, trace_id: traceOf(1), finished: { status: "completed", closed: true }, counters: { iterations: 1, started: true }, audit: [] });
    expect(await store.counters(at.loop_id)).toEqual(new Map([["ws_a", { iterations: 1, started: true }]]));
    await store.close();
  });

  it("counters survive the watermark's move past 1,024 ended iterations (folded into loops) and a reopen (which moves it too)", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    let store = new SqliteStore(path);
    for (let n = 1; n <= 1030; n++) await iteration(store, n, n > 1);
    await iteration(store, 7, true, false, "ws_b");
    await iteration(store, 1031, true, true);
    expect(await store.counters(at.loop_id)).toEqual(new Map([["ws_a", { iterations: 1031, started: true }], ["ws_b", { iterations: 7, started: true }]]));
    await store.close();
    const db = openDatabase(path, { readonly: true });
    const folded = db.prepare("SELECT iterations, started FROM loops WHERE loop_id = ? AND workspace_id = 'ws_a'").get(at.loop_id) as { iterations: number; started: number };
    expect(folded.started).toBe(1);
    expect(folded.iterations).toBeGreaterThanOrEqual(1024);
    expect(folded.iterations).toBeLessThan(1031);
    db.close();
    store = new SqliteStore(path);
    expect(await store.counters(at.loop_id)).toEqual(new Map([["ws_a", { iterations: 1031, started: true }], ["ws_b", { iterations: 7, started: true }]]));
    expect((await store.interrupted(at.loop_id)).map((i) => i.number)).toEqual([1031]);
    await store.close();
  });

  it("a counters row the journal does not imply is still written (a number ahead of the iteration's row)", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    let store = new SqliteStore(path);
    await iteration(store, 1, false);
    // A unit whose counters run ahead of any row (as a host may commit): kept as written.
    await store.commit({ ...at, trace_id: traceOf(1), counters: { iterations: 9, started: true }, audit: [] });
    await store.close();
    store = new SqliteStore(path);
    expect(await store.counters(at.loop_id)).toEqual(new Map([["ws_a", { iterations: 9, started: true }]]));
    await store.close();
  });

  it("reads back the highest number and whether any iteration ended, whatever the order of ends and restarts (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ running: fc.boolean(), reopen: fc.boolean() }), { minLength: 1, maxLength: 12 }), async (steps) => {
        dir = tempDir();
        const path = join(dir, "pulse.db");
        let store = new SqliteStore(path);
        let ended = false;
        let n = 0;
        for (const step of steps) {
          n++;
          await iteration(store, n, ended, step.running);
          if (!step.running) ended = true;
          if (step.reopen) {
            await store.close();
            store = new SqliteStore(path);
          }
        }
        expect(await store.counters(at.loop_id)).toEqual(new Map([["ws_a", { iterations: n, started: ended }]]));
        await store.close();
        rmSync(dir, { recursive: true, force: true });
        dir = "";
      }),
      { numRuns: 25 },
    );
  });
});
