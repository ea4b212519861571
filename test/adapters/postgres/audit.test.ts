/**
 * The PostgreSQL audit substrate: the §9.3 contract as the in-memory audit keeps it, plus what
 * only a shared database gives: one hash-chained trail per workspace whatever host appends, kept
 * apart per workspace, and tampering behind the database's back detected.
 */
import { afterEach, expect, it } from "vitest";
import { chainHash, GENESIS, migrate, PostgresAudit, PostgresDatabase } from "../../../adapters/postgres/index.js";
import { createHost, recordingHandler } from "../../../src/host/index.js";
import { initSignatures } from "../../../src/runtime/index.js";
import { describeWith, postgresService } from "../../helpers/services.js";
import { baseManifest } from "../../helpers/manifests.js";
import { auditEvent, ctx, rejection, TRACE } from "../helpers.js";
import { pgSchema, type PgSchema } from "./helpers.js";

describeWith(await postgresService(), "PostgreSQL audit substrate", (url) => {
  let s: PgSchema;
  const opened: PostgresDatabase[] = [];
  const audit = async (u = s.url) => {
    const db = await PostgresDatabase.open(u);
    opened.push(db);
    return new PostgresAudit(async () => db);
  };
  const fresh = async () => {
    await initSignatures();
    s = pgSchema(url);
    await migrate(s.url);
  };
  afterEach(async () => {
    for (const db of opened.splice(0)) await db.close();
    await s?.drop();
  });

  it("appends and answers a trace's events by seq, each chained to the one before it in its workspace", async () => {
    await fresh();
    const a = await audit();
    for (const [event_id, seq] of [["e2", 2], ["e0", 0], ["e1", 1]] as const) expect(await a.append_event({ event: auditEvent({ event_id, seq, data: { n: seq } }) }, ctx())).toEqual({ event_id });
    const events = await a.query_by_trace({ trace_id: TRACE }, ctx());
    expect(events.map((e) => e.event_id)).toEqual(["e0", "e1", "e2"]);
    expect(events[0]).toEqual(auditEvent({ event_id: "e0", seq: 0, data: { n: 0 } }));
    const rows = (await s.admin(`SELECT event_id, chain_seq, prev_hash, hash FROM "${s.schema}".audit_events ORDER BY chain_seq`)).rows;
    expect(rows.map((r) => [r.event_id, Number(r.chain_seq)])).toEqual([["e2", 0], ["e0", 1], ["e1", 2]]);
    expect(rows[0].prev_hash).toBe(GENESIS);
    expect(rows[1].prev_hash).toBe(rows[0].hash);
    expect(rows[0].hash).toBe(chainHash(GENESIS, auditEvent({ event_id: "e2", seq: 2, data: { n: 2 } })));
    expect(await a.verify("ws_a")).toEqual({ ok: true, events: 3 });
  });

  it("keeps the §9.3 contract: the call's trace and workspace, idempotent replay, a used id refused for other content, since/until", async () => {
    await fresh();
    const a = await audit();
    expect(await rejection(a.append_event({ event: auditEvent({ workspace_id: "ws_b" }) }, ctx()))).toMatchObject({ code: "WORKSPACE_MISMATCH" });
    expect(await rejection(a.append_event({ event: auditEvent({ seq: -1 }) }, ctx()))).toMatchObject({ code: "BAD_REQUEST" });
    await a.append_event({ event: auditEvent({ data: { a: 1, b: [1, 2] } }) }, ctx());
    expect(await a.append_event({ event: { ...auditEvent(), data: { b: [1, 2], a: 1 } } }, ctx())).toEqual({ event_id: "evt_1" });
    expect(await rejection(a.append_event({ event: auditEvent({ data: { a: 2 } }) }, ctx()))).toMatchObject({ code: "DUPLICATE_EVENT_ID" });
    await a.append_event({ event: auditEvent({ event_id: "late", seq: 1, timestamp: "2026-04-10T15:00:00+02:00" }) }, ctx());
    expect((await a.query_by_trace({ trace_id: TRACE, since: "2026-04-10T12:30:00Z" }, ctx())).map((e) => e.event_id)).toEqual(["late"]);
    expect(await a.verify("ws_a")).toEqual({ ok: true, events: 2 });
  });

  it("another workspace sees none of the events, and has a chain of its own", async () => {
    await fresh();
    const a = await audit(s.appUrl);
    await a.append_event({ event: auditEvent() }, ctx("ws_a"));
    expect(await a.query_by_trace({ trace_id: TRACE }, ctx("ws_b"))).toEqual([]);
    await a.append_event({ event: auditEvent({ workspace_id: "ws_b" }) }, ctx("ws_b"));
    expect(await a.verify("ws_b")).toEqual({ ok: true, events: 1 });
  });

  it("two hosts appending to one workspace at once build one unbroken chain", async () => {
    await fresh();
    const hosts = [await audit(), await audit(s.appUrl)];
    await Promise.all(hosts.flatMap((h, i) => Array.from({ length: 40 }, (_, n) => h.append_event({ event: auditEvent({ event_id: `h${i}_${n}`, seq: n }) }, ctx()))));
    const report = await hosts[0]!.verify("ws_a");
    expect(report).toEqual({ ok: true, events: 80 });
  });

  it("an event edited or removed behind the database's back (triggers disabled by a superuser) is reported", async () => {
    await fresh();
    const a = await audit();
    for (let n = 0; n < 4; n++) await a.append_event({ event: auditEvent({ event_id: `e${n}`, seq: n }) }, ctx());
    const t = `"${s.schema}".audit_events`;
    await s.admin(`ALTER TABLE ${t} DISABLE TRIGGER USER`);
    await s.admin(`UPDATE ${t} SET event_type = 'forged' WHERE event_id = 'e2'`);
    expect(await a.verify("ws_a")).toEqual({ ok: false, events: 4, broken: { chain_seq: 2, event_id: "e2", reason: "its content does not match its hash: it was changed after it was appended" } });
    await s.admin(`UPDATE ${t} SET event_type = 'phase.completed' WHERE event_id = 'e2'`);
    expect(await a.verify("ws_a")).toEqual({ ok: true, events: 4 });
    await s.admin(`DELETE FROM ${t} WHERE event_id = 'e3'`);
    expect((await a.verify("ws_a")).broken?.reason).toMatch(/should have 4 events and has 3/);
    await s.admin(`DELETE FROM ${t} WHERE event_id = 'e1'`);
    expect((await a.verify("ws_a")).broken).toMatchObject({ chain_seq: 1, reason: "event 1 of the chain is missing (the next one is number 2)" });
  });

  it("a manifest's audit: postgres://… makes the runtime's audit trail the database's", async () => {
    await fresh();
    const host = await createHost({ workspace: "acme", defaultHandler: recordingHandler({ emits: () => [] }) });
    const m = baseManifest();
    m.loop_id = "pg.audited";
    m.substrates = { ...m.substrates, audit: s.url };
    await host.load(m);
    const result = await host.trigger("pg.audited", { input: {} });
    expect(result.error).toBeUndefined();
    expect(result.status).toBe("completed");
    await host.stop();
    const a = await audit(s.appUrl);
    const trail = await a.query_by_trace({ trace_id: result.trace_id }, ctx("acme", { trace_id: result.trace_id }));
    expect(trail[0]?.event_type).toBe("iteration.started");
    expect(trail.at(-1)?.event_type).toBe("iteration.completed");
    expect(trail.map((e) => e.seq)).toEqual(trail.map((_, i) => i));
    expect(await a.verify("acme")).toEqual({ ok: true, events: trail.length });
    // Another slot on a postgres:// URI is refused by name, when the manifest is loaded.
    const other = baseManifest();
    other.loop_id = "pg.memory";
    other.substrates = { ...other.substrates, memory: s.url };
    const h2 = await createHost({ defaultHandler: recordingHandler({ emits: () => [] }) });
    await expect(h2.load(other).then(() => h2.trigger("pg.memory", { input: {} }))).rejects.toThrow(/serves the audit slot only, not memory/);
  });
});
