import { describe, expect, it, vi } from "vitest";
import { CountingAudit, InMemoryAudit } from "../../adapters/memory/index.js";
import { auditEvent, ctx, rejection, TRACE, traceId } from "./helpers.js";

describe("InMemoryAudit", () => {
  it("appends and answers a trace's events ordered by seq, then append order", async () => {
    const audit = new InMemoryAudit();
    for (const [event_id, seq] of [["e2", 2], ["e0", 0], ["e1a", 1], ["e1b", 1]] as const) {
      expect(await audit.append_event({ event: auditEvent({ event_id, seq }) }, ctx())).toEqual({ event_id });
    }
    const other = traceId();
    await audit.append_event({ event: auditEvent({ event_id: "other", trace_id: other }) }, ctx("ws_a", { trace_id: other }));
    const events = await audit.query_by_trace({ trace_id: TRACE }, ctx());
    expect(events.map((e) => e.event_id)).toEqual(["e0", "e1a", "e1b", "e2"]);
  });

  it("filters by since ≤ timestamp ≤ until, comparing instants across offsets", async () => {
    const audit = new InMemoryAudit();
    const stamps = ["2026-04-10T10:00:00Z", "2026-04-10T12:00:00+02:00", "2026-04-10T11:00:00.500Z", "2026-04-10T12:00:00Z"];
    for (const [i, timestamp] of stamps.entries()) await audit.append_event({ event: auditEvent({ event_id: `e${i}`, seq: i, timestamp }) }, ctx());
    const between = await audit.query_by_trace({ trace_id: TRACE, since: "2026-04-10T10:00:00Z", until: "2026-04-10T11:00:00.500Z" }, ctx());
    expect(between.map((e) => e.event_id)).toEqual(["e0", "e1", "e2"]);
    expect((await audit.query_by_trace({ trace_id: TRACE, since: "2026-04-10T11:30:00Z" }, ctx())).map((e) => e.event_id)).toEqual(["e3"]);
    expect(await rejection(audit.query_by_trace({ trace_id: TRACE, since: "yesterday" }, ctx()))).toMatchObject({ code: "BAD_REQUEST" });
  });

  it("refuses an event whose trace_id is not the call's (the substrate echoes the caller's trace)", async () => {
    const audit = new InMemoryAudit();
    expect(await rejection(audit.append_event({ event: auditEvent({ trace_id: traceId() }) }, ctx()))).toMatchObject({ slot: "audit", code: "TRACE_MISMATCH" });
    expect(await rejection(audit.append_event({ event: auditEvent({ workspace_id: "ws_b" }) }, ctx()))).toMatchObject({ code: "WORKSPACE_MISMATCH" });
    expect(await audit.query_by_trace({ trace_id: TRACE }, ctx())).toEqual([]);
  });

  it("replays an identical event idempotently but refuses a different event under a used id", async () => {
    const audit = new InMemoryAudit();
    await audit.append_event({ event: auditEvent({ data: { a: 1, b: [1, 2] } }) }, ctx());
    // Same content, keys in another order: a replay.
    expect(await audit.append_event({ event: { ...auditEvent(), data: { b: [1, 2], a: 1 } } }, ctx())).toEqual({ event_id: "evt_1" });
    const error = await rejection(audit.append_event({ event: auditEvent({ data: { a: 2, b: [1, 2] } }) }, ctx()));
    expect(error).toMatchObject({ code: "DUPLICATE_EVENT_ID" });
    expect(await audit.query_by_trace({ trace_id: TRACE }, ctx())).toHaveLength(1);
  });


  it("checks the call's trace id on every call, right after a good one too (the last good id is remembered)", async () => {
    // A fresh module: before any good id has been seen, a missing one must not match "none remembered".
    vi.resetModules();
    const fresh = (await import("../../adapters/memory/index.js")).InMemoryAudit;
    const audit = new fresh();
    expect(await rejection(audit.append_event({ event: auditEvent() }, { workspace_id: "ws_a" } as never))).toMatchObject({ code: "BAD_CONTEXT" });
    await audit.append_event({ event: auditEvent() }, ctx());
    for (const trace_id of [undefined, "", "0".repeat(32), TRACE.toUpperCase(), `${TRACE}0`]) {
      const bad = { workspace_id: "ws_a", ...(trace_id === undefined ? {} : { trace_id }) } as never;
      expect(await rejection(audit.append_event({ event: auditEvent({ event_id: "evt_2" }) }, bad)), String(trace_id)).toMatchObject({ code: "BAD_CONTEXT" });
      // The near miss: the good id still passes after a refusal.
      expect(await audit.append_event({ event: auditEvent() }, ctx())).toEqual({ event_id: "evt_1" });
    }
  });

  it("refuses a used `<trace_id>-<seq>` id (the runtime's) however the two events are shaped", async () => {
    // The runtime's ids are found through their trace and seq, any other id by itself: a
    // duplicate must be caught across the two, in both orders and across traces.
    const other = traceId();
    const shaped = (seq: number, extra: object = {}) => auditEvent({ event_id: `${TRACE}-${seq}`, seq, ...extra });
    const cases: [string, ReturnType<typeof auditEvent>, ReturnType<typeof auditEvent>, string][] = [
      ["shaped, then shaped", shaped(3), shaped(3, { event_type: "phase.failed" }), TRACE],
      ["shaped, then the same id with another seq", shaped(3), auditEvent({ event_id: `${TRACE}-3`, seq: 4 }), TRACE],
      ["another seq, then shaped", auditEvent({ event_id: `${TRACE}-3`, seq: 4 }), shaped(3), TRACE],
      ["another trace's event under the id, then shaped", auditEvent({ event_id: `${TRACE}-3`, seq: 3, trace_id: other }), shaped(3), other],
      ["shaped, then another trace's event under the id", shaped(3), auditEvent({ event_id: `${TRACE}-3`, seq: 3, trace_id: other }), TRACE],
    ];
    for (const [name, first, second, firstTrace] of cases) {
      const audit = new InMemoryAudit();
      await audit.append_event({ event: first }, ctx("ws_a", { trace_id: firstTrace }));
      expect(await rejection(audit.append_event({ event: second }, ctx("ws_a", { trace_id: second.trace_id }))), name).toMatchObject({ code: "DUPLICATE_EVENT_ID" });
      // Near misses: the identical event replays; a neighbouring seq or a leading zero is a new id.
      expect(await audit.append_event({ event: first }, ctx("ws_a", { trace_id: firstTrace })), name).toEqual({ event_id: first.event_id });
      await audit.append_event({ event: shaped(4) }, ctx());
      await audit.append_event({ event: auditEvent({ event_id: `${TRACE}-03`, seq: 3 }) }, ctx());
    }
  });
  it("refuses malformed events and accepts their near misses", async () => {
    const audit = new InMemoryAudit();
    const bad = [
      { event_id: "" },
      { event_type: undefined },
      { phase_id: "" },
      { phase_id: 3 },
      { timestamp: "2026-04-10 noon" },
      { timestamp: "2026-13-45T99:00:00Z" },
      { seq: -1 },
      { seq: 1.5 },
      { data: [1] },
      { signature: 42 },
    ];
    for (const overrides of bad) {
      expect(await rejection(audit.append_event({ event: auditEvent(overrides as never) }, ctx())), JSON.stringify(overrides)).toMatchObject({ code: "BAD_REQUEST" });
    }
    const good = [{ phase_id: null }, { timestamp: "2026-04-10t12:00:00.123456z" }, { timestamp: "2026-04-10T12:00:00-05:30" }, { seq: 0 }, { data: {} }];
    for (const [i, overrides] of good.entries()) {
      await expect(audit.append_event({ event: auditEvent({ event_id: `ok${i}`, ...overrides }) }, ctx())).resolves.toEqual({ event_id: `ok${i}` });
    }
  });

  it("has no update or delete: nothing on the object can change a stored event", () => {
    for (const audit of [new InMemoryAudit(), new CountingAudit()]) {
      const names = [...Object.getOwnPropertyNames(Object.getPrototypeOf(audit)), ...Object.keys(audit)].filter((name) => typeof (audit as any)[name] === "function");
      expect(names).toEqual(expect.arrayContaining(["append_event", "query_by_trace"]));
      expect(names.filter((name) => /update|delete|remove|erase|clear|replace|rewrite|edit|set|put|patch/i.test(name))).toEqual([]);
    }
  });

  it("stores copies: editing an appended or returned event changes nothing stored", async () => {
    const audit = new InMemoryAudit();
    const event = auditEvent({ data: { n: 1 } });
    await audit.append_event({ event }, ctx());
    event.data!.n = 2;
    const [returned] = await audit.query_by_trace({ trace_id: TRACE }, ctx());
    returned!.event_type = "rewritten";
    expect(await audit.query_by_trace({ trace_id: TRACE }, ctx())).toEqual([auditEvent({ data: { n: 1 } })]);
  });

  it("keeps fields beyond §9.3 and events without a prototype, and refuses non-JSON anywhere in them", async () => {
    const audit = new InMemoryAudit();
    const extra = { ...auditEvent({ event_id: "x1" }), note: { by: "host" } };
    await audit.append_event({ event: extra }, ctx());
    const bare = Object.assign(Object.create(null), auditEvent({ event_id: "x2", seq: 1 }));
    await audit.append_event({ event: bare }, ctx());
    const stored = await audit.query_by_trace({ trace_id: TRACE }, ctx());
    expect(stored).toEqual([extra, auditEvent({ event_id: "x2", seq: 1 })]);
    extra.note.by = "edited";
    expect((await audit.query_by_trace({ trace_id: TRACE }, ctx()))[0]).toMatchObject({ note: { by: "host" } });
    await expect(audit.append_event({ event: auditEvent({ event_id: "x3", seq: 2, data: { text: "whole \ud83d\ude00" } }) }, ctx())).resolves.toEqual({ event_id: "x3" });

    for (const event of [
      { ...auditEvent({ event_id: "n1" }), note: () => 1 },
      auditEvent({ event_id: "n2", data: { at: new Date(0) } as never }),
      auditEvent({ event_id: "n3", data: { n: Number.NaN } }),
      auditEvent({ event_id: "n4", seq: Number.NaN }),
      auditEvent({ event_id: "n5", data: { text: "cut \ud83d" } }),
      auditEvent({ event_id: "n6", data: { ["k\udc00"]: 1 } }),
    ]) {
      expect(await rejection(audit.append_event({ event: event as never }, ctx())), event.event_id).toMatchObject({ code: "BAD_REQUEST" });
    }
  });
});

