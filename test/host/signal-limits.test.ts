// What a receiving host takes from a sender it does not control: bounded ids, sources and
// workspaces; a dedupe memory bounded in bytes; an id reused for other content reported, not
// swallowed; a token when one is set; an oversized body refused before it is read. And what it
// sends: one id per emission, kept by redeliveries.
import { connect } from "node:net";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fingerprintOf } from "../../src/connections/fingerprint.js";
import { canonicalJson } from "../../src/json/canonical-json.js";
import { DedupeWindow } from "../../src/connections/dedupe.js";
import { buildEnvelope, ENVELOPE_LIMITS, readEnvelope } from "../../src/connections/envelope.js";
import { initSignatures } from "../../src/runtime/index.js";
import type { PulseCloudEvent } from "../../src/tokens/types.js";
import { createSignalServer, HttpTransport, isLoopback } from "../../src/transports/http.js";
import { TRACE, TRACE_2 } from "../runtime/harness.js";
import { connectionTo, oneHost, ofType, twoHosts } from "./signals-harness.js";

async function envelope(overrides: { traceId?: string; workspaceId?: string; n?: number; delivery?: "exactly_once" } = {}): Promise<PulseCloudEvent> {
  await initSignatures();
  return buildEnvelope({
    connection: connectionTo(overrides.delivery ? { delivery: overrides.delivery } : {}),
    token: { token: "OutcomeSignal", version: "0.1", trace_id: overrides.traceId ?? TRACE, action_id: `act_${overrides.n ?? 1}`, status: "success" },
    loopId: "t.a",
    phaseId: "learn",
    workspaceId: overrides.workspaceId ?? "default",
    traceId: overrides.traceId ?? TRACE,
    spanId: "00f067aa0ba902b7",
    signature: `blake3:${"c".repeat(64)}`,
    time: Date.UTC(2026, 3, 10),
  });
}

const plain = (e: PulseCloudEvent) => JSON.parse(JSON.stringify(e)) as Record<string, unknown>;

describe("event ids", () => {
  it("two iterations whose emitting phase has the same signature send two events with two ids; a redelivery keeps its id", async () => {
    const seen: PulseCloudEvent[] = [];
    const { a, b, drain } = await twoHosts(connectionTo(), (receive) => ({ send: async (e, to) => (seen.push(e), await receive(to, e), receive(to, e)) }));
    const first = await a.host.trigger("t.a", { input: { n: 1 } });
    const second = await a.host.trigger("t.a", { input: { n: 1 } });
    await drain();
    expect(seen).toHaveLength(2);
    expect(seen[0]!.id).not.toBe(seen[1]!.id);
    expect(seen.map((e) => e.subject)).toEqual([`trace_id:${first.trace_id}`, `trace_id:${second.trace_id}`]);
    // Each was delivered twice by the transport above: the second copy of each is a duplicate.
    expect(ofType(b.events, "signal.received").map((e) => e.outcome)).toEqual(["accepted", "duplicate", "accepted", "duplicate"]);
    expect(ofType(b.events, "iteration.started")).toHaveLength(2);
  });

  it("an id received again with other content is refused and reported, not taken as a duplicate; the same content is a duplicate", async () => {
    const { host, events } = await oneHost(connectionTo());
    const original = plain(await envelope());
    expect(await host.receive("t.b", original)).toMatchObject({ outcome: "accepted" });
    expect(await host.receive("t.b", { ...original })).toMatchObject({ outcome: "duplicate" });
    const forged = { ...original, data: { ...(original.data as object), action_id: "act_666" } };
    const refused = await host.receive("t.b", forged);
    expect(refused).toEqual({ outcome: "rejected", reason: expect.stringMatching(/event id evt_\w+ from loop:t\.a\/phase:learn was received before with other content/) });
    expect(ofType(events, "signal.received").at(-1)).toMatchObject({ outcome: "rejected", reason: refused.reason });
    expect(ofType(events, "host.note").at(-1)?.message).toMatch(/^signal refused: event id/);
    await host.stop();
  });
});

describe("exactly_once, deduplicated by signature at the receiver too (§10.2)", () => {
  it("two emissions of one signature (other ids, other traces) run once; another signature runs", async () => {
    const { host, events } = await oneHost(connectionTo({ delivery: "exactly_once" }));
    const one = await envelope({ delivery: "exactly_once", traceId: TRACE });
    const again = await envelope({ delivery: "exactly_once", traceId: TRACE_2 });
    expect(one.id).not.toBe(again.id);
    expect(plain(one).pulsesignature).toBe(`blake3:${"c".repeat(64)}`);
    expect(await host.receive("t.b", plain(one))).toMatchObject({ outcome: "accepted" });
    expect(await host.receive("t.b", plain(again))).toMatchObject({ outcome: "duplicate" });
    // The near miss: the same signature from at-least-once connections (no pulsesignature) is two events.
    const other = plain(await envelope({ traceId: "1".repeat(32) }));
    expect(other.pulsesignature).toBeUndefined();
    expect(await host.receive("t.b", other)).toMatchObject({ outcome: "accepted" });
    await host.settled();
    expect(ofType(events, "iteration.started").filter((e) => e.loop_id === "t.b")).toHaveLength(2);
    await host.stop();
  });
});

