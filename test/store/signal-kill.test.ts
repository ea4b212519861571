/**
 * At-least-once signals that survive a crash: loop s.a signals loop s.b in one process on one
 * SQLite store, killed with SIGKILL at random points and restarted. The signal is written to the
 * outbox with the emitting phase and sent after it committed; the receiver records its id in the
 * inbox with the iteration it starts. Afterwards every emitted signal was processed exactly once:
 * none lost, none run twice.
 */
import { existsSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../../adapters/sqlite/store.js";
import { initSignatures } from "../../src/runtime/signature.js";
import { ROOT } from "../cli/run-bin.js";
import { runChild, tempDir } from "./stores.js";

const CHILD = resolve(import.meta.dirname, "fixtures/signal-pair.mjs");
const TARGET = 60;

beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist/src/embedded.js"))) throw new Error("dist/ is missing: run `npm run build` first (npm test does)");
  await initSignatures();
});

const runChildTo = (path: string, killAfterMs?: number) => runChild(CHILD, [path, String(TARGET)], killAfterMs);

async function check(path: string): Promise<void> {
  const store = new SqliteStore(path);
  try {
    const db = (store as unknown as { db: { prepare(sql: string): { all(...a: unknown[]): unknown[] } } }).db;
    const rows = (sql: string, ...a: unknown[]) => db.prepare(sql).all(...a) as Record<string, unknown>[];
    const senders = rows("SELECT trace_id, status FROM iterations WHERE loop_id = 's.a'");
    expect(senders).toHaveLength(TARGET);
    expect(senders.every((r) => r.status === "completed")).toBe(true);
    // One signal per sender iteration, each settled as delivered.
    const outbox = rows("SELECT event_id, trace_id, status FROM outbox ORDER BY id");
    expect(outbox.map((o) => o.trace_id).sort()).toEqual(senders.map((s) => s.trace_id).sort());
    expect(outbox.every((o) => o.status === "delivered")).toBe(true);
    // Each one received once: in the inbox once, and one completed iteration of s.b for it.
    const inbox = rows("SELECT event_id, trace_id FROM inbox WHERE loop_id = 's.b'");
    expect(inbox.map((i) => i.event_id).sort()).toEqual(outbox.map((o) => o.event_id).sort());
    const receivers = rows("SELECT trace_id, status FROM iterations WHERE loop_id = 's.b'");
    expect(receivers).toHaveLength(TARGET);
    expect(receivers.every((r) => r.status === "completed")).toBe(true);
    expect(new Set(inbox.map((i) => i.trace_id))).toEqual(new Set(receivers.map((r) => r.trace_id)));
    // The receiver's side effect happened once per signal.
    const memory = store.memory("memory://s.b");
    const nodes = (await memory.retrieve_context({ query: { type: "effect:s.b" }, k: TARGET * 2 }, { trace_id: "0".repeat(31) + "1", workspace_id: "default" })).nodes;
    expect(nodes.map((n) => n.content).sort()).toEqual(receivers.map((r) => r.trace_id).sort());
    expect((await store.verifyAudit()).every((c) => c.ok)).toBe(true);
  } finally {
    await store.close();
  }
}

describe("signals through the outbox and the inbox, under SIGKILL", () => {
  it("a run never killed delivers every signal once (the check's baseline)", async () => {
    const dir = tempDir();
    try {
      const path = join(dir, "pulse.db");
      const r = await runChildTo(path);
      expect(r.code, r.out).toBe(0);
      await check(path);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("after kills at random points of sender and receiver, no signal is lost and none is processed twice", async () => {
    let killedMidway = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 150 }), { minLength: 1, maxLength: 3 }), async (kills) => {
        const dir = tempDir();
        try {
          const path = join(dir, "pulse.db");
          for (const ms of kills) {
            const r = await runChildTo(path, ms);
            if (r.killed) killedMidway++;
            else expect(r.code, r.out).toBe(0);
          }
          const last = await runChildTo(path);
          expect(last.code, last.out).toBe(0);
          await check(path);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 10 },
    );
    expect(killedMidway).toBeGreaterThan(0);
  }, 150_000);
});
