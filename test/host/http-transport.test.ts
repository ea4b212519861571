import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { TransportError, type Ack } from "../../src/connections/contracts.js";
import { buildEnvelope } from "../../src/connections/envelope.js";
import type { Host } from "../../src/host/index.js";
import { initSignatures } from "../../src/runtime/index.js";
import type { PulseCloudEvent } from "../../src/tokens/types.js";
import { HttpTransport, createSignalServer, type SignalServer } from "../../src/transports/http.js";
import { TRACE } from "../runtime/harness.js";
import { trailOf, connectionTo, hostWith, loadReceiver, loadSender, observed, ofType, receiverManifest, type Received } from "./signals-harness.js";

const cleanup: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** Polls until `check` holds; the bound only keeps a broken test from hanging. */
async function until(what: string, check: () => boolean, boundMs = 10_000): Promise<void> {
  const end = Date.now() + boundMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function serve(listener: RequestListener): Promise<{ server: Server; url: string }> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanup.push(() => (server.closeAllConnections(), new Promise((r) => server.close(r))));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function signalServer(handle: (loopId: string, envelope: unknown) => Promise<Ack>, options: { maxBodyBytes?: number; port?: number } = {}) {
  const server = createSignalServer(handle, options);
  const heads: IncomingHttpHeaders[] = [];
  server.server.prependListener("request", (req) => heads.push(req.headers));
  const { url } = await server.listen(options.port ?? 0);
  let open = true;
  const close = async () => {
    if (!open) return;
    open = false;
    server.server.closeAllConnections();
    await server.close();
  };
  cleanup.push(close);
  return { server, url, heads, close };
}

async function envelope(workspaceId = "ws_1"): Promise<PulseCloudEvent> {
  await initSignatures();
  return buildEnvelope({
    connection: connectionTo({ to_phase: "decide" }),
    token: { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: "act_1", status: "success" },
    loopId: "t.a",
    phaseId: "learn",
    workspaceId,
    traceId: TRACE,
    spanId: "00f067aa0ba902b7",
    signature: `blake3:${"c".repeat(64)}`,
    time: Date.UTC(2026, 3, 10),
  });
}

/** Host A runs t.a and sends through `transport`; host B runs t.b. Real time, short backoff. */
async function pairOverHttp(mode: "structured" | "binary" = "structured") {
  const b = await hostWith({});
  const bEvents = observed(b);
  const received: Received = { actions: [], inputs: [] };
  const bAudit = (await loadReceiver(b, receiverManifest(), received)).audit;
  const receiver = await signalServer((loopId, e) => b.receive(loopId, e));
  const a = await hostWith({ transport: new HttpTransport({ routes: { "t.b": receiver.url }, mode, timeoutMs: 2_000 }), signalRetry: { baseMs: 20, maxMs: 200 } });
  const aEvents = observed(a);
  const aAudit = (await loadSender(a, connectionTo())).audit;
  cleanup.push(() => b.stop());
  cleanup.push(() => a.stop());
  return { a, b, aEvents, aAudit, bEvents, received, bAudit, receiver };
}

describe("CloudEvents HTTP binding over loopback", () => {
  it.each(["structured", "binary"] as const)("%s mode delivers the envelope unchanged, with the traceparent header", async (mode) => {
    const got: { loopId: string; envelope: unknown }[] = [];
    const { url, heads } = await signalServer(async (loopId, e) => (got.push({ loopId, envelope: e }), { outcome: "accepted" }));
    // A workspace id that a raw header cannot carry: binary mode percent-encodes it.
    const sent = await envelope("équipe 東京 100%");
    expect(await new HttpTransport({ routes: { "t.b": url }, mode }).send(sent, "t.b")).toEqual({ outcome: "accepted" });

    expect(got).toEqual([{ loopId: "t.b", envelope: sent }]);
    const head = heads[0]!;
    expect(head.traceparent).toBe(sent.traceparent);
    if (mode === "structured") {
      expect(head["content-type"]).toBe("application/cloudevents+json");
      expect(Object.keys(head).filter((h) => h.startsWith("ce-"))).toEqual([]);
    } else {
      expect(head["content-type"]).toBe("application/json");
      expect(head).toMatchObject({ "ce-specversion": "1.0", "ce-id": sent.id, "ce-type": sent.type, "ce-source": sent.source, "ce-subject": sent.subject, "ce-time": sent.time, "ce-pulsetoloop": "t.b" });
      expect(head["ce-pulseworkspace"]).toBe("%C3%A9quipe%20%E6%9D%B1%E4%BA%AC%20100%25");
      // Every extension is its own ce- header, the distributed-tracing one too; the token is the body only.
      expect(head["ce-traceparent"]).toBe(sent.traceparent);
      expect(head["ce-data"]).toBeUndefined();
    }
  });

  it("carries a signal between two hosts: the receiving iteration records the emitting trace", async () => {
    const { a, aEvents, bEvents, received, bAudit, receiver } = await pairOverHttp("binary");
    const r = await a.trigger("t.a", { input: { n: 1 } });
    await until("t.b to run the signal", () => received.actions.length === 1);
    expect(received.actions).toEqual(["act_1"]);
    expect(receiver.heads[0]!.traceparent).toMatch(new RegExp(`^00-${r.trace_id}-[0-9a-f]{16}-01$`));
    await until("the delivery to be acknowledged", () => ofType(aEvents, "signal.delivered").length === 1);
    await until("t.b's iteration to finish", () => ofType(bEvents, "iteration.finished").length === 1);
    const [started] = await trailOf(bAudit, ofType(bEvents, "iteration.started")[0]!.trace_id);
    expect(started?.data).toMatchObject({ cause: { source: "loop:t.a/phase:learn", trace_id: r.trace_id } });
  });
});

describe("HTTP status codes: what the sender makes of them", () => {
  const reply = (status: number, body: string): RequestListener => (req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(status, { "content-type": "application/json" }).end(body));
  };

  it.each([
    [200, `{"outcome":"accepted"}`, { outcome: "accepted" }],
    [200, `{"outcome":"duplicate"}`, { outcome: "duplicate" }],
    [422, `{"error":{"code":"REJECTED","message":"loop t.b is stopped"}}`, { outcome: "rejected", reason: "loop t.b is stopped" }],
    [400, `{"error":{"code":"BAD_REQUEST","message":"the body is not JSON"}}`, { outcome: "rejected", reason: "the body is not JSON" }],
    [404, `not json`, { outcome: "rejected", reason: "HTTP 404" }],
    [413, `{"error":{"code":"TOO_LARGE","message":"a signal may be at most 1048576 bytes"}}`, { outcome: "rejected", reason: "a signal may be at most 1048576 bytes" }],
    [401, `{"error":{"code":"UNAUTHORIZED","message":"this receiver needs its token"}}`, { outcome: "rejected", reason: "this receiver needs its token" }],
    // A foreign CloudEvents receiver's 2xx is delivery, whatever its body (the binding asks for none).
    [202, ``, { outcome: "accepted" }],
    [204, ``, { outcome: "accepted" }],
    [200, `{"status":"ok"}`, { outcome: "accepted" }],
    [201, `<html>created</html>`, { outcome: "accepted" }],
  ])("HTTP %d %s: final, %j", async (status, body, ack) => {
    const { url } = await serve(reply(status, body));
    expect(await new HttpTransport({ routes: { "t.b": url } }).send(await envelope(), "t.b")).toEqual(ack);
  });

  it.each([
    [500, `{"error":{"code":"INTERNAL","message":"the receiver failed"}}`, /HTTP 500/],
    [503, ``, /HTTP 503/],
    [429, `{"error":{"message":"slow down"}}`, /HTTP 429/],
    [408, ``, /HTTP 408/],
  ])("HTTP %d %s: a TransportError, retried", async (status, body, message) => {
    const { url } = await serve(reply(status, body));
    await expect(new HttpTransport({ routes: { "t.b": url } }).send(await envelope(), "t.b")).rejects.toThrow(expect.objectContaining({ name: "TransportError", code: "TRANSPORT_FAILED", message: expect.stringMatching(message) }));
  });

  it("a refused connection and a receiver that never answers are TransportErrors; a loop without a route is rejected", async () => {
    const { url, close } = await signalServer(async () => ({ outcome: "accepted" }));
    await close();
    const refused = new HttpTransport({ routes: { "t.b": url } }).send(await envelope(), "t.b");
    await expect(refused).rejects.toBeInstanceOf(TransportError);
    await expect(refused).rejects.toThrow(/ECONNREFUSED/);

    const silent = await serve(() => {});
    await expect(new HttpTransport({ routes: { "t.b": silent.url }, timeoutMs: 100 }).send(await envelope(), "t.b")).rejects.toThrow(/timed out after 100 ms/);

    expect(await new HttpTransport({ routes: { "t.b": url } }).send(await envelope(), "t.c")).toEqual({ outcome: "rejected", reason: expect.stringMatching(/no route to loop t\.c/) });
  });

  it("the receiver answers malformed requests with 4xx and a valid one with 200", async () => {
    const b = await hostWith({});
    await loadReceiver(b, receiverManifest(), { actions: [], inputs: [] });
    cleanup.push(() => b.stop());
    const { url } = await signalServer((loopId, e) => b.receive(loopId, e), { maxBodyBytes: 4_096 });
    const sent = await envelope();
    const { action_id: _a, ...badToken } = sent.data as unknown as Record<string, unknown>;
    const structured = { "content-type": "application/cloudevents+json" };
    const post = async (path: string, init: RequestInit) => {
      const r = await fetch(`${url}${path}`, init);
      return [r.status, ((await r.json()) as { error?: { code?: string } }).error?.code];
    };
    expect(await post("/loops/t.b/events", { method: "POST", headers: structured, body: JSON.stringify({ ...sent, data: badToken }) })).toEqual([422, "REJECTED"]);
    expect(await post("/loops/t.zz/events", { method: "POST", headers: structured, body: JSON.stringify(sent) })).toEqual([422, "REJECTED"]);
    expect(await post("/signals", { method: "POST", headers: structured, body: JSON.stringify(sent) })).toEqual([404, "NOT_FOUND"]);
    expect(await post("/loops/t.b/events", { method: "GET" })).toEqual([405, "METHOD_NOT_ALLOWED"]);
    expect(await post("/loops/t.b/events", { method: "POST", headers: structured, body: "{" })).toEqual([400, "BAD_REQUEST"]);
    expect(await post("/loops/t.b/events", { method: "POST", headers: structured, body: "[]" })).toEqual([400, "BAD_REQUEST"]);
    expect(await post("/loops/t.b/events", { method: "POST", headers: { "content-type": "application/json", "ce-specversion": "1.0", "ce-type": sent.type, "ce-source": sent.source }, body: JSON.stringify(sent.data) })).toEqual([400, "BAD_REQUEST"]);
    expect(await post("/loops/t.b/events", { method: "POST", headers: structured, body: JSON.stringify({ ...sent, padding: "x".repeat(5_000) }) })).toEqual([413, "TOO_LARGE"]);
    // The near miss: the same envelope intact is accepted, and a second time recognised.
    const ok = await fetch(`${url}/loops/t.b/events`, { method: "POST", headers: structured, body: JSON.stringify(sent) });
    expect([ok.status, await ok.json()]).toEqual([200, { outcome: "accepted" }]);
    const again = await fetch(`${url}/loops/t.b/events`, { method: "POST", headers: structured, body: JSON.stringify(sent) });
    expect([again.status, await again.json()]).toEqual([200, { outcome: "duplicate" }]);
  });

  it("a stopped host answers 503 UNAVAILABLE, which the sender retries; started again, it accepts", async () => {
    const b = await hostWith({});
    await loadReceiver(b, receiverManifest(), { actions: [], inputs: [] });
    cleanup.push(() => b.stop());
    const { url } = await signalServer((loopId, e) => b.receive(loopId, e));
    const sent = await envelope();
    b.start();
    await b.stop();
    const down = await fetch(`${url}/loops/t.b/events`, { method: "POST", headers: { "content-type": "application/cloudevents+json" }, body: JSON.stringify(sent) });
    expect([down.status, await down.json()]).toEqual([503, { error: { code: "UNAVAILABLE", message: "the host running t.b is stopped" } }]);
    await expect(new HttpTransport({ routes: { "t.b": url } }).send(sent, "t.b")).rejects.toBeInstanceOf(TransportError);
    b.start();
    expect(await new HttpTransport({ routes: { "t.b": url } }).send(sent, "t.b")).toEqual({ outcome: "accepted" });
  });
});