describe("lengths a receiver takes", () => {
  it.each([
    ["id", "id"],
    ["source", "source"],
    ["workspace", "pulseworkspace"],
  ] as const)("refuses a %s over its limit, takes one at the limit", async (name, attribute) => {
    const base = plain(await envelope());
    const limit = ENVELOPE_LIMITS[name];
    const value = (length: number) => (name === "source" ? `loop:t.a/phase:${"x".repeat(length - "loop:t.a/phase:".length)}` : "w".repeat(length));
    expect(() => readEnvelope({ ...base, [attribute]: value(limit + 1) })).toThrow(new RegExp(`${attribute} is ${limit + 1} characters long; a receiver takes at most ${limit}`));
    expect(readEnvelope({ ...base, [attribute]: value(limit) })[attribute as "id"]).toBe(value(limit));
  });
});

describe("the dedupe window", () => {
  it("stays within its byte budget however long the ids, and still recognises the recent ones", () => {
    const window = new DedupeWindow({ maxEntries: 1_000_000, maxBytes: 64 * 1024 });
    const id = (i: number) => `${"i".repeat(200)}-${i}`;
    for (let i = 0; i < 5_000; i++) expect(window.see(id(i), "f")).toBe("first");
    expect(window.size.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(window.see(id(4_999), "f")).toBe("duplicate");
    expect(window.see(id(4_950), "f")).toBe("duplicate"); // at least half the budget's worth is always kept
    expect(window.see(id(0), "f")).toBe("first"); // long gone: the bound holds
  });

  it("bounds the count too, and tells a conflict from a duplicate", () => {
    const window = new DedupeWindow({ maxEntries: 10 });
    for (let i = 0; i < 100; i++) window.see(`e${i}`, "x");
    expect(window.size.entries).toBeLessThanOrEqual(10);
    expect(window.see("e99", "x")).toBe("duplicate");
    expect(window.see("e99", "y")).toBe("conflict");
  });
});

describe("the signal server", () => {
  const handle = async () => ({ outcome: "accepted" as const });

  it("with a token, refuses requests without it (401) and takes them with it, loopback included", async () => {
    const server = createSignalServer(handle, { token: "0123456789abcdef0123" });
    const { url } = await server.listen(0);
    try {
      const sent = await envelope();
      expect(await new HttpTransport({ routes: { "t.b": url } }).send(sent, "t.b")).toEqual({ outcome: "rejected", reason: expect.stringMatching(/needs its token/) });
      expect(await new HttpTransport({ routes: { "t.b": url }, token: "wrong-wrong-wrong-wrong" }).send(sent, "t.b")).toMatchObject({ outcome: "rejected" });
      expect(await new HttpTransport({ routes: { "t.b": url }, token: "0123456789abcdef0123" }).send(sent, "t.b")).toEqual({ outcome: "accepted" });
    } finally {
      server.server.closeAllConnections();
      await server.close();
    }
  });

  it("binds beyond loopback only with a token; loopback needs none", async () => {
    await expect(createSignalServer(handle).listen(0, "0.0.0.0")).rejects.toThrow(/binding 0\.0\.0\.0 \(beyond loopback\) needs a token/);
    const open = createSignalServer(handle, { token: "0123456789abcdef0123" });
    const { url } = await open.listen(0, "0.0.0.0");
    expect(url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    await open.close();
    expect(() => createSignalServer(handle, { token: "short" })).toThrow(/at least 16 characters/);
    expect(["127.0.0.1", "localhost", "::1", "[::1]", "127.1.2.3"].every(isLoopback)).toBe(true);
    expect(["0.0.0.0", "::", "192.168.1.5", "example.org"].some(isLoopback)).toBe(false);
  });

  it("answers 413 to a declared Content-Length over the limit at once, before the body arrives", async () => {
    const server = createSignalServer(handle, { maxBodyBytes: 1024 });
    const { url } = await server.listen(0);
    const port = Number(new URL(url).port);
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, "127.0.0.1", () => {
          // Headers only: a server that waited for the 100 MB body would never answer.
          socket.write(`POST /loops/t.b/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/cloudevents+json\r\nContent-Length: 100000000\r\n\r\n{`);
        });
        let text = "";
        socket.on("data", (d) => {
          text += d.toString();
          if (text.includes("\r\n\r\n")) (resolve(text), socket.destroy());
        });
        socket.on("error", reject);
      });
      expect(answer).toMatch(/^HTTP\/1\.1 413 /);
      // The near miss: a body within the limit is read and answered.
      const sent = await envelope();
      expect(await new HttpTransport({ routes: { "t.b": url } }).send(sent, "t.b")).toEqual({ outcome: "accepted" });
    } finally {
      server.server.closeAllConnections();
      await server.close();
    }
  });
});

describe("envelope fingerprints", () => {
  it("equal JSON values have equal fingerprints whatever their key order; different ones differ", () => {
    const reorder = (v: unknown): unknown =>
      v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reorder(x)])) : Array.isArray(v) ? v.map(reorder) : v;
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (x, y) => {
        expect(fingerprintOf(reorder(x))).toBe(fingerprintOf(x));
        expect(fingerprintOf(JSON.parse(JSON.stringify(x)))).toBe(fingerprintOf(JSON.parse(JSON.stringify(x))));
        if (canonicalJson(x) !== canonicalJson(y)) expect(fingerprintOf(x)).not.toBe(fingerprintOf(y));
      }),
      { numRuns: 500 },
    );
    expect(fingerprintOf(["ab", "c"])).not.toBe(fingerprintOf(["a", "bc"]));
    expect(fingerprintOf({ a: "1" })).not.toBe(fingerprintOf({ a: 1 }));
  });
});
