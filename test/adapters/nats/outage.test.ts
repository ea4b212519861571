/**
 * NATS going away and coming back, through a TCP proxy this test cuts: the client reconnects by
 * itself, sends that fail meanwhile are TransportErrors that at-least-once delivery retries with
 * backoff, and every signal arrives once NATS is back.
 */
import { createServer, connect as tcpConnect, type Server, type Socket } from "node:net";
import { afterEach, expect, it } from "vitest";
import { connectionTo, hostWith, loadReceiver, loadSender, observed, receiverManifest, type Received } from "../../host/signals-harness.js";
import { describeWith, natsService } from "../../helpers/services.js";
import { until } from "../../transports/contract.js";
import { natsSystem, type NatsSystem } from "./helpers.js";

/** A loopback proxy to NATS that can be cut (every connection closed, new ones refused) and restored. */
async function proxyTo(target: URL): Promise<{ url: string; cut(): void; restore(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let up = true;
  const server: Server = createServer((client) => {
    if (!up) return client.destroy();
    const upstream = tcpConnect({ host: target.hostname, port: Number(target.port || 4222) });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `nats://127.0.0.1:${port}`,
    cut: () => {
      up = false;
      for (const s of sockets) s.destroy();
    },
    restore: () => void (up = true),
    close: () => new Promise((r) => (server.close(() => r()), [...sockets].forEach((s) => s.destroy()))),
  };
}

describeWith(await natsService(), "NATS going away", (url) => {
  let sys: NatsSystem | undefined;
  afterEach(async () => {
    await sys?.close();
  });

  it("signals emitted while NATS is unreachable are retried with backoff and all delivered once it is back", async () => {
    sys = natsSystem(url);
    const proxy = await proxyTo(new URL(url.replace(/^nats:/, "http:")));
    const receiving = await sys.open();
    const b = await hostWith({});
    const received: Received = { actions: [], inputs: [] };
    await loadReceiver(b, receiverManifest(), received);
    b.start();
    await receiving.serve(b);
    // The sender reaches NATS through the proxy only.
    const { NatsTransport } = await import("../../../adapters/nats/index.js");
    const viaProxy = await NatsTransport.connect(`${proxy.url}?system=${sys.system}`, { publishTimeoutMs: 1_000 });
    const a = await hostWith({ transport: viaProxy, signalRetry: { baseMs: 100, maxMs: 400 } });
    const events = observed(a);
    await loadSender(a, connectionTo());
    a.start();
    await a.trigger("t.a", { input: { n: 1 } });
    await until("the first signal", () => received.actions.length === 1);
    proxy.cut();
    for (let n = 2; n <= 4; n++) await a.trigger("t.a", { input: { n } });
    await until("retries while NATS is away", () => events.filter((e) => e.type === "signal.retrying").length >= 3, 20_000);
    expect(received.actions).toEqual(["act_1"]);
    proxy.restore();
    await until("every signal after NATS came back", () => received.actions.length === 4, 30_000);
    await b.settled();
    expect(received.actions.sort()).toEqual(["act_1", "act_2", "act_3", "act_4"]);
    expect(events.filter((e) => e.type === "signal.dropped")).toEqual([]);
    // A host whose NATS is unreachable still stops, within its bounds (nothing waits for ever).
    proxy.cut();
    const stopping = Date.now();
    await a.stop({ timeoutMs: 2_000 });
    expect(Date.now() - stopping).toBeLessThan(20_000);
    await b.stop();
    await proxy.close();
  }, 90_000);
});
