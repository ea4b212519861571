import { describe, expect, it } from "vitest";
import { createSignalServer, HttpTransport } from "../../src/transports/http.js";
import { TransportError, type Ack, type SignalReceiver } from "../../src/connections/contracts.js";
import { envelopeFor, transportContract } from "./contract.js";

transportContract({
  name: "HTTP (CloudEvents binary mode)",
  answersForReceiver: true,
  open: async () => {
    const receivers = new Map<string, SignalReceiver>();
    const server = createSignalServer(async (loopId, envelope) => {
      const receiver = receivers.get(loopId);
      return receiver ? receiver.receive(envelope as never) : { outcome: "rejected", reason: `no loop ${loopId}` };
    });
    const { url } = await server.listen(0);
    const routes: Record<string, string> = {};
    const transport = new HttpTransport({ routes, mode: "binary", timeoutMs: 5_000 });
    return {
      transport,
      serve: async (loopId, receiver) => {
        receivers.set(loopId, receiver);
        routes[loopId] = url;
      },
      close: async () => {
        await transport.close();
        server.server.closeAllConnections();
        await server.close();
      },
    };
  },
});

describe("HTTP: answered once the receiver's iteration committed", () => {
  it("holds the answer until the commit, answers 503 (a TransportError, retried) when it fails, and a settled duplicate at once", async () => {
    let release: (() => void) | undefined;
    let fail: ((e: Error) => void) | undefined;
    const answers: (() => Ack)[] = [
      () => ({ outcome: "accepted", committed: new Promise<void>((resolve) => (release = resolve)) }),
      () => ({ outcome: "accepted", committed: new Promise<void>((_, reject) => (fail = reject)) }),
      () => ({ outcome: "duplicate" }),
    ];
    const server = createSignalServer(async () => (answers.shift() as () => Ack)());
    const { url } = await server.listen(0);
    const transport = new HttpTransport({ routes: { "t.b": url } });
    try {
      let answered = false;
      const first = transport.send(await envelopeFor(1), "t.b").then((ack) => ((answered = true), ack));
      await new Promise((r) => setTimeout(r, 100));
      expect(answered).toBe(false);
      release?.();
      expect(await first).toEqual({ outcome: "accepted" });
      const second = transport.send(await envelopeFor(2), "t.b");
      await new Promise((r) => setTimeout(r, 50));
      fail?.(new Error("disk full"));
      const error = await second.then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(TransportError);
      expect((error as Error).message).toMatch(/HTTP 503/);
      // The near-miss: a duplicate whose iteration committed before is answered at once.
      expect(await transport.send(await envelopeFor(2), "t.b")).toEqual({ outcome: "duplicate" });
    } finally {
      await transport.close();
      await server.close();
    }
  });
});
