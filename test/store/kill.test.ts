/**
 * Crash safety, tested the way it happens: a child process running a loop on a SQLite store is
 * killed with SIGKILL at random points (between phases, inside a handler, inside a transaction),
 * possibly several times, then run to completion. Afterwards every iteration completed exactly
 * once, no committed phase ran twice, every act's side effect (a memory node, counted through the
 * memory substrate) is there exactly once, and the audit chain verifies.
 */
import { spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../../adapters/sqlite/store.js";
import { initSignatures } from "../../src/runtime/signature.js";
import { ROOT } from "../cli/run-bin.js";
import { tempDir } from "./stores.js";

const CHILD = resolve(import.meta.dirname, "fixtures/crashy-loop.mjs");
const TARGET = 120;

beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist/src/embedded.js"))) throw new Error("dist/ is missing: run `npm run build` first (npm test does)");
  await initSignatures();
});

/** Runs the child; kills it after `killAfterMs` unless it ends first. Resolves with how it ended. */
function runChild(path: string, killAfterMs?: number): Promise<{ killed: boolean; code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [CHILD, path, String(TARGET)], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    let killed = false;
    // Counted from the child's first line, so the kill lands while it works, not while node starts.
    if (killAfterMs !== undefined) {
      child.stdout.once("data", () =>
        setTimeout(() => {
          killed = child.kill("SIGKILL");
        }, killAfterMs),
      );
    }
    child.on("exit", (code) => done({ killed, code, out }));
  });
}

async function check(path: string): Promise<void> {
  const store = new SqliteStore(path);
  try {
    const db = (store as unknown as { db: { prepare(sql: string): { all(...a: unknown[]): unknown[] } } }).db;
    const iterations = db.prepare("SELECT id, number, trace_id, status FROM iterations ORDER BY number").all() as { id: number; number: number; trace_id: string; status: string }[];
    expect(iterations.map((i) => i.number)).toEqual(Array.from({ length: TARGET }, (_, i) => i + 1));
    expect(iterations.every((i) => i.status === "completed")).toBe(true);
    // Each committed phase once, in order, per iteration.
    const phases = db.prepare("SELECT iteration_id, group_concat(phase_id, ',') AS ids FROM (SELECT iteration_id, phase_id FROM phases ORDER BY id) GROUP BY iteration_id").all() as { iteration_id: number; ids: string }[];
    expect(phases).toHaveLength(TARGET);
    for (const p of phases) expect(p.ids).toBe("fetch,decide,apply,learn");
    // Each act's side effect exactly once: one node per iteration, named after its trace.
    const memory = store.memory("memory://crash");
    const nodes = (await memory.retrieve_context({ query: { type: "effect" }, k: TARGET * 2 }, { trace_id: "0".repeat(31) + "1", workspace_id: "default" })).nodes;
    expect(nodes.map((n) => n.content).sort()).toEqual(iterations.map((i) => i.trace_id).sort());
    // The trail: one gap-free sequence per iteration, and every chain verifies.
    expect(await store.verifyAudit()).toEqual([{ workspace_id: "default", ok: true, events: expect.any(Number) }]);
    const seqs = db.prepare("SELECT trace_id, count(*) AS n, max(seq) AS top, sum(event_type = 'iteration.completed') AS ends FROM audit_events GROUP BY trace_id").all() as { n: number; top: number; ends: number }[];
    expect(seqs).toHaveLength(TARGET);
    for (const s of seqs) {
      expect(s.top).toBe(s.n - 1);
      expect(s.ends).toBe(1);
    }
    expect(await store.interrupted("crash.loop")).toEqual([]);
  } finally {
    await store.close();
  }
}

describe("SIGKILL at random points", () => {
  it("a run that is never killed leaves the same complete record (the check's baseline)", async () => {
    const dir = tempDir();
    try {
      const path = join(dir, "pulse.db");
      const r = await runChild(path);
      expect(r.out).toContain("done");
      await check(path);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("after any sequence of kills and restarts, every iteration completes exactly once and no committed phase repeats", async () => {
    let resumed = 0;
    let killedMidway = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 120 }), { minLength: 1, maxLength: 3 }), async (kills) => {
        const dir = tempDir();
        try {
          const path = join(dir, "pulse.db");
          for (const ms of kills) {
            const r = await runChild(path, ms);
            if (r.killed) killedMidway++;
            else expect(r.code, r.out).toBe(0);
          }
          const last = await runChild(path);
          expect(last.code, last.out).toBe(0);
          if (last.out.includes("resuming")) resumed++;
          await check(path);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 12 },
    );
    // The property means something only if kills did land mid-run and iterations were resumed.
    expect(killedMidway).toBeGreaterThan(0);
    expect(resumed).toBeGreaterThan(0);
  }, 120_000);
});
