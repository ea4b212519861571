/**
 * The store's outbox around outages (PostgreSQL): a signal whose delivery was acknowledged while
 * the store could not be written is marked settled once the store answers again (it does not stay
 * pending for the next starting host to send again); and a host starting in a fleet leaves the
 * outbox of a loop another host holds alone, sending a loop's pending signals only once it gained
 * that loop's lease.
 */
import { afterEach, beforeAll, expect, it } from "vitest";
import { migrate } from "../../adapters/postgres/migrate.js";
import { PostgresStore } from "../../adapters/postgres/store.js";
import { TransportError, type Ack, type Transport } from "../../src/connections/contracts.js";
import type { FleetGate } from "../../src/fleet/contracts.js";
import type { HostEvent } from "../../src/host/host.js";
import { initSignatures } from "../../src/runtime/signature.js";
import type { PulseCloudEvent } from "../../src/tokens/types.js";
import { pgSchema, type PgSchema } from "../adapters/postgres/helpers.js";
import { describeWith, postgresService } from "../helpers/services.js";
import { validHandlers } from "../runtime/harness.js";
import { connectionTo, hostWith, loadReceiver, loadSender, receiverManifest } from "../host/signals-harness.js";
import { Relay } from "./pg-relay.js";

beforeAll(() => initSignatures());

const gate: FleetGate = { cadenceOrigin: 0, admit: async () => true, finished: async () => undefined };

describeWith(await postgresService(), "the outbox around outages", (url) => {
  let s: PgSchema;
  const open: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0).reverse()) await o.close();
    await s?.drop();
  });
  const outbox = async () => (await s.admin(`SELECT loop_id, event_id, status FROM "${s.schema}".outbox ORDER BY id`)).rows as { loop_id: string; event_id: string; status: string }[];

  it("a signal acknowledged while its settle met an outage is marked delivered once the store answers again", async () => {
    s = pgSchema(url);
    await migrate(s.url);
    const relay = new Relay(new URL(url));
    await relay.listen();
    open.push(relay);
    const via = new URL(s.appUrl);
    via.host = `127.0.0.1:${relay.port}`;
    const store = await PostgresStore.open(via.toString());
    open.push(store);
    const host = await hostWith({ store });
    const notes: string[] = [];
    host.subscribe((e: HostEvent) => e.type === "host.note" && notes.push(e.message));
    await loadSender(host, connectionTo());
    await loadReceiver(host, receiverManifest(), { actions: [], inputs: [] });
    // The receiver's last phase arms the relay: the settle that follows its iteration never reaches the server.
    const learn = validHandlers().learn!;
    host.loop("t.b")!.handle("learn", (ctx) => ((relay.on = "settled_at"), (relay.cut = "before"), learn(ctx)));
    host.start();
    open.push({ close: () => host.stop({ timeoutMs: 2000 }) });
    await host.trigger("t.a", { input: { n: 1 } });
    await expect.poll(() => notes.some((n) => /^outbox: signal .+ was delivered but the store cannot mark it settled \(.*\); trying again until it answers$/.test(n)), { timeout: 5000 }).toBe(true);
    await expect.poll(outbox, { timeout: 8000 }).toEqual([{ loop_id: "t.a", event_id: expect.any(String), status: "delivered" }]);
    expect(notes).toContain("outbox: the store answers again: 1 signal(s) marked settled");
  });

  it("a host starting in a fleet sends no pending signal of a loop it does not hold; once it gains the lease, it sends it", async () => {
    s = pgSchema(url);
    await migrate(s.url);
    // The first host's signal never gets through, and it stops: the signal stays pending in the outbox.
    const down: Transport = { send: async () => Promise.reject(new TransportError("no route")) };
    const first = await hostWith({ store: await PostgresStore.open(s.appUrl), fleet: gate, transport: down, signalRetry: { baseMs: 50, maxMs: 100 } });
    await loadSender(first, connectionTo());
    first.start();
    await first.trigger("t.a", { input: { n: 1 } });
    await first.stop({ timeoutMs: 300 });
    await first.runtime.store!.close();
    expect((await outbox()).map((r) => r.status)).toEqual(["pending"]);
    const sent: string[] = [];
    const recording: Transport = { send: async (envelope: PulseCloudEvent): Promise<Ack> => (sent.push(envelope.id), { outcome: "accepted" }) };
    const store = await PostgresStore.open(s.appUrl);
    open.push(store);
    const second = await hostWith({ store, fleet: gate, transport: recording });
    await loadSender(second, connectionTo());
    second.start();
    open.push({ close: () => second.stop({ timeoutMs: 1000 }) });
    // The lease of t.a is another (live) host's: nothing is sent from here.
    await new Promise((r) => setTimeout(r, 700));
    expect(sent).toEqual([]);
    await second.takeOver("t.a");
    const [row] = await outbox();
    await expect.poll(() => sent, { timeout: 5000 }).toEqual([row!.event_id]);
    await expect.poll(async () => (await outbox()).map((r) => r.status), { timeout: 5000 }).toEqual(["delivered"]);
  });
});
