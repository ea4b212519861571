/**
 * The JetStream publisher of the NATS transport (adapters/nats/publisher.ts): PubAcks matched
 * to their publishes, duplicates recognised by Nats-Msg-Id, and every way a publish can fail
 * ends in a rejection within its bound, never a wait for ever.
 */
import { connect, headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager, RetentionPolicy } from "@nats-io/jetstream";
import { afterEach, expect, it } from "vitest";
import { AckedPublisher } from "../../../adapters/nats/publisher.js";
import { describeWith, natsService, runId } from "../../helpers/services.js";

describeWith(await natsService(), "JetStream publisher", (url) => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
  });

  async function withStream(): Promise<{ nc: NatsConnection; subject: string }> {
    const nc = await connect({ servers: url.replace(/\?.*$/, ""), noAsyncTraces: true });
    cleanup.push(() => nc.close());
    const name = runId("pub").toUpperCase();
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name, subjects: [`${name}.>`], retention: RetentionPolicy.Limits });
    cleanup.push(async () => void (await jsm.streams.delete(name)));
    return { nc, subject: `${name}.signals` };
  }

  const withId = (id: string) => {
    const h = natsHeaders();
    h.set("Nats-Msg-Id", id);
    return h;
  };
  const body = new TextEncoder().encode("{}");

  it("matches each PubAck to its publish, in any number at once, and recognises a republished id as a duplicate", async () => {
    const { nc, subject } = await withStream();
    const publisher = new AckedPublisher(nc, 5_000);
    const acks = await Promise.all(Array.from({ length: 200 }, (_, i) => publisher.publish(subject, body, withId(`id-${i}`))));
    expect(acks.map((a) => a.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(acks.every((a) => !a.duplicate)).toBe(true);
    const again = await publisher.publish(subject, body, withId("id-7"));
    expect(again).toMatchObject({ seq: 8, duplicate: true });
    expect((await publisher.publish(subject, body, withId("id-200"))).duplicate).toBe(false);
  });

  it("rejects a subject no stream takes (no responders), and one whose PubAck never comes, within its bound", async () => {
    const { nc, subject } = await withStream();
    const publisher = new AckedPublisher(nc, 300);
    await expect(publisher.publish(`nowhere.${runId("x")}`, body, withId("a"))).rejects.toThrow(/^no JetStream stream takes subject nowhere\.\S+ \(no responders\)$/);
    // Something that takes the message and never answers, as a wedged server would.
    const silent = `silent.${runId("x")}`;
    nc.subscribe(silent, { callback: () => undefined });
    await nc.flush();
    const started = performance.now();
    await expect(publisher.publish(silent, body, withId("b"))).rejects.toThrow("no PubAck within 300 ms");
    expect(performance.now() - started).toBeLessThan(3_000);
    // The publisher still works after both.
    expect((await publisher.publish(subject, body, withId("c"))).duplicate).toBe(false);
  });

  it("rejects what waits when it is closed, and every later publish", async () => {
    const { nc } = await withStream();
    const publisher = new AckedPublisher(nc, 5_000);
    const silent = `silent.${runId("x")}`;
    nc.subscribe(silent, { callback: () => undefined });
    await nc.flush();
    const waiting = publisher.publish(silent, body, withId("a"));
    publisher.close();
    await expect(waiting).rejects.toThrow("the NATS transport is closed");
    await expect(publisher.publish(silent, body, withId("b"))).rejects.toThrow("the NATS transport is closed");
  });
});