describe("at-least-once over HTTP", () => {
  it("a 422 is dropped after one request; a 503 is retried until the receiver accepts", async () => {
    for (const scenario of ["422", "503 twice"] as const) {
      let hits = 0;
      const { url } = await serve((req, res) => {
        req.resume();
        req.on("end", () => {
          hits++;
          if (scenario === "422") res.writeHead(422).end(`{"error":{"code":"REJECTED","message":"no loop t.b in this host"}}`);
          else if (hits <= 2) res.writeHead(503).end();
          else res.writeHead(200).end(`{"outcome":"accepted"}`);
        });
      });
      const a = await hostWith({ transport: new HttpTransport({ routes: { "t.b": url } }), signalRetry: { baseMs: 10, maxMs: 40 } });
      cleanup.push(() => a.stop());
      const events = observed(a);
      await loadSender(a, connectionTo());
      await a.trigger("t.a", { input: { n: 1 } });
      await until("the signal to settle", () => events.some((e) => e.type === "signal.delivered" || e.type === "signal.dropped"));
      if (scenario === "422") {
        expect(ofType(events, "signal.dropped").map((e) => e.detail)).toEqual(["rejected"]);
        // Several backoff periods later, still the one request.
        await new Promise((r) => setTimeout(r, 100));
        expect(hits).toBe(1);
      } else {
        expect(ofType(events, "signal.retrying")).toHaveLength(2);
        expect(ofType(events, "signal.delivered")).toHaveLength(1);
        expect(hits).toBe(3);
      }
    }
  });

  it("survives the receiver being down: the outbox retries with backoff and delivers when it is back", async () => {
    const { a, aEvents, aAudit, received, receiver, b } = await pairOverHttp();
    const port = new URL(receiver.url).port;
    await receiver.close();
    const r = await a.trigger("t.a", { input: { n: 1 } });
    await until("three failed attempts", () => ofType(aEvents, "signal.retrying").length >= 3);
    expect(received.actions).toEqual([]);
    await signalServer((loopId, e) => b.receive(loopId, e), { port: Number(port) });
    await until("t.b to run the signal", () => received.actions.length === 1);
    await until("the delivery to be acknowledged", () => ofType(aEvents, "signal.delivered").length === 1);
    expect(received.actions).toEqual(["act_1"]);
    expect(ofType(aEvents, "signal.dropped")).toEqual([]);
    // Audited once, in the emitting iteration's trail, with every attempt counted.
    const delivered = (await trailOf(aAudit, r.trace_id)).filter((e) => e.event_type === "signal.delivered");
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.data?.attempts).toBeGreaterThanOrEqual(4);
  });
});

