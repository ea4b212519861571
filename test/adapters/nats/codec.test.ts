/**
 * What a signal looks like on NATS: the sender's pre-encoded structured headers are exactly what
 * the client's MsgHdrs would write, and anything that is not plain printable ASCII goes through
 * the client's checks instead.
 */
import { describe, expect, it } from "vitest";
import { encodeForPublish, encodeSignal } from "../../../adapters/nats/codec.js";
import { deliveryCount } from "../../../adapters/nats/receiver.js";
import type { PulseCloudEvent } from "../../../src/tokens/types.js";
import { envelopeFor } from "../../transports/contract.js";

const text = (headers: unknown) => new TextDecoder().decode((headers as { encode(): Uint8Array }).encode());

describe("NATS codec", () => {
  it("pre-encodes structured headers byte for byte as the client's MsgHdrs does, with the same body", async () => {
    const envelope = await envelopeFor(1);
    const fast = encodeForPublish(envelope);
    const slow = encodeSignal(envelope, "structured");
    expect(fast).toBeDefined();
    expect(text(fast?.headers)).toBe(text(slow.headers));
    expect(text(fast?.headers)).toContain(`Nats-Msg-Id: ${envelope.id}\r\n`);
    expect(Buffer.from(fast?.body as Uint8Array).equals(Buffer.from(slow.body))).toBe(true);
    // Without a traceparent, no such header.
    const { traceparent: _t, ...bare } = envelope as unknown as Record<string, unknown>;
    expect(text(encodeForPublish(bare as unknown as PulseCloudEvent)?.headers)).toBe(text(encodeSignal(bare as unknown as PulseCloudEvent).headers));
  });

  it("leaves an id or traceparent that is not plain printable ASCII to the client's checks", async () => {
    const envelope = (await envelopeFor(2)) as unknown as Record<string, unknown>;
    for (const id of ["évt_1", "evt 1 ", "evt\r\nX-Injected: 1", ""]) expect(encodeForPublish({ ...envelope, id } as unknown as PulseCloudEvent)).toBeUndefined();
    expect(encodeForPublish({ ...envelope, traceparent: "00-x\n" } as unknown as PulseCloudEvent)).toBeUndefined();
    expect(() => encodeSignal({ ...envelope, id: "evt\r\nX-Injected: 1" } as unknown as PulseCloudEvent)).toThrow(/\\r or \\n/);
    // The near-miss: an ordinary id with punctuation is pre-encoded.
    expect(encodeForPublish({ ...envelope, id: "evt_a-b.c:1" } as unknown as PulseCloudEvent)).toBeDefined();
  });
});

describe("a message's delivery count, from its ack subject", () => {
  const info = () => {
    throw new Error("parsed by the client");
  };
  const msg = (reply: string) => ({ reply, get info(): never { return info(); } }) as never;
  it("reads both forms of JetStream's ack subject, and leaves anything else to the client", () => {
    expect(deliveryCount(msg("$JS.ACK.PULSE_S.loop-a.3.17.12.1732460000000000000.4"))).toBe(3);
    expect(deliveryCount(msg("$JS.ACK._.ACCHASH.PULSE_S.loop-a.1.17.12.1732460000000000000.4.rnd"))).toBe(1);
    expect(deliveryCount(msg("$JS.ACK.dom.ACCHASH.PULSE_S.loop-a.12.17.12.1732460000000000000.0"))).toBe(12);
    // Not an ack subject, or not one this reads: the client's own parse decides.
    expect(() => deliveryCount(msg("_INBOX.abc.1"))).toThrow("parsed by the client");
    expect(() => deliveryCount(msg("$JS.ACK.PULSE_S.loop-a.x.17.12.1.4"))).toThrow("parsed by the client");
  });
});
