/**
 * DSSE v1 envelopes (https://github.com/secure-systems-lab/dsse): the signature covers the PAE of
 * the payload type and the payload bytes, never the JSON envelope, so re-serialising the envelope
 * keeps it valid while any change to the type, the payload or the signature breaks it.
 */
import { sign, verify, type KeyObject } from "node:crypto";

export interface DsseSignature {
  /** An unauthenticated hint naming the key; DSSE forbids basing any decision on it. */
  keyid: string;
  sig: string;
}

export interface DsseEnvelope {
  payloadType: string;
  payload: string;
  signatures: DsseSignature[];
}

/** keyids: what the signatures that verify say about their key (unsigned hints), where they say it. */
export type EnvelopeCheck = { ok: true; payloadType: string; payload: Buffer; keyids: string[] } | { ok: false; reason: string };

/** "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in bytes, decimal. */
export function pae(payloadType: string, payload: Buffer): Buffer {
  const type = Buffer.from(payloadType, "utf8");
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${payload.length} `), payload]);
}

export function signEnvelope(payload: Buffer, payloadType: string, privateKey: KeyObject, keyid: string): DsseEnvelope {
  const sig = sign(null, pae(payloadType, payload), privateKey);
  return { payloadType, payload: payload.toString("base64"), signatures: [{ keyid, sig: sig.toString("base64") }] };
}

/**
 * Standard or URL-safe base64, padded or not (DSSE requires accepting both), and canonical:
 * Buffer.from would skip junk characters and ignore stray bits, letting different strings
 * stand for the same bytes.
 */
export function decodeBase64(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(text)) return undefined;
  const bare = text.replace(/=+$/, "").replace(/-/g, "+").replace(/_/g, "/");
  if (bare.length % 4 === 1) return undefined;
  if (text.includes("=") && text.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(bare, "base64");
  return bytes.toString("base64").replace(/=+$/, "") === bare ? bytes : undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Accepted when at least one signature verifies with the key (DSSE's threshold of one): other
 * signatures beside it, bogus ones included, are ignored, as DSSE prescribes for signatures by
 * keys the verifier does not hold.
 */
export function verifyEnvelope(envelope: unknown, publicKey: KeyObject): EnvelopeCheck {
  if (!isObject(envelope)) return { ok: false, reason: "the envelope is not a JSON object" };
  const { payloadType, payload, signatures } = envelope;
  if (typeof payloadType !== "string") return { ok: false, reason: "the envelope has no payloadType string" };
  if (typeof payload !== "string") return { ok: false, reason: "the envelope has no payload string" };
  if (!Array.isArray(signatures) || signatures.length === 0) return { ok: false, reason: "the envelope has no signatures" };
  const body = decodeBase64(payload);
  if (!body) return { ok: false, reason: "the envelope's payload is not valid base64" };
  const message = pae(payloadType, body);
  let verified = false;
  const keyids: string[] = [];
  for (const s of signatures) {
    if (!isObject(s) || typeof s.sig !== "string") continue;
    const sig = decodeBase64(s.sig);
    if (!sig) continue;
    try {
      if (!verify(null, message, publicKey, sig)) continue;
    } catch {
      continue; // a malformed signature is just one that does not verify
    }
    verified = true;
    if (typeof s.keyid === "string") keyids.push(s.keyid);
  }
  if (verified) return { ok: true, payloadType, payload: body, keyids };
  const which = signatures.length === 1 ? "the envelope's signature does not verify" : `none of the envelope's ${signatures.length} signatures verifies`;
  return { ok: false, reason: `${which} with this public key (wrong key, or the envelope was altered)` };
}
