/**
 * Cadences fire once per fleet, even when the host dies in the one round trip between its
 * iteration's end and its finishTick: real host processes (fixtures/takeover-host.mjs) on one
 * PostgreSQL schema and NATS system.
 *
 *   1. h1 runs alone; its 3rd periodic iteration's end commits, then its finishTick is held for
 *      good (HOLD_FINISH_AT) and h1 is SIGKILLed there.
 *   2. Near miss: a tick h1 claimed and never started (killed between claim and start; written
 *      here as h1's claim) must still run again on the survivor.
 *   3. h2 takes the lease over: it does not run the held tick again (the end's commit finished
 *      it), it runs the never-started one once, and goes on.
 */
import { resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { initSignatures } from "../../src/runtime/signature.js";
import { describeWith } from "../helpers/services.js";
import { until } from "../transports/contract.js";
import { both, startHost, takeoverWorld, type HostProcess } from "./processes.js";

const HOST = resolve(import.meta.dirname, "fixtures/takeover-host.mjs");
const TTL_MS = 2_000;
const INTERVAL_MS = 400;

beforeAll(() => initSignatures());
describeWith(both, "a tick whose iteration ended, its host killed before finishTick", () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => undefined);
  });

  it("is not run again by the lease's next holder; a claimed tick whose iteration never started is run again, once", async () => {
    const { runs, pg, env } = await takeoverWorld(cleanup, INTERVAL_MS, TTL_MS);
    const start = (name: string, extra: Record<string, string> = {}): HostProcess => startHost(name, [HOST], { ...env(name), ...extra }, cleanup);
    const notes = (h: HostProcess) => h.records.filter((r) => r.type === "note").map((r) => String(r.message));

    // 1. h1: the 3rd periodic iteration ends (committed), its finishTick never goes out; SIGKILL.
    const h1 = start("h1", { HOLD_FINISH_AT: "3" });
    await until("h1 to hold its 3rd tick's finish", () => h1.records.some((r) => r.type === "finish-held"), 60_000);
    h1.child.kill("SIGKILL");
    await h1.exited;
    const held = Date.parse(h1.records.find((r) => r.type === "finish-held")!.scheduled_at as string);
    const tickRow = async (at: number) => (await pg.admin(`SELECT holder, finished_at IS NOT NULL AS finished FROM "${pg.schema}".ticks WHERE loop_id = 'fleet.worker' AND scheduled_at = $1`, [at])).rows[0];
    // The end's own transaction finished the tick (h1's finishTick never ran).
    expect(await tickRow(held)).toEqual({ holder: "h1", finished: true });

    // 2. The near miss: a tick on the grid before h1's first, claimed by h1, never journaled.
    const orphan = held - 100 * INTERVAL_MS;
    await pg.admin(`INSERT INTO "${pg.schema}".ticks (loop_id, workspace_id, scheduled_at, holder) VALUES ('fleet.worker', 'default', $1, 'h1')`, [orphan]);

    // 3. h2 takes over, runs the orphan tick, and goes on.
    const h2 = start("h2");
    const orphanIso = new Date(orphan).toISOString();
    await until("h2 to run the never-started tick", () => notes(h2).some((m) => m.includes(`tick ${orphanIso} was left unfinished by h1: running it here`)), 30_000);
    await until("two more iterations on h2", () => h2.records.filter((r) => r.type === "iteration.finished" && r.status === "completed").length >= 3, 30_000);
    h2.child.kill("SIGINT");
    expect(await h2.exited).toBe(0);
    expect(notes(h2).filter((m) => m.includes(new Date(held).toISOString()))).toEqual([]);

    // The journal: one iteration per tick (the held one and the orphan included), each completed, each phase run once.
    const its = (await pg.admin(`SELECT number, trace_id, status, cause FROM "${pg.schema}".iterations WHERE loop_id = 'fleet.worker' ORDER BY number`)).rows as { number: number; trace_id: string; status: string; cause: string }[];
    const tickOf = (cause: string) => Date.parse(JSON.parse(cause).scheduled_at as string);
    expect(its.map((i) => i.number)).toEqual(its.map((_, i) => i + 1));
    expect(its.every((i) => i.status === "completed")).toBe(true);
    const ticks = its.map((i) => tickOf(i.cause));
    expect(new Set(ticks).size).toBe(ticks.length);
    expect(ticks.filter((t) => t === held)).toHaveLength(1);
    expect(ticks.filter((t) => t === orphan)).toHaveLength(1);
    for (const it of its) expect([it.number, runs.filter((r) => r.trace === it.trace_id).map((r) => r.phase)]).toEqual([it.number, ["fetch", "decide", "apply", "learn"]]);
    const heldTrace = its.find((i) => tickOf(i.cause) === held)!.trace_id;
    expect(new Set(runs.filter((r) => r.trace === heldTrace).map((r) => r.host))).toEqual(new Set(["h1"]));
    const open = (await pg.admin(`SELECT scheduled_at FROM "${pg.schema}".ticks WHERE loop_id = 'fleet.worker' AND finished_at IS NULL`)).rows;
    expect(open).toEqual([]);
  }, 180_000);
});
