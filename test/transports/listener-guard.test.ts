/**
 * The guard every pulse listener runs before anything else, over real HTTP: the signal listener
 * of `pulse run --listen` and `pulse substrate serve`'s server refuse a foreign Origin, a
 * rebinding Host and (the signal listener) a body type a page can send unasked; their near
 * misses pass. And, over any host name a page could use, only this listener's names pass.
 */
import { createServer, request, type Server } from "node:http";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSignalServer, type SignalServer } from "../../src/transports/http.js";
import { guardRequest, listenerGuard, parseHost } from "../../src/transports/listener-guard.js";

function send(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers, setHost: !("host" in headers) }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const ENVELOPE = JSON.stringify({ specversion: "1.0", id: "sig-1", source: "pulse://loops/a", type: "pulse.signal.test", data: { n: 1 } });

describe("the signal listener (pulse run --listen)", () => {
  let server: SignalServer;
  let port: number;
  const received: unknown[] = [];

  beforeAll(async () => {
    server = createSignalServer(async (_loop, envelope) => {
      received.push(envelope);
      return { outcome: "accepted" };
    }, { allowOrigins: ["http://dashboard.local:8080"] });
    port = Number(new URL((await server.listen(0)).url).port);
  });
  afterAll(() => server.close());

  it("refuses what a page can send: no content type, text/plain, a foreign Origin, a rebinding Host", async () => {
    const attacks: Record<string, string>[] = [
      {},
      { "content-type": "text/plain" },
      { "content-type": "application/cloudevents+json", origin: "http://evil.example" },
      { "content-type": "application/cloudevents+json", host: `evil.example:${port}` },
      { "content-type": "application/cloudevents+json", "sec-fetch-site": "cross-site" },
    ];
    for (const h of attacks) {
      const r = await send(port, "POST", "/loops/b/events", h, ENVELOPE);
      expect([403, 415], JSON.stringify(h)).toContain(r.status);
      expect(r.headers["access-control-allow-origin"]).toBeUndefined();
    }
    expect(received).toHaveLength(0);
  });

  it("takes the near misses: structured and binary mode, loopback names with and without port, an allowed origin", async () => {
    const ok: Record<string, string>[] = [
      { "content-type": "application/cloudevents+json" },
      { "content-type": "application/cloudevents+json; charset=utf-8", host: "localhost" },
      { "content-type": "application/cloudevents+json", host: `[::1]:${port}` },
      { "content-type": "application/cloudevents+json", origin: "http://dashboard.local:8080" },
      { "content-type": "application/cloudevents+json", origin: `http://127.0.0.1:${port}` },
    ];
    for (const h of ok) expect((await send(port, "POST", "/loops/b/events", h, ENVELOPE)).status, JSON.stringify(h)).toBe(200);
    const binary = await send(port, "POST", "/loops/b/events", { "content-type": "text/plain", "ce-specversion": "1.0", "ce-id": "sig-2", "ce-source": "pulse://loops/a", "ce-type": "pulse.signal.test" }, '"hello"');
    expect(binary.status).toBe(200);
    expect(received).toHaveLength(ok.length + 1);
  });
});

describe("listenerGuard", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (guardRequest(guard, req, res)) return;
      res.end("ok");
    });
    const guard = listenerGuard(server, { allowHosts: ["build.box:9000"] });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it("refuses every host name a page could be served from, and no loopback name", async () => {
    const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);
    await fc.assert(
      fc.asyncProperty(fc.array(label, { minLength: 1, maxLength: 3 }), fc.constantFrom("", `:${port}`, ":80"), async (labels, suffix) => {
        const name = `${labels.join(".")}.example`;
        const r = await send(port, "GET", "/", { host: `${name}${suffix}` });
        expect(r.status).toBe(403);
        expect(JSON.parse(r.text).error.code).toBe("FORBIDDEN_HOST");
      }),
      { numRuns: 40 },
    );
    for (const host of ["localhost", `localhost:${port}`, "127.0.0.1", `127.0.0.1:${port}`, "[::1]", `[::1]:${port}`, "build.box:9000"]) {
      expect((await send(port, "GET", "/", { host })).status, host).toBe(200);
    }
    for (const host of [`localhost:${port + 1}`, "build.box", `build.box:${port}`, "127.0.0.1.example", "[::2]"]) {
      expect((await send(port, "GET", "/", { host })).status, host).toBe(403);
    }
  });

  it("parses Host headers as browsers send them", () => {
    expect(parseHost("LocalHost:3002")).toEqual({ name: "localhost", port: 3002 });
    expect(parseHost("[::1]")).toEqual({ name: "::1" });
    expect(parseHost("a b")).toBeUndefined();
    expect(parseHost("host:port")).toBeUndefined();
  });
});