describe("two OS processes", () => {
  const fixture = fileURLToPath(new URL("./fixtures/signal-receiver.mjs", import.meta.url));

  /** Starts the receiver process; resolves once it listens. Its delivery lines go to `lines`. */
  async function receiverProcess(port: number, lines: { delivered: string; trace_id: string }[]): Promise<{ child: ChildProcess; url: string }> {
    const child = spawn(process.execPath, [fixture, String(port)], { stdio: ["ignore", "pipe", "inherit"] });
    const stop = () => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : (child.once("exit", () => resolve()), child.kill("SIGKILL"))));
    cleanup.push(stop);
    let url: string | undefined;
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const message = JSON.parse(line) as { listening?: string; delivered?: string; trace_id?: string };
      if (message.listening) url = message.listening;
      if (message.delivered) lines.push({ delivered: message.delivered, trace_id: message.trace_id as string });
    });
    await until("the receiver process to listen", () => url !== undefined || child.exitCode !== null);
    if (!url) throw new Error(`the receiver process exited with ${child.exitCode}`);
    return { child, url };
  }

  it("a parent host signals a child process over HTTP; killed and restarted, the child loses nothing", async () => {
    const first: { delivered: string; trace_id: string }[] = [];
    const second: { delivered: string; trace_id: string }[] = [];
    const one = await receiverProcess(0, first);
    const port = Number(new URL(one.url).port);

    const a: Host = await hostWith({ transport: new HttpTransport({ routes: { "t.b": one.url } }), signalRetry: { baseMs: 25, maxMs: 250 } });
    cleanup.push(() => a.stop());
    const events = observed(a);
    await loadSender(a, connectionTo());

    const traces: string[] = [];
    for (const n of [1, 2]) traces.push((await a.trigger("t.a", { input: { n } })).trace_id);
    await until("the child to run signals 1 and 2", () => first.length === 2);
    // Answered once their iterations committed: killed before that, the child would get them again.
    await until("signals 1 and 2 to be acknowledged", () => ofType(events, "signal.delivered").length === 2);

    one.child.kill("SIGKILL");
    await new Promise((r) => one.child.once("exit", r));
    for (const n of [3, 4]) traces.push((await a.trigger("t.a", { input: { n } })).trace_id);
    await until("signals 3 and 4 to fail and be retried", () => new Set(ofType(events, "signal.retrying").map((e) => e.event_id)).size === 2);

    await receiverProcess(port, second);
    await until("the restarted child to run signals 3 and 4", () => second.length >= 2);
    await until("every delivery to be acknowledged", () => ofType(events, "signal.delivered").length === 4);

    expect(first.map((l) => l.delivered)).toEqual(["act_1", "act_2"]);
    expect(second.map((l) => l.delivered).sort()).toEqual(["act_3", "act_4"]);
    // Each signal reached the child with the trace of the iteration that emitted it.
    expect([...first, ...second].map((l) => l.trace_id).sort()).toEqual([...traces].sort());
    expect(ofType(events, "signal.dropped")).toEqual([]);
  });
});
