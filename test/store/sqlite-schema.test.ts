/**
 * The SQLite store's schema version 2 (adapters/sqlite/store-schema.ts): a version 1 file is
 * migrated on open and reads the same; the trace index filled in batches still finds every event
 * of a trace, from another process too; the chain checkpoint catches events removed from its end.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../adapters/sqlite/driver.js";
import { migrateComponent } from "../../adapters/sqlite/schema-versions.js";
import { STORE_MIGRATIONS } from "../../adapters/sqlite/store-schema.js";
import { SqliteStore, STORE_SCHEMA_VERSION } from "../../adapters/sqlite/store.js";
import { initSignatures } from "../../src/runtime/signature.js";
import { chainHash, GENESIS } from "../../src/store/audit-chain.js";
import { event, tempDir, TRACE, TRACE2 } from "./stores.js";

beforeAll(() => initSignatures());

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

const base = { loop_id: "examples.hello", workspace_id: "ws_a", trace_id: TRACE };

/** A file as pulse wrote it at store schema version 1: one finished iteration, one interrupted. */
function versionOneFile(path: string): void {
  const db = openDatabase(path);
  migrateComponent(db, path, "store", STORE_MIGRATIONS.slice(0, 1), "pulse 0.0.9");
  const at = "2026-11-24T12:00:00.000Z";
  const it = db.prepare("INSERT INTO iterations (loop_id, workspace_id, trace_id, number, entry, input, cause, started_at, status, closed, finished_at) VALUES ('examples.hello', 'ws_a', ?, ?, 'observe', '{\"q\":1}', NULL, ?, ?, ?, ?)");
  it.run(TRACE2, 1, at, "completed", 1, at);
  it.run(TRACE, 2, at, "running", 0, null);
  db.prepare("INSERT INTO phases (iteration_id, phase_id, signature, status, output, next, committed_at) VALUES (2, 'observe', 'blake3:01', 'completed', '{\"seen\":1}', 'decide', ?)").run(at);
  const idem = db.prepare("INSERT INTO idempotency (workspace_id, signature, loop_id, output, trace_id, created_at) VALUES ('ws_a', ?, 'examples.hello', ?, ?, ?)");
  idem.run("blake3:old", '{"a":1}', TRACE2, "2026-11-24T11:00:00.000Z");
  idem.run("blake3:new", '{"a":2}', TRACE, at);
  const events = [event(0, { trace_id: TRACE2, event_id: `${TRACE2}-0`, event_type: "iteration.completed", phase_id: null }), event(0, { phase_id: "observe" }), event(1)];
  let prev = GENESIS;
  const insert = db.prepare("INSERT INTO audit_events (workspace_id, chain_seq, event_id, event_type, trace_id, loop_id, phase_id, seq, timestamp, signature, data, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  events.forEach((e, i) => {
    const hash = chainHash(prev, e);
    insert.run(e.workspace_id, i, e.event_id, e.event_type, e.trace_id, e.loop_id, e.phase_id, e.seq, e.timestamp, e.signature, JSON.stringify(e.data), prev, hash);
    prev = hash;
  });
  db.prepare("INSERT INTO audit_chains (workspace_id, next_seq, head) VALUES ('ws_a', 3, ?)").run(prev);
  db.prepare("INSERT INTO loops (loop_id, workspace_id, iterations, started, updated_at) VALUES ('examples.hello', 'ws_a', 2, 1, ?)").run(at);
  db.close();
}

