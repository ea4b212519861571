/**
 * A periodic tick's finish is durable with its iteration's end (schema version 4): the unit that
 * ends an iteration whose recorded cause is a periodic tick marks that tick finished in the same
 * transaction (commit_units), so no host's finishTick round trip is needed for the fleet to know.
 * Real PostgreSQL, the store and the leases as hosts use them, no finishTick call anywhere here.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { migrate, PostgresDatabase, PostgresLeases } from "../../adapters/postgres/index.js";
import { PostgresStore } from "../../adapters/postgres/store.js";
import type { UnitOfWork } from "../../src/store/contracts.js";
import { describeWith, postgresService } from "../helpers/services.js";
import { pgSchema, type PgSchema } from "../adapters/postgres/helpers.js";

const TICK = Date.UTC(2026, 10, 24, 16, 0, 0, 400);
const tickCause = (at: number) => ({ cadence: "periodic", scheduled_at: new Date(at).toISOString() });

function start(loop: string, trace: string, cause: unknown): UnitOfWork {
  return { loop_id: loop, workspace_id: "w1", trace_id: trace, started: { number: 1, entry: "fetch", input: cause, cause, started_at: new Date().toISOString() }, audit: [] };
}
function end(loop: string, trace: string, status = "completed"): UnitOfWork {
  return { loop_id: loop, workspace_id: "w1", trace_id: trace, finished: { status, closed: status === "completed" }, audit: [] };
}

describeWith(await postgresService(), "a periodic tick finishes with its iteration's end (commit_units)", (url) => {
  let s: PgSchema;
  let store: PostgresStore;
  let db: PostgresDatabase;
  let leases: PostgresLeases;
  beforeAll(async () => {
    s = pgSchema(url);
    await migrate(s.url);
    store = await PostgresStore.open(s.url);
    db = await PostgresDatabase.open(s.url);
    leases = new PostgresLeases(db);
  });
  afterAll(async () => {
    await store?.close();
    await db?.close();
    await s?.drop();
  });
  const unfinished = async (loop: string) => (await leases.unfinishedTicks({ loop_id: loop, workspace_id: "w1" }, "")).map((t) => t.scheduled_at);

  it("the end of a tick's iteration finishes the tick in the same transaction; a started, unfinished one does not (it is resumed)", async () => {
    const key = { loop_id: "l.a", workspace_id: "w1" };
    for (const at of [TICK, TICK + 1000, TICK + 2000]) expect(await leases.claimTick(key, at, "h1")).toBe(true);
    await store.commit(start("l.a", "t1", tickCause(TICK)));
    await store.commit(start("l.a", "t2", tickCause(TICK + 1000)));
    // Near miss: t2 started, not finished: its tick stays unfinished (the next holder resumes it).
    expect(await unfinished("l.a")).toEqual([TICK, TICK + 1000, TICK + 2000]);
    await store.commit(end("l.a", "t1"));
    expect(await unfinished("l.a")).toEqual([TICK + 1000, TICK + 2000]);
    // A failed iteration ends its tick too (what Fleet.finished does for any status but a lost lease).
    await store.commit(end("l.a", "t2", "failed"));
    expect(await unfinished("l.a")).toEqual([TICK + 2000]);
  });

  it("an iteration that is no periodic tick's (manual, a signal, another loop's tick) finishes no tick", async () => {
    const key = { loop_id: "l.b", workspace_id: "w1" };
    expect(await leases.claimTick(key, TICK, "h1")).toBe(true);
    await store.commit(start("l.b", "m1", { trigger: "manual", scheduled_at: new Date(TICK).toISOString() }));
    await store.commit(end("l.b", "m1"));
    await store.commit(start("l.b", "s1", "not an object"));
    await store.commit(end("l.b", "s1"));
    await store.commit(start("l.b", "b1", { cadence: "periodic", scheduled_at: "yesterday" }));
    await store.commit(end("l.b", "b1"));
    await store.commit(start("l.c", "c1", tickCause(TICK)));
    await store.commit(end("l.c", "c1"));
    expect(await unfinished("l.b")).toEqual([TICK]);
  });
});