describe("CountingAudit", () => {
  it("counts events per type and workspace and keeps none of them", async () => {
    const audit = new CountingAudit();
    await audit.append_event({ event: auditEvent({ event_type: "phase.started" }) }, ctx("ws_a"));
    await audit.append_event({ event: auditEvent({ event_type: "phase.started" }) }, ctx("ws_a"));
    await audit.append_event({ event: auditEvent({ event_type: "phase.completed", workspace_id: "ws_b" }) }, ctx("ws_b"));
    expect(audit.countsByType("ws_a")).toEqual({ "phase.started": 2 });
    expect(audit.countsByType()).toEqual({ "phase.started": 2, "phase.completed": 1 });
    expect(audit.total).toBe(3);
    expect(await audit.query_by_trace({ trace_id: TRACE }, ctx())).toEqual([]);
  });

  it("still checks the context and the trace echo", async () => {
    const audit = new CountingAudit();
    expect(await rejection(audit.append_event({ event: auditEvent() }, { trace_id: "nope", workspace_id: "ws" }))).toMatchObject({ code: "BAD_CONTEXT" });
    expect(await rejection(audit.append_event({ event: auditEvent({ trace_id: traceId() }) }, ctx()))).toMatchObject({ code: "TRACE_MISMATCH" });
  });
});
