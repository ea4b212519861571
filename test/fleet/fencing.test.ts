/**
 * Fencing by the database (schema version 4): a fleet host's units carry the lease they are
 * committed under (holder, epoch), and commit_units refuses, whole, a unit whose lease row names
 * another holder or epoch (STORE_LEASE_LOST), holding the row locked until it commits, so a
 * takeover waits for a commit in flight and then reads it. Real PostgreSQL, two stores as two
 * hosts, the leases as the fleet takes them.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { migrate, PostgresDatabase, PostgresLeases } from "../../adapters/postgres/index.js";
import { PostgresStore } from "../../adapters/postgres/store.js";
import { initSignatures } from "../../src/runtime/signature.js";
import type { UnitOfWork } from "../../src/store/contracts.js";
import { describeWith, postgresService } from "../helpers/services.js";
import { pgSchema, type PgSchema } from "../adapters/postgres/helpers.js";
import { event } from "../store/stores.js";

const LOOP = "fleet.x";
const key = { loop_id: LOOP, workspace_id: "w1" };

function started(loop: string, trace: string): UnitOfWork {
  return { loop_id: loop, workspace_id: "w1", trace_id: trace, started: { number: 1, entry: "fetch", input: null, started_at: new Date().toISOString() }, audit: [] };
}
function phase(loop: string, trace: string, phaseId: string, seq: number): UnitOfWork {
  return { loop_id: loop, workspace_id: "w1", trace_id: trace, phase: { phase_id: phaseId, signature: `blake3:${trace}${phaseId}`, status: "completed", output: { phaseId }, next: "next" }, audit: [event(seq, { trace_id: trace, loop_id: loop, phase_id: phaseId, workspace_id: "w1", event_id: `${trace}-${seq}` })] };
}

describeWith(await postgresService(), "fencing by the database: a unit commits only under the lease it was sent under", (url) => {
  let s: PgSchema;
  let db: PostgresDatabase;
  let leases: PostgresLeases;
  const stores: PostgresStore[] = [];
  beforeAll(async () => {
    await initSignatures();
    s = pgSchema(url);
    await migrate(s.url);
    db = await PostgresDatabase.open(s.url);
    leases = new PostgresLeases(db);
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    await db?.close();
    await s?.drop();
  });
  const host = async (holder: string, epoch: () => number) => {
    const store = await PostgresStore.open(s.url);
    stores.push(store);
    expect(store.fenceWith(s.url, (loopId) => (loopId === LOOP ? { holder, epoch: epoch() } : undefined))).toBe(true);
    return store;
  };
  const phasesOf = async (trace: string) => (await s.admin(`SELECT p.phase_id FROM "${s.schema}".phases p JOIN "${s.schema}".iterations i ON i.id = p.iteration_id WHERE i.trace_id = $1 ORDER BY p.id`, [trace])).rows.map((r) => r.phase_id);

  it("a commit from the host whose lease was taken over is refused whole, naming the lease; the holder's commits pass, before and after", async () => {
    const first = await leases.acquire(key, "h1", 300);
    expect(first).toMatchObject({ holder: "h1", epoch: 1 });
    const h1 = await host("h1", () => 1);
    // The near miss: while h1 holds the lease, its units commit.
    await h1.commit(started(LOOP, "t1"));
    await h1.commit(phase(LOOP, "t1", "fetch", 0));
    // h1's lease runs out and h2 takes the loop over (epoch 2).
    await new Promise((r) => setTimeout(r, 400));
    const second = await leases.acquire(key, "h2", 60_000);
    expect(second).toMatchObject({ holder: "h2", epoch: 2 });
    const h2 = await host("h2", () => 2);
    // h1's late commit of the next phase: refused, nothing of it written (phase, audit event).
    const late = await h1.commit(phase(LOOP, "t1", "decide", 1)).then(() => undefined, (e: unknown) => e as { code: string; message: string });
    expect(late?.code).toBe("STORE_LEASE_LOST");
    expect(late?.message).toContain(`loop ${LOOP} of workspace w1 is no longer held by h1 at lease epoch 1`);
    expect(await phasesOf("t1")).toEqual(["fetch"]);
    // The new holder resumes that phase: its commit passes and the chain continues from fetch's event.
    await h2.commit(phase(LOOP, "t1", "decide", 1));
    expect(await phasesOf("t1")).toEqual(["fetch", "decide"]);
    expect((await h2.verifyAudit("w1")).every((r) => r.ok)).toBe(true);
    expect((await h2.queryAudit({ trace_id: "t1", limit: 10 })).events.map((e) => e.event.phase_id)).toEqual(["fetch", "decide"]);
  });

  it("in one batch only the fenced unit is refused: another loop's unit (outside the fleet) commits; a store on another schema is not fenced", async () => {
    const h1 = await host("h1", () => 1);
    const [fenced, free] = await Promise.allSettled([h1.commit(started(LOOP, "t2")), h1.commit(started("other.loop", "t3"))]);
    expect(fenced.status === "rejected" && (fenced.reason as { code?: string }).code).toBe("STORE_LEASE_LOST");
    expect(free.status).toBe("fulfilled");
    const traces = (await s.admin(`SELECT trace_id FROM "${s.schema}".iterations WHERE trace_id IN ('t2', 't3')`)).rows.map((r) => r.trace_id);
    expect(traces).toEqual(["t3"]);
    // A host whose lease was never taken (epoch 0: the fleet's loop, not held here) is refused too.
    const never = await host("h3", () => 0);
    await expect(never.commit(started(LOOP, "t4"))).rejects.toMatchObject({ code: "STORE_LEASE_LOST" });
    const elsewhere = new URL(s.url);
    elsewhere.searchParams.set("schema", `${s.schema}_other`);
    const other = await PostgresStore.open(s.url);
    stores.push(other);
    expect(other.fenceWith(elsewhere.toString(), () => ({ holder: "x", epoch: 0 }))).toBe(false);
    await other.commit(started(LOOP, "t5"));
  });
});
