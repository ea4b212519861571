/**
 * What only the SQLite file adds to the contract: the file itself refuses audit edits (triggers),
 * a hand-edited trail is detected, versions are checked, and a corrupt, newer or unwritable file
 * is refused with one line while what was committed stays.
 */
import { chmodSync, copyFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../adapters/sqlite/driver.js";
import { SqliteStore, STORE_SCHEMA_VERSION } from "../../adapters/sqlite/store.js";
import { openStore } from "../../adapters/store.js";
import { initSignatures } from "../../src/runtime/signature.js";
import { StoreError } from "../../src/store/contracts.js";
import { event, tempDir, TRACE } from "./stores.js";

beforeAll(() => initSignatures());

const base = { loop_id: "examples.hello", workspace_id: "ws_a", trace_id: TRACE };
let dir: string;
afterEach(() => {
  if (dir) {
    chmodSync(dir, 0o755);
    rmSync(dir, { recursive: true, force: true });
    dir = "";
  }
});

async function seeded(): Promise<string> {
  dir = tempDir();
  const path = join(dir, "pulse.db");
  const store = new SqliteStore(path);
  await store.commit({ ...base, audit: [event(0), event(1), event(2)], counters: { iterations: 3, started: true } });
  await store.close();
  return path;
}

async function refusal(fn: () => unknown): Promise<StoreError> {
  try {
    await fn();
  } catch (error) {
    expect(error).toBeInstanceOf(StoreError);
    return error as StoreError;
  }
  throw new Error("expected a StoreError");
}

describe("SQLite store file", () => {
  it("opens in WAL with synchronous=NORMAL and a busy timeout, and records its schema version", async () => {
    const path = await seeded();
    const store = new SqliteStore(path);
    const db = openDatabase(path);
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(db.pragma("synchronous", { simple: true })).toBe(1);
    expect(db.pragma("busy_timeout", { simple: true })).toBeGreaterThan(0);
    expect(db.prepare("SELECT component, version FROM pulse_schema_versions").all()).toEqual([{ component: "store", version: STORE_SCHEMA_VERSION }]);
    db.close();
    expect((await store.info()).counts.audit_events).toBe(3);
    await store.close();
  });

  it("refuses UPDATE and DELETE of audit events in the file itself, and still takes an INSERT", async () => {
    const path = await seeded();
    const db = openDatabase(path);
    expect(() => db.prepare("UPDATE audit_events SET event_type = 'forged' WHERE chain_seq = 1").run()).toThrow(/append-only.*UPDATE refused/);
    expect(() => db.prepare("DELETE FROM audit_events WHERE chain_seq = 2").run()).toThrow(/append-only.*DELETE refused/);
    db.close();
    const store = new SqliteStore(path);
    await store.commit({ ...base, audit: [event(3)] });
    expect(await store.verifyAudit()).toEqual([{ workspace_id: "ws_a", ok: true, events: 4 }]);
    await store.close();
  });

  it("detects a trail edited by hand behind the triggers: verify names the first broken link", async () => {
    const path = await seeded();
    const db = openDatabase(path);
    db.exec("DROP TRIGGER audit_events_no_update");
    db.prepare(`UPDATE audit_events SET data = '{"n":99}' WHERE chain_seq = 1`).run();
    db.close();
    const store = new SqliteStore(path);
    expect(await store.verifyAudit()).toEqual([{ workspace_id: "ws_a", ok: false, events: 3, broken: { chain_seq: 1, event_id: `${TRACE}-1`, reason: "its content does not match its hash: it was changed after it was appended" } }]);
    await store.close();
  });

  it("refuses a file written by a newer pulse, naming both versions, and leaves it untouched", async () => {
    const path = await seeded();
    const db = openDatabase(path);
    db.prepare("UPDATE pulse_schema_versions SET version = ? WHERE component = 'store'").run(STORE_SCHEMA_VERSION + 1);
    db.close();
    const e = await refusal(() => new SqliteStore(path));
    expect(e.code).toBe("STORE_TOO_NEW");
    expect(e.message).toContain(`schema version ${STORE_SCHEMA_VERSION + 1}`);
    expect(e.message).toContain(`up to ${STORE_SCHEMA_VERSION}`);
    // Another component's version (the session records) does not concern the store.
    const again = openDatabase(path);
    again.prepare("UPDATE pulse_schema_versions SET version = ? WHERE component = 'store'").run(STORE_SCHEMA_VERSION);
    again.prepare("INSERT INTO pulse_schema_versions VALUES ('sessions', 99, 'pulse 9')").run();
    again.close();
    const store = new SqliteStore(path);
    expect((await store.counters("examples.hello")).get("ws_a")).toEqual({ iterations: 3, started: true });
    await store.close();
  });

  it("refuses a corrupt file in one line, without writing to it", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    writeFileSync(path, "this is not a database, but somebody's notes\n".repeat(200));
    const e = await refusal(() => openStore(`sqlite:${path}`));
    expect(e.code).toBe("STORE_CORRUPT");
    expect(e.message).toMatch(/not a pulse store, or a damaged one/);
    expect(e.message.split("\n")).toHaveLength(1);
  });

  it("detects a store damaged in the middle and keeps the good copy usable", async () => {
    const path = await seeded();
    const copy = join(dir, "backup.db");
    copyFileSync(path, copy);
    const bytes = Buffer.alloc(4096, 0x41);
    const { openSync, writeSync, closeSync } = await import("node:fs");
    const fd = openSync(path, "r+");
    writeSync(fd, bytes, 0, bytes.length, 0);
    closeSync(fd);
    expect((await refusal(() => new SqliteStore(path))).code).toBe("STORE_CORRUPT");
    const store = new SqliteStore(copy);
    expect(await store.verifyAudit()).toEqual([{ workspace_id: "ws_a", ok: true, events: 3 }]);
    await store.close();
  });

  it("keeps what was committed when the directory becomes read-only, and reports a write as refused", async () => {
    const path = await seeded();
    const store = new SqliteStore(path);
    chmodSync(path, 0o444);
    for (const f of ["-wal", "-shm"]) {
      try {
        chmodSync(path + f, 0o444);
      } catch {
        // not there
      }
    }
    chmodSync(dir, 0o555);
    // Root writes anyway (test/cli/store-cli.test.ts runs pulse as another user for the refusal).
    const write = store.commit({ ...base, audit: [event(3)] });
    if (process.getuid?.() !== 0) await expect(write).rejects.toBeInstanceOf(StoreError);
    else await write;
    await store.close();
    chmodSync(dir, 0o755);
    chmodSync(path, 0o644);
    const reopened = new SqliteStore(path);
    expect((await reopened.verifyAudit())[0]).toMatchObject({ ok: true });
    expect((await reopened.queryAudit({ limit: 10 })).events.length).toBeGreaterThanOrEqual(3);
    await reopened.close();
  });

  it("extends one chain from two stores on one file, and after a rolled-back unit, without a gap or a fork", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    const a = new SqliteStore(path);
    const b = new SqliteStore(path);
    // Each store keeps the head it wrote; a commit by the other must send it back to the file.
    await a.commit({ ...base, audit: [event(0), event(1)] });
    await b.commit({ ...base, audit: [event(2)] });
    await a.commit({ ...base, audit: [event(3)] });
    await a.commit({ ...base, audit: [event(4)] });
    // The audit rows are written, then the outbox row refuses its envelope: the unit rolls back.
    const bad = a.commit({ ...base, audit: [event(5)], outbox: [{ event_id: "e1", connection_id: "c1", to_loop: "examples.other", envelope: { n: 1n } }] });
    await expect(bad).rejects.toBeInstanceOf(StoreError);
    await a.commit({ ...base, audit: [event(5)] });
    await b.commit({ ...base, audit: [event(6)] });
    for (const store of [a, b]) expect(await store.verifyAudit()).toEqual([{ workspace_id: "ws_a", ok: true, events: 7 }]);
    const page = await b.queryAudit({ limit: 10 });
    expect(page.events.map((e) => [e.chain_seq, e.event.seq])).toEqual([0, 1, 2, 3, 4, 5, 6].map((n) => [n, n]));
    await a.close();
    await b.close();
  });

  it("says what a bad --store spec looks like", async () => {
    const e = await refusal(() => openStore("postgres:x"));
    expect(e.message).toContain("--store takes sqlite:PATH, a file path or memory:");
    expect(e.message).toContain('not "postgres:x"');
    await (await openStore("memory:")).close();
  });
});
