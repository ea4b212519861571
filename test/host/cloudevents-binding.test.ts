// What pulse sends over the CloudEvents HTTP binding, read back the way a foreign receiver would:
// by the cloudevents SDK's own parser and checked against the CloudEvents JSON schema the SDK
// ships, in structured and binary mode. Redirects are not followed; a token is sent when set.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { HTTP, type CloudEvent } from "cloudevents";
import { afterEach, describe, expect, it } from "vitest";
import { buildEnvelope } from "../../src/connections/envelope.js";
import { initSignatures } from "../../src/runtime/index.js";
import { HttpTransport } from "../../src/transports/http.js";
import { TRACE } from "../runtime/harness.js";
import { connectionTo } from "./signals-harness.js";

/** The CloudEvents Specification JSON Schema, as the SDK ships it compiled. */
const specSchema = createRequire(import.meta.url)("cloudevents/dist/schema/v1.js") as ((data: unknown) => boolean) & { errors?: unknown };

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function capture(status = 202, extra: Record<string, string> = {}) {
  const seen: { headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => (seen.push({ headers: req.headers, body }), res.writeHead(status, extra).end()));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function envelope() {
  await initSignatures();
  return buildEnvelope({
    connection: connectionTo({ to_phase: "decide" }),
    token: { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: "act_1", status: "success" },
    loopId: "t.a",
    phaseId: "learn",
    workspaceId: "équipe 1",
    traceId: TRACE,
    spanId: "00f067aa0ba902b7",
    signature: `blake3:${"c".repeat(64)}`,
    time: Date.UTC(2026, 3, 10),
  });
}

describe("the CloudEvents HTTP binding, as a foreign receiver reads it", () => {
  it.each(["structured", "binary"] as const)("%s mode: the SDK's parser rebuilds the event, distributed tracing included, valid against the spec's JSON schema", async (mode) => {
    const { url, seen } = await capture();
    const sent = await envelope();
    // A bare 202 from a foreign receiver is delivery.
    expect(await new HttpTransport({ routes: { "t.b": url }, mode }).send(sent, "t.b")).toEqual({ outcome: "accepted" });
    const { headers, body } = seen[0]!;
    if (mode === "structured") expect(headers["content-type"]).toBe("application/cloudevents+json"); // no charset parameter
    else expect(headers["content-type"]).toBe("application/json");
    const event = HTTP.toEvent({ headers: headers as Record<string, string>, body }) as CloudEvent<unknown>;
    expect(event.validate()).toBe(true);
    expect({ id: event.id, type: event.type, source: event.source, subject: event.subject, time: event.time, specversion: event.specversion }).toEqual({ id: sent.id, type: sent.type, source: sent.source, subject: sent.subject, time: sent.time, specversion: "1.0" });
    expect(event.traceparent).toBe(sent.traceparent);
    // Binary mode percent-encodes header values as the binding requires; the SDK hands them over undecoded.
    expect(mode === "binary" ? decodeURIComponent(String(event.pulseworkspace)) : event.pulseworkspace).toBe("équipe 1");
    expect(event.data).toEqual(sent.data);
    const asJson = mode === "structured" ? JSON.parse(body) : JSON.parse(JSON.stringify(event));
    expect(specSchema(asJson), JSON.stringify(specSchema.errors)).toBe(true);
  });

  it("a redirect is not followed: the signal is rejected naming where it pointed", async () => {
    const target = await capture(200);
    const { url } = await capture(307, { location: `${target.url}/loops/t.b/events` });
    for (const mode of ["structured", "binary"] as const) {
      expect(await new HttpTransport({ routes: { "t.b": url }, mode }).send(await envelope(), "t.b")).toEqual({ outcome: "rejected", reason: `HTTP 307 redirecting to "${target.url}/loops/t.b/events", not followed: route t.b to the receiver itself` });
      expect(await new HttpTransport({ routes: { "t.b": url }, mode, fetch }).send(await envelope(), "t.b")).toMatchObject({ outcome: "rejected" });
    }
    expect(target.seen).toEqual([]);
  });

  it("sends the receivers' token as a bearer token when one is set, and none otherwise", async () => {
    const { url, seen } = await capture();
    await new HttpTransport({ routes: { "t.b": url }, token: "s3cret-s3cret-s3cret" }).send(await envelope(), "t.b");
    await new HttpTransport({ routes: { "t.b": url } }).send(await envelope(), "t.b");
    expect(seen.map((r) => r.headers.authorization)).toEqual(["Bearer s3cret-s3cret-s3cret", undefined]);
  });
});
