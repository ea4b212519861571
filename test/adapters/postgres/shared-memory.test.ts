/**
 * One memory graph written by two hosts (two PostgresStore instances on one schema, as two fleet
 * hosts are): a property over interleavings of their transactions. Whatever the order of begin,
 * write and commit on either side, a unit either commits with every row it wrote, or is refused
 * whole with STORE_MEMORY_CONFLICT (its rows would have replaced the other host's); no update is
 * lost (confidence learned by both ends up counting every committed learn); ids are never given
 * twice; and each host's next transaction reads what the other committed.
 */
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { migrate } from "../../../adapters/postgres/migrate.js";
import { PostgresStore } from "../../../adapters/postgres/store.js";
import { StoreError } from "../../../src/store/contracts.js";
import type { MemorySubstrate } from "../../../src/substrates/contracts.js";
import { describeWith, postgresService } from "../../helpers/services.js";
import { pgSchema, type PgSchema } from "./helpers.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

describeWith(await postgresService(), "a memory graph two hosts write", (url) => {
  let s: PgSchema;
  let hosts: PostgresStore[];
  beforeAll(async () => {
    s = pgSchema(url);
    await migrate(s.url);
    hosts = [await PostgresStore.open(s.appUrl), await PostgresStore.open(s.appUrl)];
  });
  afterAll(async () => {
    for (const h of hosts ?? []) await h.close();
    await s?.drop();
  });

  let run = 0;
  it("property: over any interleaving, every committed write lands, a refused unit lands nothing, no learned confidence is lost, and each host then reads the other's writes", async () => {
    const step = fc.record({ writer: fc.integer({ min: 0, max: 1 }), learn: fc.boolean() });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 4, maxLength: 36 }), async (schedule) => {
        const ws = `ws${++run}`;
        const graphs: MemorySubstrate[] = hosts.map((h) => h.memory("memory://shared"));
        const ctx = { trace_id: TRACE, workspace_id: ws };
        // A node both hosts learn about.
        const seedTx = (await graphs[0]!.begin_transaction({}, ctx)).tx_id;
        const seed = (await graphs[0]!.store_node({ node: { content: "seed" } }, { ...ctx, tx_id: seedTx })).node_id;
        await graphs[0]!.commit_transaction({ tx_id: seedTx }, ctx);
        await hosts[0]!.commit({ loop_id: "l0", workspace_id: ws, trace_id: TRACE, audit: [], memory: { substrate: graphs[0]!, tx_id: seedTx } });

        // Each writer cycles begin → write → commit, one stage per scheduled step.
        const state = [0, 1].map(() => ({ stage: 0, tx: "", wrote: [] as { node?: string; event: string; content?: string; learn?: boolean }[] }));
        const committed: { node?: string; event: string; content?: string; learn?: boolean }[] = [];
        const refused: { node?: string; event: string }[] = [];
        let learns = 0;
        const advance = async (w: number, learn: boolean) => {
          const st = state[w]!;
          const g = graphs[w]!;
          if (st.stage === 0) st.tx = (await g.begin_transaction({}, ctx)).tx_id;
          else if (st.stage === 1) {
            const c = { ...ctx, tx_id: st.tx };
            if (learn) {
              await g.learn_from_outcome({ outcome: { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: `act-${ws}-${++learns}`, status: "success", causal_parent_ids: [seed] } }, c);
              st.wrote.push({ event: "", learn: true });
            } else {
              const content = `w${w}-${learns}-${st.tx}-${Math.random()}`;
              const r = await g.store_node({ node: { content } }, c);
              st.wrote.push({ node: r.node_id, event: r.audit_event_id, content });
            }
          } else {
            let ok = true;
            try {
              await g.commit_transaction({ tx_id: st.tx }, ctx);
              await hosts[w]!.commit({ loop_id: `l${w}`, workspace_id: ws, trace_id: TRACE, audit: [], memory: { substrate: g, tx_id: st.tx } });
            } catch (error) {
              ok = false;
              expect(error).toBeInstanceOf(StoreError);
              expect([(error as StoreError).code, (error as StoreError).message]).toEqual(["STORE_MEMORY_CONFLICT", expect.stringMatching(/was changed by another writer \(another host of the fleet\) since this host read it: this unit is not committed/)]);
            }
            (ok ? committed : refused).push(...st.wrote);
            st.wrote = [];
          }
          st.stage = (st.stage + 1) % 3;
        };
        for (const { writer, learn } of schedule) await advance(writer, learn);
        // Open transactions are finished (write if needed, then commit).
        for (const w of [0, 1]) while (state[w]!.stage !== 0) await advance(w, false);

        const rows = async (kind: string) => new Map((await s.admin(`SELECT key, value FROM "${s.schema}".memory_state WHERE workspace_id = $1 AND kind = $2`, [ws, kind])).rows.map((r) => [r.key as string, JSON.parse(r.value as string)]));
        const nodes = await rows("node");
        const mutations = await rows("mutation");
        const stored = committed.filter((c) => c.node !== undefined);
        expect(stored.filter((c) => nodes.get(c.node!)?.node?.content !== c.content)).toEqual([]);
        expect(stored.filter((c) => mutations.get(c.event)?.ids?.[0] !== c.node)).toEqual([]);
        expect(refused.filter((c) => c.node !== undefined && nodes.has(c.node))).toEqual([]);
        expect(nodes.size).toBe(stored.length + 1);
        // Every committed learn counted: none replaced another.
        const learned = committed.filter((c) => c.learn).length;
        expect(nodes.get(seed)?.node?.confidence).toBeCloseTo(Math.min(1, 0.5 + 0.05 * learned), 9);
        // Each host's next transaction reads everything committed, whoever wrote it.
        for (const g of graphs) {
          const { tx_id } = await g.begin_transaction({}, ctx);
          const seen = await g.retrieve_context({ query: null, k: 1000 }, { ...ctx, tx_id });
          await g.rollback_transaction({ tx_id }, ctx);
          expect(new Set(seen.nodes.map((n) => n.id))).toEqual(new Set(nodes.keys()));
        }
        // And a write made while the other host is idle commits.
        for (const [w, g] of graphs.entries()) {
          const { tx_id } = await g.begin_transaction({}, ctx);
          await g.store_node({ node: { content: `alone ${w}` } }, { ...ctx, tx_id });
          await g.commit_transaction({ tx_id }, ctx);
          await hosts[w]!.commit({ loop_id: `l${w}`, workspace_id: ws, trace_id: TRACE, audit: [], memory: { substrate: g, tx_id } });
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
