/**
 * The studio's live feed: a reconnecting page gets exactly what it missed (Last-Event-ID), or a
 * reset when that is no longer held; a browser that stops reading is cut off once its bounded
 * queue fills, and the publisher (the loops) never waits for it.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Feed, type FeedClient } from "../../src/studio/feed.js";

function parse(text: string): { id: number; type: string; data: unknown }[] {
  return text
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      const f = Object.fromEntries(block.split("\n").map((l) => [l.slice(0, l.indexOf(": ")), l.slice(l.indexOf(": ") + 2)]));
      return { id: Number(f.id), type: f.event!, data: JSON.parse(f.data!) };
    });
}

function client(options: { stalled?: boolean } = {}): FeedClient & { text: string; closed: boolean; drain?: () => void } {
  const c = {
    text: "",
    closed: false,
    drain: undefined as (() => void) | undefined,
    write(t: string) {
      c.text += t;
      return !options.stalled;
    },
    onDrain(fn: () => void) {
      c.drain = fn;
    },
    close() {
      c.closed = true;
    },
  };
  return c;
}

/** Long enough for a flush (the feeds here write after flushMs 0). */
const tick = () => new Promise((r) => setTimeout(r, 2));

describe("Feed", () => {
  it("replays what a reconnecting client missed, in order, after its Last-Event-ID", async () => {
    const feed = new Feed({ keep: 100, flushMs: 0 });
    for (let i = 1; i <= 10; i++) feed.publish("host", { n: i });
    const c = client();
    feed.subscribe(c, 6);
    await tick();
    expect(parse(c.text).map((e) => [e.id, (e.data as { n: number }).n])).toEqual([
      [7, 7],
      [8, 8],
      [9, 9],
      [10, 10],
    ]);
    feed.publish("host", { n: 11 });
    await tick();
    expect(parse(c.text).at(-1)).toMatchObject({ id: 11, type: "host" });
  });

  it("tells a client whose missed events are no longer held to read the state again (reset)", async () => {
    const feed = new Feed({ keep: 10, flushMs: 0 });
    for (let i = 1; i <= 50; i++) feed.publish("host", { n: i });
    const c = client();
    feed.subscribe(c, 3);
    await tick();
    const [first] = parse(c.text);
    expect(first).toMatchObject({ type: "reset" });
    // Near miss: one still held is replayed, not reset.
    const d = client();
    feed.subscribe(d, 45);
    await tick();
    expect(parse(d.text).map((e) => e.id)).toEqual([46, 47, 48, 49, 50]);
  });

  it("cuts off a client that stops reading once its queue is full; the publisher never waits and the others get everything", async () => {
    const feed = new Feed({ keep: 10_000, maxQueued: 50, flushMs: 0 });
    const slow = client({ stalled: true });
    const fast = client();
    feed.subscribe(slow, undefined);
    feed.subscribe(fast, undefined);
    let publishing = 0;
    for (let i = 1; i <= 5000; i++) {
      const t = performance.now();
      feed.publish("host", { n: i });
      publishing += performance.now() - t;
      if (i % 20 === 0) await tick();
    }
    await tick();
    // 5,000 events cost the publisher well under a millisecond each, the stalled page notwithstanding.
    expect(publishing).toBeLessThan(500);
    expect(slow.closed).toBe(true);
    expect(feed.cutOff).toBe(1);
    expect(feed.clients).toBe(1);
    expect(parse(fast.text).filter((e) => e.type === "host")).toHaveLength(5000);
    // A client that is behind but drains is not cut off: it gets the rest once it can take it.
    const behind = client({ stalled: true });
    feed.subscribe(behind, undefined);
    feed.publish("host", { n: 5001 });
    await tick();
    feed.publish("host", { n: 5002 });
    await tick();
    expect(behind.closed).toBe(false);
    behind.write = (t: string) => ((behind.text += t), true);
    behind.drain!();
    expect(parse(behind.text).map((e) => e.id)).toEqual([5000, 5001, 5002]);
  });

  it("for any history and any reconnect point: exactly the missed events in order, or a reset", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 200 }), async (keep, published, after) => {
        const feed = new Feed({ keep, flushMs: 0 });
        for (let i = 1; i <= published; i++) feed.publish("host", { n: i });
        const c = client();
        feed.subscribe(c, after);
        await tick();
        const got = parse(c.text);
        if (after >= published) return got.length === 1 && got[0]!.type === "hello";
        if (got[0]!.type === "reset") return published - after > keep;
        const ids = got.map((e) => e.id);
        return ids.length === published - after && ids.every((id, i) => id === after + 1 + i);
      }),
      { numRuns: 200 },
    );
  });
});
