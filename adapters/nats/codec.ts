/**
 * A signal as a NATS message. `cloudevents` has no NATS binding, so this follows its HTTP
 * binding, whose headers NATS carries the same way:
 *
 *   structured (sent by default)  content-type: application/cloudevents+json; traceparent;
 *                                 the whole envelope as the body
 *   binary (NatsTransport's       ce-specversion, ce-id, ce-type, ce-source, ce-subject, ce-time
 *   mode: "binary")               and one ce-<name> per extension, percent-encoded;
 *                                 content-type: application/json; traceparent; the token as data
 *
 * Both are accepted. Nats-Msg-Id is the envelope id, so JetStream stores a republished signal
 * once. Structured is the default, as over HTTP, and because headers are what a NATS message
 * costs most to write and read: the client builds and parses them in JavaScript, and fourteen
 * of them took about four times the CPU of three (bench/nats.bench.ts, docs/benchmarks.md).
 */
import { headers as natsHeaders, type MsgHdrs } from "@nats-io/transport-node";
import type { PulseCloudEvent } from "../../src/tokens/types.js";
import { binary, decodeHeaderValue } from "../../src/transports/http.js";

export interface EncodedSignal {
  headers: MsgHdrs;
  body: Uint8Array;
}

/** Printable ASCII: a header value that needs no check (no CR or LF) and no trimming. */
const PLAIN_HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * Structured mode as it is published: encodeSignal's headers, written as NATS writes them
 * (`NATS/1.0`, a `name: value` line each, a blank line) in one string. The client's MsgHdrs
 * checks, canonicalises and copies each header on set and builds the same string on encode:
 * about a tenth of a signal's cost to its sender (bench/nats.bench.ts). Undefined for an id or
 * traceparent that is not plain printable ASCII (encodeSignal then, which checks them).
 */
export function encodeForPublish(envelope: PulseCloudEvent): { headers: { encode(): Uint8Array }; body: Uint8Array } | undefined {
  const tp = envelope.traceparent;
  if (!PLAIN_HEADER_VALUE.test(envelope.id) || (tp !== undefined && !PLAIN_HEADER_VALUE.test(tp))) return undefined;
  // Buffer.from, not TextEncoder: a short string lands in Node's shared pool instead of an
  // ArrayBuffer of its own, which the collector pays for (the client copies both out at once).
  const head = Buffer.from(`NATS/1.0\r\ncontent-type: application/cloudevents+json\r\n${tp ? `traceparent: ${tp}\r\n` : ""}Nats-Msg-Id: ${envelope.id}\r\n\r\n`, "latin1");
  return { headers: { encode: () => head }, body: Buffer.from(JSON.stringify(envelope), "utf8") };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

export type NatsContentMode = "structured" | "binary";

export function encodeSignal(envelope: PulseCloudEvent, mode: NatsContentMode = "structured"): EncodedSignal {
  const headers = natsHeaders();
  if (mode === "structured") {
    headers.set("content-type", "application/cloudevents+json");
    // Also a header, so tracing tools that read NATS headers see the emitting iteration's trace.
    if (envelope.traceparent) headers.set("traceparent", envelope.traceparent);
    headers.set("Nats-Msg-Id", envelope.id);
    return { headers, body: encoder.encode(JSON.stringify(envelope)) };
  }
  const { headers: fields, body } = binary(envelope);
  for (const [name, value] of Object.entries(fields)) headers.set(name, value);
  headers.set("Nats-Msg-Id", envelope.id);
  return { headers, body: encoder.encode(body) };
}

/** Why a message is not a signal: it is terminated (never redelivered) with this reason. */
export class UndecodableSignal extends Error {
  override readonly name = "UndecodableSignal";
}

/**
 * The envelope a message carries, as an untrusted object: the receiving host validates it
 * (readEnvelope) and rejects what is not a valid PULSE envelope, with its reason.
 */
export function decodeSignal(headers: MsgHdrs | undefined, body: Uint8Array): Record<string, unknown> {
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    throw new UndecodableSignal("the message body is not UTF-8");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UndecodableSignal("the message body is not JSON");
  }
  const fields = new Map<string, string>();
  // MsgHdrs iterates as [name, values]; get() per name would search the map again for each.
  if (headers) for (const [key, values] of headers) fields.set(key.toLowerCase(), values[0] ?? "");
  const contentType = (fields.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  let envelope: Record<string, unknown>;
  if (contentType === "application/cloudevents+json" || (!fields.has("ce-specversion") && isObject(parsed) && "specversion" in parsed)) {
    if (!isObject(parsed)) throw new UndecodableSignal("a structured-mode body must be a JSON object");
    envelope = parsed; // just parsed: ours to complete with the traceparent header below
  } else {
    envelope = { datacontenttype: contentType || "application/json", data: parsed };
    for (const [name, value] of fields) {
      // data and its content type come from the body and content-type, never from a header.
      if (!name.startsWith("ce-") || name === "ce-data" || name === "ce-datacontenttype") continue;
      try {
        envelope[name.slice(3)] = decodeHeaderValue(value);
      } catch {
        throw new UndecodableSignal(`header ${name} is not percent-encoded UTF-8`);
      }
    }
    for (const required of ["specversion", "type", "source", "id"]) {
      if (envelope[required] === undefined) throw new UndecodableSignal("binary mode needs ce-specversion, ce-type, ce-source and ce-id headers");
    }
  }
  const traceparent = fields.get("traceparent");
  if (traceparent !== undefined && envelope.traceparent === undefined) envelope.traceparent = traceparent;
  return envelope;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
