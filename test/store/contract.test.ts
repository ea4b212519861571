/**
 * The persistence contract (src/store/contracts.ts), one suite for every Store adapter: what the
 * runtime relies on to resume, replay and audit.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { initSignatures } from "../../src/runtime/signature.js";
import type { Store, UnitOfWork } from "../../src/store/contracts.js";
import { event, fixtures, TRACE, TRACE2, type StoreFixture } from "./stores.js";

const base = { loop_id: "examples.hello", workspace_id: "ws_a", trace_id: TRACE };
beforeAll(() => initSignatures());

const started: UnitOfWork = { ...base, started: { number: 1, entry: "observe", input: { q: 1 }, started_at: "2026-11-24T12:00:00.000Z" }, audit: [event(0, { event_type: "iteration.started", phase_id: null })], counters: { iterations: 1, started: true } };

for (const make of fixtures) {
  describe(`Store contract: ${make().name}`, () => {
    let fixture: StoreFixture;
    let store: Store;
    const open = () => {
      fixture = make();
      store = fixture.open();
      return store;
    };
    afterEach(async () => {
      await store?.close();
      fixture?.cleanup();
    });

    it("journals an iteration: started and committed phases are what interrupted() resumes from, finished ends it", async () => {
      open();
      await store.commit(started);
      await store.commit({ ...base, phase: { phase_id: "observe", signature: "blake3:01", status: "completed", output: { seen: [1, "x"] }, next: "decide" }, audit: [event(1)] });
      const [it1, ...rest] = await store.interrupted("examples.hello");
      expect(rest).toEqual([]);
      expect(it1).toEqual({ loop_id: "examples.hello", workspace_id: "ws_a", trace_id: TRACE, number: 1, entry: "observe", input: { q: 1 }, phases: [{ phase_id: "observe", signature: "blake3:01", status: "completed", output: { seen: [1, "x"] }, next: "decide" }], audit_seq: 2 });
      expect(await store.interrupted("other.loop")).toEqual([]);
      await store.commit({ ...base, finished: { status: "completed", closed: true }, audit: [event(2, { event_type: "iteration.completed", phase_id: null })] });
      expect(await store.interrupted("examples.hello")).toEqual([]);
    });

    it("keeps loop counters per workspace, the last write winning", async () => {
      open();
      await store.commit(started);
      await store.commit({ ...base, workspace_id: "ws_b", trace_id: TRACE2, audit: [], counters: { iterations: 7, started: true } });
      await store.commit({ ...base, audit: [], counters: { iterations: 2, started: true } });
      expect(await store.counters("examples.hello")).toEqual(new Map([["ws_a", { iterations: 2, started: true }], ["ws_b", { iterations: 7, started: true }]]));
      expect(await store.counters("other.loop")).toEqual(new Map());
    });

    it("returns idempotency records newest first, per loop, byte for byte", async () => {
      open();
      for (let i = 0; i < 5; i++) await store.commit({ ...base, idempotency: { workspace_id: "ws_a", signature: `blake3:${i}`, canonical: `{"b":1,"a":${i}}` }, audit: [] });
      await store.commit({ ...base, loop_id: "other.loop", idempotency: { workspace_id: "ws_a", signature: "blake3:x", canonical: "1" }, audit: [] });
      const records = await store.idempotency("examples.hello", 3);
      expect(records).toEqual([4, 3, 2].map((i) => ({ workspace_id: "ws_a", signature: `blake3:${i}`, canonical: `{"b":1,"a":${i}}` })));
    });

    it("chains each workspace's audit events and verifies them; filters and pages the trail", async () => {
      open();
      await store.commit(started);
      await store.commit({ ...base, audit: [event(1), event(2)] });
      await store.commit({ ...base, workspace_id: "ws_b", trace_id: TRACE2, audit: [event(0, { trace_id: TRACE2, workspace_id: "ws_b", event_id: `${TRACE2}-0` })] });
      const reports = await store.verifyAudit();
      expect(reports).toEqual([
        { workspace_id: "ws_a", ok: true, events: 3 },
        { workspace_id: "ws_b", ok: true, events: 1 },
      ]);
      expect(await store.verifyAudit("ws_b")).toEqual([{ workspace_id: "ws_b", ok: true, events: 1 }]);
      const first = await store.queryAudit({ workspace_id: "ws_a", limit: 2 });
      expect(first.events.map((e) => e.event.seq)).toEqual([0, 1]);
      expect(first.events[1]?.prev_hash).toBe(first.events[0]?.hash);
      expect(first.next).toBeDefined();
      const second = await store.queryAudit({ workspace_id: "ws_a", limit: 2, after: first.next });
      expect(second.events.map((e) => e.event.seq)).toEqual([2]);
      expect(second.next).toBeUndefined();
      expect((await store.queryAudit({ trace_id: TRACE2, limit: 10 })).events.map((e) => e.event.workspace_id)).toEqual(["ws_b"]);
      expect((await store.queryAudit({ loop_id: "nope", limit: 10 })).events).toEqual([]);
    });

    it("verify names a trace whose seq has a gap, and a journaled phase or end without its events; a whole iteration passes", async () => {
      open();
      const observe = { phase_id: "observe", signature: "blake3:01", status: "completed" as const, output: 1, next: "decide" };
      // The near miss: start, phase and end each with their events, in ws_c.
      const c = { ...base, workspace_id: "ws_c", trace_id: TRACE2 };
      const inC = (seq: number, o: Parameters<typeof event>[1] = {}) => event(seq, { workspace_id: "ws_c", trace_id: TRACE2, event_id: `${TRACE2}-${seq}`, ...o });
      await store.commit({ ...started, ...c, audit: [inC(0, { event_type: "iteration.started", phase_id: null })] });
      await store.commit({ ...c, phase: observe, audit: [inC(1, { phase_id: "observe" })] });
      await store.commit({ ...c, finished: { status: "completed", closed: true }, audit: [inC(2, { event_type: "signal.emitted", phase_id: "observe" }), inC(3, { event_type: "iteration.completed", phase_id: null })] });
      expect(await store.verifyAudit("ws_c")).toEqual([{ workspace_id: "ws_c", ok: true, events: 4 }]);
      // ws_a: seq 1 never stored.
      await store.commit(started);
      await store.commit({ ...base, phase: observe, audit: [event(2, { phase_id: "observe" })] });
      // ws_b: a phase and an end the journal committed, with no event of either.
      const b = { ...base, workspace_id: "ws_b" };
      await store.commit({ ...started, ...b, audit: [event(0, { workspace_id: "ws_b", event_type: "iteration.started", phase_id: null })] });
      await store.commit({ ...b, phase: observe, finished: { status: "completed", closed: false }, audit: [] });
      const reports = await store.verifyAudit();
      expect(reports.map((r) => [r.workspace_id, r.ok])).toEqual([["ws_a", false], ["ws_b", false], ["ws_c", true]]);
      expect(reports[0]?.broken).toEqual({ chain_seq: -1, event_id: null, trace_id: TRACE, reason: `trace ${TRACE} of examples.hello: its event seq 1 is missing (the next one is seq 2)` });
      expect(reports[1]?.broken).toMatchObject({ trace_id: TRACE, reason: `trace ${TRACE} of examples.hello: the journal committed its phase observe, and the audit trail has no event of it` });
    });

    it("commits a unit whole or not at all", async () => {
      open();
      const bad = { ...event(1), data: { n: 10n } } as never;
      await expect(store.commit({ ...started, audit: [event(0), bad] })).rejects.toThrow();
      expect(await store.interrupted("examples.hello")).toEqual([]);
      expect(await store.counters("examples.hello")).toEqual(new Map());
      expect((await store.queryAudit({ limit: 10 })).events).toEqual([]);
      await store.commit(started);
      expect(await store.interrupted("examples.hello")).toHaveLength(1);
    });

    it("holds emitted signals in the outbox until settled, once per connection and event id; the inbox recognises a redelivery", async () => {
      open();
      const signal = { event_id: "evt-1", connection_id: "c1", to_loop: "b.loop", envelope: { id: "evt-1", data: { x: 1 } } };
      await store.commit({ ...base, outbox: [signal], audit: [] });
      await store.commit({ ...base, outbox: [signal, { ...signal, event_id: "evt-2" }], audit: [] });
      const pending = await store.pending(10);
      expect(pending.map((p) => [p.event_id, p.loop_id, p.workspace_id, p.trace_id, p.to_loop])).toEqual([
        ["evt-1", "examples.hello", "ws_a", TRACE, "b.loop"],
        ["evt-2", "examples.hello", "ws_a", TRACE, "b.loop"],
      ]);
      expect(pending[0]?.envelope).toEqual(signal.envelope);
      await store.settle("c1", "evt-1", "delivered");
      await store.settle("c1", "evt-9", "delivered"); // unknown: nothing happens
      expect((await store.pending(10)).map((p) => p.event_id)).toEqual(["evt-2"]);

      expect(await store.received("b.loop", "ws_a", "evt-1")).toBe(false);
      await store.commit({ loop_id: "b.loop", workspace_id: "ws_a", trace_id: TRACE2, inbox: { event_id: "evt-1" }, audit: [] });
      expect(await store.received("b.loop", "ws_a", "evt-1")).toBe(true);
      expect(await store.received("b.loop", "ws_b", "evt-1")).toBe(false);
    });

    it("serves the audit slot: append_event and query_by_trace over the chained trail", async () => {
      open();
      const ctx = { trace_id: TRACE, workspace_id: "ws_a" };
      await store.audit.append_event({ event: event(1) }, ctx);
      await store.audit.append_event({ event: event(0) }, ctx);
      await store.audit.append_event({ event: event(0) }, ctx); // an identical replay
      await expect(store.audit.append_event({ event: { ...event(0), event_type: "other" } }, ctx)).rejects.toThrow(/already appended/);
      expect((await store.audit.query_by_trace({ trace_id: TRACE }, ctx)).map((e) => e.seq)).toEqual([0, 1]);
      expect(await store.audit.query_by_trace({ trace_id: TRACE }, { trace_id: TRACE, workspace_id: "ws_b" })).toEqual([]);
      expect((await store.verifyAudit())[0]).toMatchObject({ ok: true, events: 2 });
    });

    it("keeps a memory graph's committed transaction with the unit that names it", async () => {
      open();
      const memory = store.memory("memory://graph");
      expect(store.memory("memory://graph")).toBe(memory);
      const ctx = { trace_id: TRACE, workspace_id: "ws_a" };
      const { tx_id } = await memory.begin_transaction({}, ctx);
      await memory.store_node({ node: { id: "n1", content: "remember me", signature: "s1" } }, { ...ctx, tx_id });
      await memory.store_node({ node: { id: "n2", content: "and me" } }, { ...ctx, tx_id });
      await memory.store_edge({ src: "n1", dst: "n2", type: "causal" }, { ...ctx, tx_id });
      // As the runtime commits a phase's transaction: the store keeps it for the phase's unit.
      await memory.commit_transaction({ tx_id }, { ...ctx, journaled: true });
      await store.commit({ ...base, memory: { substrate: memory, tx_id }, audit: [] });
      const reopened = fixture.reopen ? (store = await fixture.reopen(store)) : store;
      const again = reopened.memory("memory://graph");
      const seen = await again.retrieve_context({ query: "" }, ctx);
      expect(seen.nodes.map((n) => n.id).sort()).toEqual(["n1", "n2"]);
      expect(seen.topology.edges).toEqual([{ src: "n1", dst: "n2", type: "causal" }]);
      expect((await again.store_node({ node: { content: "x", signature: "s1" } }, ctx)).existing).toBe(true);
      // A fresh id does not collide with the persisted ones.
      const { tx_id: t2 } = await again.begin_transaction({}, ctx);
      const fresh = await again.store_node({ node: { content: "new" } }, { ...ctx, tx_id: t2 });
      expect(["n1", "n2"]).not.toContain(fresh.node_id);
      expect((await reopened.memory("memory://other").retrieve_context({ query: "" }, ctx)).nodes).toEqual([]);
    });
  });
}