describe("SQLite store schema version 2", () => {
  it("migrates a version 1 file on open: the journal, idempotency records, counters and trail read the same, and the chain continues", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    versionOneFile(path);
    const store = new SqliteStore(path);
    const db = openDatabase(path);
    expect(db.prepare("SELECT version FROM pulse_schema_versions WHERE component = 'store'").get()).toEqual({ version: STORE_SCHEMA_VERSION });
    db.close();
    expect(STORE_SCHEMA_VERSION).toBe(4);
    const [interrupted, ...none] = await store.interrupted("examples.hello");
    expect(none).toEqual([]);
    expect(interrupted).toMatchObject({ trace_id: TRACE, number: 2, phases: [{ phase_id: "observe", signature: "blake3:01", status: "completed", output: { seen: 1 }, next: "decide" }], audit_seq: 2 });
    expect(await store.idempotency("examples.hello", 10)).toEqual([
      { workspace_id: "ws_a", signature: "blake3:new", canonical: '{"a":2}' },
      { workspace_id: "ws_a", signature: "blake3:old", canonical: '{"a":1}' },
    ]);
    expect(await store.counters("examples.hello")).toEqual(new Map([["ws_a", { iterations: 2, started: true }]]));
    expect((await store.queryAudit({ trace_id: TRACE, limit: 10 })).events.map((e) => e.event.event_id)).toEqual([`${TRACE}-0`, `${TRACE}-1`]);
    expect(await store.verifyAudit()).toEqual([{ workspace_id: "ws_a", ok: true, events: 3 }]);
    // The resumed iteration goes on in the migrated file: its phase, its idempotency record, its events.
    await store.commit({ ...base, phase: { phase_id: "decide", signature: "blake3:02", status: "completed", output: { d: 1 }, next: null }, idempotency: { workspace_id: "ws_a", signature: "blake3:newest", canonical: '{"d":1}' }, finished: { status: "completed", closed: true }, audit: [event(2), event(3, { event_type: "iteration.completed", phase_id: null })] });
    expect(await store.interrupted("examples.hello")).toEqual([]);
    expect((await store.idempotency("examples.hello", 2)).map((r) => r.signature)).toEqual(["blake3:newest", "blake3:new"]);
    expect((await store.queryAudit({ trace_id: TRACE, limit: 10 })).events.map((e) => e.chain_seq)).toEqual([1, 2, 3, 4]);
    expect(await store.verifyAudit()).toEqual([{ workspace_id: "ws_a", ok: true, events: 5 }]);
    await store.close();
  });

  it("finds every event of a trace, indexed or after the index's watermark, from another process reading the file", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    const store = new SqliteStore(path);
    // More events than one batch of the trace index: the unit that appends them brings it up to date.
    const many = Array.from({ length: 2100 }, (_, i) => event(i));
    await store.commit({ ...base, audit: many });
    const other = { ...base, trace_id: TRACE2 };
    await store.commit({ ...other, audit: [event(0, { trace_id: TRACE2, event_id: `${TRACE2}-0` }), event(1, { trace_id: TRACE2, event_id: `${TRACE2}-1` })] });
    const db = openDatabase(path, { readonly: true });
    expect(db.prepare("SELECT value FROM store_state WHERE key = 'audit_traces_upto'").get()).toEqual({ value: 2100 });
    expect(db.prepare("SELECT count(*) AS n FROM audit_traces WHERE trace_id = ?").get(TRACE2)).toEqual({ n: 0 });
    db.close();
    const reader = new SqliteStore(path, { readonly: true });
    for (const s of [store, reader]) {
      const first = await s.queryAudit({ trace_id: TRACE, limit: 5000 });
      expect(first.events).toHaveLength(2100);
      expect(first.events.every((e) => e.event.trace_id === TRACE)).toBe(true);
      expect((await s.queryAudit({ trace_id: TRACE2, limit: 10 })).events.map((e) => e.event.seq)).toEqual([0, 1]);
      expect((await s.queryAudit({ trace_id: TRACE2, workspace_id: "ws_b", limit: 10 })).events).toEqual([]);
    }
    // The resumed trail continues after the trace's last event, indexed or not.
    await store.commit({ ...other, started: { number: 1, entry: "observe", input: null, started_at: "2026-11-24T12:00:00.000Z" }, audit: [] });
    expect((await reader.interrupted("examples.hello")).map((i) => i.audit_seq)).toEqual([2]);
    await reader.close();
    await store.close();
  });

  it("pulse audit verify names events removed from the end of a chain, behind the triggers", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    let store = new SqliteStore(path);
    await store.commit({ ...base, audit: [event(0), event(1), event(2)] });
    await store.close();
    // A chain that grew past its checkpoint is whole.
    store = new SqliteStore(path);
    await store.commit({ ...base, audit: [event(3)] });
    expect(await store.verifyAudit()).toEqual([{ workspace_id: "ws_a", ok: true, events: 4 }]);
    await store.close();
    const db = openDatabase(path);
    db.exec("DROP TRIGGER audit_events_no_delete");
    db.prepare("DELETE FROM audit_events WHERE chain_seq = 3").run();
    db.close();
    store = new SqliteStore(path);
    expect(await store.verifyAudit()).toEqual([{ workspace_id: "ws_a", ok: false, events: 3, broken: { chain_seq: 3, event_id: null, reason: "the chain should have at least 4 events and has 3: events were removed from its end" } }]);
    await store.close();
  });

  it("the chain checkpoints are append-only too: plain SQL cannot move one back or delete it; the store moves it forward", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    let store = new SqliteStore(path);
    await store.commit({ ...base, audit: [event(0), event(1), event(2)] });
    await store.close();
    const db = openDatabase(path);
    const checkpoint = () => db.prepare("SELECT next_seq, head FROM audit_chains WHERE workspace_id = 'ws_a'").get() as { next_seq: number; head: string };
    const before = checkpoint();
    expect(before.next_seq).toBe(3);
    // Before version 3 these passed, and events cut from the chain's end went unnamed.
    expect(() => db.prepare("UPDATE audit_chains SET next_seq = 2").run()).toThrow(/audit chain checkpoints only move forward \(PULSE §7\.3\): UPDATE refused/);
    expect(() => db.prepare("UPDATE audit_chains SET head = 'blake3:forged'").run()).toThrow(/only move forward/);
    expect(() => db.prepare("DELETE FROM audit_chains").run()).toThrow(/audit chain checkpoints are append-only \(PULSE §7\.3\): DELETE refused/);
    expect(checkpoint()).toEqual(before);
    // The near miss: the store's own checkpoint, further along the chain, is written.
    store = new SqliteStore(path);
    await store.commit({ ...base, audit: [event(3)] });
    await store.close();
    expect(checkpoint().next_seq).toBe(4);
    db.close();
  });
});

describe("SQLite store schema version 2, read by a reader only", () => {
  it("refuses to read a version 1 file without migrating it, naming both versions, and reads it once migrated", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    versionOneFile(path);
    let error: unknown;
    try {
      new SqliteStore(path, { readonly: true });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: "STORE_TOO_OLD" });
    expect((error as Error).message).toMatch(/schema version 1, written by an older pulse; this pulse reads store schema version 4/);
    const db = openDatabase(path);
    expect(db.prepare("SELECT version FROM pulse_schema_versions WHERE component = 'store'").get()).toEqual({ version: 1 });
    db.close();
    await new SqliteStore(path).close();
    const reader = new SqliteStore(path, { readonly: true });
    expect((await reader.interrupted("examples.hello")).map((i) => i.number)).toEqual([2]);
    await reader.close();
  });
});
