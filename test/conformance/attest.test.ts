/**
 * Attestations: DSSE envelopes over an in-toto statement, Ed25519 keys, and verification that
 * refuses any altered byte, the wrong key, the wrong report or runtime, and what the policy
 * does not accept.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createHash, createPublicKey, generateKeyPairSync, sign, verify } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import {
  KeyError,
  PAYLOAD_TYPE,
  attestReport,
  buildStatement,
  decodeBase64,
  generateKeyPair,
  keyidOf,
  loadPrivateKey,
  loadPublicKey,
  pae,
  sha256Hex,
  signEnvelope,
  verifyAttestation,
  verifyEnvelope,
  writeKeyPair,
  type DsseEnvelope,
} from "../../conformance/attest/index.js";
import type { ConformanceReport } from "../../conformance/report/types.js";
import { exampleBlock, readDoc } from "../format/markdown-blocks.js";
import { DIGEST, reportBytes, sampleReport } from "./sample-report.js";
import { itWhen } from "../helpers/requires.js";

const SPEC_NUMBERS = Array.from({ length: 12 }, (_, i) => i + 1);

const pair = generateKeyPair();
const privateKey = loadPrivateKey(pair.privateKeyPem);
const other = generateKeyPair();

const tmp = mkdtempSync(join(tmpdir(), "pulse-attest-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function attested(report: ConformanceReport = sampleReport()): { envelope: DsseEnvelope; bytes: Buffer } {
  const bytes = reportBytes(report);
  return { envelope: attestReport(report, bytes, privateKey, pair.keyid), bytes };
}

const flip = (buf: Buffer, index: number, mask: number): Buffer => {
  const copy = Buffer.from(buf);
  copy[index] = copy[index]! ^ mask;
  return copy;
};

describe("PAE", () => {
  it("matches the DSSE specification's test vector", () => {
    expect(pae("http://example.com/HelloWorld", Buffer.from("hello world")).toString("latin1")).toBe("DSSEv1 29 http://example.com/HelloWorld 11 hello world");
  });

  it("is byte-exact: the specification's published ECDSA signature verifies over it", () => {
    // The key and signature printed in DSSE's protocol.md (P-256, raw r||s).
    const coordinate = (n: bigint): string => Buffer.from(n.toString(16).padStart(64, "0"), "hex").toString("base64url");
    const key = createPublicKey({
      key: {
        kty: "EC",
        crv: "P-256",
        x: coordinate(46950820868899156662930047687818585632848591499744589407958293238635476079160n),
        y: coordinate(5640078356564379163099075877009565129882514886557779369047442380624545832820n),
      },
      format: "jwk",
    });
    const sig = Buffer.from("A3JqsQGtVsJ2O2xqrI5IcnXip5GToJ3F+FnZ+O88SjtR6rDAajabZKciJTfUiHqJPcIAriEGAHTVeCUjW2JIZA==", "base64");
    const message = pae("http://example.com/HelloWorld", Buffer.from("hello world"));
    expect(verify("sha256", message, { key, dsaEncoding: "ieee-p1363" }, sig)).toBe(true);
    expect(verify("sha256", pae("http://example.com/HelloWorld", Buffer.from("hello worle")), { key, dsaEncoding: "ieee-p1363" }, sig)).toBe(false);
  });

  it("counts bytes, not characters", () => {
    expect(pae("tÿpe", Buffer.from("é")).toString("utf8")).toBe("DSSEv1 5 tÿpe 2 é");
    expect(pae("", Buffer.alloc(0)).toString()).toBe("DSSEv1 0  0 ");
  });
});

describe("keys", () => {
  it("round-trip through PEM, with a keyid any holder of the .pub can recompute", () => {
    expect(pair.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(pair.publicKeyPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    const pub = loadPublicKey(pair.publicKeyPem);
    const der = pub.export({ type: "spki", format: "der" });
    expect(pair.keyid).toBe(`sha256:${createHash("sha256").update(der).digest("hex")}`);
    expect(keyidOf(pub)).toBe(pair.keyid);
    const message = Buffer.from("message");
    expect(verify(null, message, pub, sign(null, message, privateKey))).toBe(true);
    expect(pair.keyid).not.toBe(other.keyid);
  });

  it("refuse what they cannot use, saying why", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 });
    const rsaPrivate = rsa.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const rsaPublic = rsa.publicKey.export({ type: "spki", format: "pem" }).toString();
    const cases: [() => unknown, RegExp][] = [
      [() => loadPrivateKey("not a key"), /not a PEM file/],
      [() => loadPublicKey(""), /not a PEM file/],
      [() => loadPrivateKey(rsaPrivate), /rsa key; pulse-conform signs with Ed25519 only/],
      [() => loadPublicKey(rsaPublic), /rsa key; pulse-conform signs with Ed25519 only/],
      [() => loadPrivateKey(pair.publicKeyPem), /holds a public key/],
      [() => loadPublicKey(pair.privateKeyPem), /holds a private key/],
      [() => loadPrivateKey(pair.privateKeyPem.replace(/^MC4C/m, "!!!!")), /could not be read/],
    ];
    for (const [load, message] of cases) {
      expect(load).toThrow(KeyError);
      expect(load).toThrow(message);
    }
  });

  it("keygen writes the private key owner-only and never overwrites", () => {
    const dir = mkdtempSync(join(tmp, "keys-"));
    const written = writeKeyPair(dir);
    expect(statSync(written.privateKeyPath).mode & 0o777).toBe(0o600);
    const pub = loadPublicKey(readFileSync(written.publicKeyPath, "utf8"));
    expect(keyidOf(pub)).toBe(written.keyid);
    const key = loadPrivateKey(readFileSync(written.privateKeyPath, "utf8"));
    expect(verify(null, Buffer.from("x"), pub, sign(null, Buffer.from("x"), key))).toBe(true);
    const before = readFileSync(written.privateKeyPath, "utf8");
    expect(() => writeKeyPair(dir)).toThrow(/already exists/);
    expect(readFileSync(written.privateKeyPath, "utf8")).toBe(before);
  });
});

describe("DSSE envelopes", () => {
  it("carry the payload, its type and a keyed signature", () => {
    const env = signEnvelope(Buffer.from("hello world"), "http://example.com/HelloWorld", privateKey, pair.keyid);
    expect(env).toMatchObject({ payloadType: "http://example.com/HelloWorld", payload: "aGVsbG8gd29ybGQ=", signatures: [{ keyid: pair.keyid }] });
    const check = verifyEnvelope(env, loadPublicKey(pair.publicKeyPem));
    expect(check).toEqual({ ok: true, payloadType: "http://example.com/HelloWorld", payload: Buffer.from("hello world"), keyids: [pair.keyid] });
  });

  it("refuse a changed payload type, junk, and a wrong key", () => {
    const pub = loadPublicKey(pair.publicKeyPem);
    const env = signEnvelope(Buffer.from("hello"), "a/b", privateKey, pair.keyid);
    expect(verifyEnvelope({ ...env, payloadType: "a/c" }, pub).ok).toBe(false);
    expect(verifyEnvelope(env, loadPublicKey(other.publicKeyPem))).toMatchObject({ ok: false, reason: expect.stringMatching(/wrong key/) });
    for (const junk of [null, [], "x", { ...env, signatures: [] }, { ...env, payload: "a!b" }, { ...env, payload: 3 }, { ...env, signatures: [{ sig: "%%" }] }]) {
      expect(verifyEnvelope(junk, pub).ok).toBe(false);
    }
  });

  it("decode standard and URL-safe base64, padded or not, and nothing loose", () => {
    const bytes = Buffer.from([0xfb, 0xff, 0xbf, 0x01]);
    for (const text of ["+/+/AQ==", "+/+/AQ", "-_-_AQ==", "-_-_AQ"]) expect(decodeBase64(text)).toEqual(bytes);
    for (const text of ["+/+/AR==", "+/+/A", "+/+/AQ=", "+/ +/AQ==", "+/+/AQ===", "+/+/AQ==\n"]) expect(decodeBase64(text), text).toBeUndefined();
  });
});

describe("attestation", () => {
  const publicKeyPem = pair.publicKeyPem;

  it("signs an in-toto statement about the report and the runtime, which verifies", () => {
    const report = sampleReport();
    const { envelope, bytes } = attested(report);
    expect(envelope.payloadType).toBe(PAYLOAD_TYPE);
    const result = verifyAttestation({ envelope, publicKeyPem, reportBytes: bytes, runtimeDigest: DIGEST });
    expect(result.failures).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.statement).toEqual(buildStatement(report, bytes));
    expect(result.statement!.subject).toEqual([
      { name: "conformance-report.json", digest: { sha256: sha256Hex(bytes) } },
      { name: "pulse-reference", digest: { sha256: "ab".repeat(32) } },
    ]);
    expect(result.statement!.predicate.test_results[1]).toEqual({ number: 2, name: "feedback_path_cannot_be_skipped", status: "passed" });
  });

  it("fails on any flipped byte of the payload, the signature or the report; re-serialising passes (property)", () => {
    const { envelope, bytes } = attested();
    const payload = Buffer.from(envelope.payload, "base64");
    const sig = Buffer.from(envelope.signatures[0]!.sig, "base64");
    const mask = fc.integer({ min: 1, max: 255 });
    const withPayload = (p: Buffer): DsseEnvelope => ({ ...envelope, payload: p.toString("base64") });
    const withSig = (s: Buffer): DsseEnvelope => ({ ...envelope, signatures: [{ ...envelope.signatures[0]!, sig: s.toString("base64") }] });
    fc.assert(
      fc.property(fc.nat({ max: payload.length - 1 }), mask, (i, m) => {
        expect(verifyAttestation({ envelope: withPayload(flip(payload, i, m)), publicKeyPem, reportBytes: bytes }).ok).toBe(false);
      }),
    );
    fc.assert(
      fc.property(fc.nat({ max: sig.length - 1 }), mask, (i, m) => {
        expect(verifyAttestation({ envelope: withSig(flip(sig, i, m)), publicKeyPem, reportBytes: bytes }).ok).toBe(false);
      }),
    );
    fc.assert(
      fc.property(fc.nat({ max: bytes.length - 1 }), mask, (i, m) => {
        const result = verifyAttestation({ envelope, publicKeyPem, reportBytes: flip(bytes, i, m) });
        expect(result.ok).toBe(false);
        expect(result.failures[0]).toMatch(/not the attested report/);
      }),
    );
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), fc.constantFrom(0, 2, "\t"), (urlSafe, reorder, indent) => {
        const encode = (b64: string): string => (urlSafe ? b64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "") : b64);
        const signatures = envelope.signatures.map((s) => (reorder ? { sig: encode(s.sig), keyid: s.keyid } : { keyid: s.keyid, sig: encode(s.sig) }));
        const shape = reorder ? { signatures, payload: encode(envelope.payload), payloadType: envelope.payloadType } : { ...envelope, payload: encode(envelope.payload), signatures };
        const reparsed: unknown = JSON.parse(JSON.stringify(shape, null, indent));
        expect(verifyAttestation({ envelope: reparsed, publicKeyPem, reportBytes: bytes }).failures).toEqual([]);
      }),
    );
  });

  it("fails with another public key, or with an unusable one", () => {
    const { envelope, bytes } = attested();
    const wrong = verifyAttestation({ envelope, publicKeyPem: other.publicKeyPem, reportBytes: bytes });
    expect(wrong.ok).toBe(false);
    expect(wrong.statement).toBeUndefined();
    expect(wrong.failures).toEqual([expect.stringMatching(/^the signature does not verify: .*wrong key/)]);
    expect(verifyAttestation({ envelope, publicKeyPem: pair.privateKeyPem }).failures).toEqual([expect.stringMatching(/holds a private key/)]);
  });

  it("reports what the policy does not accept, each as a sentence", () => {
    const failing = attested(sampleReport({ 2: "failed" }));
    const refused = verifyAttestation({ envelope: failing.envelope, publicKeyPem, reportBytes: failing.bytes });
    expect(refused.ok).toBe(false);
    expect(refused.failures).toEqual(["the attested verdict is nonconformant; the policy requires conformant"]);
    expect(refused.statement?.predicate.verdict).toBe("nonconformant");
    expect(verifyAttestation({ envelope: failing.envelope, publicKeyPem, policy: { verdict: "nonconformant" } }).ok).toBe(true);

    const partial = attested(sampleReport({ 3: "failed" }, [1, 2, 3]));
    expect(verifyAttestation({ envelope: partial.envelope, publicKeyPem, reportBytes: partial.bytes, policy: { verdict: "nonconformant" } }).failures).toEqual([
      "the run was not a certification (a filtered or partial run); accept it only with --allow-uncertified",
    ]);
    expect(verifyAttestation({ envelope: partial.envelope, publicKeyPem, policy: { verdict: "nonconformant", requireCertification: false } }).ok).toBe(true);

    const ok = attested();
    expect(verifyAttestation({ envelope: ok.envelope, publicKeyPem, policy: { suiteVersion: "0.2.0" } }).failures).toEqual([
      "the report was made by suite version 0.1.0; the policy requires 0.2.0",
    ]);
  });

  it("--allow-uncertified accepts a filtered run whose every test passed, and nothing less", () => {
    const uncertified = { requireCertification: false };
    const filtered = attested(sampleReport({ 3: "warned" }, [2, 3]));
    expect(verifyAttestation({ envelope: filtered.envelope, publicKeyPem, reportBytes: filtered.bytes, policy: uncertified })).toMatchObject({ ok: true, failures: [], acceptedFiltered: true });
    // Without the flag the same run is refused twice over: its verdict and its certification.
    expect(verifyAttestation({ envelope: filtered.envelope, publicKeyPem }).failures).toEqual([
      "the attested verdict is incomplete; the policy requires conformant",
      "the run was not a certification (a filtered or partial run); accept it only with --allow-uncertified",
    ]);
    for (const [statuses, numbers, failure] of [
      [{ 2: "errored" }, [1, 2], "the attested verdict is incomplete: not every test it ran passed; the policy requires conformant"],
      [{ 2: "failed" }, [1, 2], "the attested verdict is nonconformant; the policy requires conformant"],
      [{ 5: "not_tested" }, SPEC_NUMBERS, "the attested verdict is incomplete: not every test it ran passed; the policy requires conformant"],
    ] as const) {
      const run = attested(sampleReport(statuses, numbers));
      expect(verifyAttestation({ envelope: run.envelope, publicKeyPem, policy: uncertified }).failures, JSON.stringify(statuses)).toEqual([failure]);
    }
    // A verdict asked for explicitly is the verdict required, filtered or not.
    expect(verifyAttestation({ envelope: filtered.envelope, publicKeyPem, policy: { ...uncertified, verdict: "conformant" } }).ok).toBe(false);
    expect(verifyAttestation({ envelope: filtered.envelope, publicKeyPem, policy: { ...uncertified, verdict: "incomplete" } }).ok).toBe(true);
  });

  it("accepts a signature without its base64 padding and a bogus signature beside the valid one (DSSE); --require-keyid checks the hint", () => {
    const { envelope, bytes } = attested();
    const sig = envelope.signatures[0]!;
    const unpadded = { ...envelope, signatures: [{ ...sig, sig: sig.sig.replace(/=+$/, "") }] };
    expect(sig.sig).toMatch(/=$/); // an Ed25519 signature is 64 bytes: base64 pads it
    expect(verifyAttestation({ envelope: unpadded, publicKeyPem, reportBytes: bytes }).ok).toBe(true);
    const bogus = { keyid: pair.keyid, sig: Buffer.alloc(64, 7).toString("base64") };
    const crowded = { ...envelope, signatures: [bogus, sig, { keyid: "nobody", sig: "!!" }] };
    expect(verifyAttestation({ envelope: crowded, publicKeyPem, reportBytes: bytes }).ok).toBe(true);
    expect(verifyAttestation({ envelope: crowded, publicKeyPem, policy: { requireKeyid: true } }).ok).toBe(true);
    // The keyid is an unsigned hint: changed or removed, the envelope still verifies, unless it is required.
    const relabelled = { ...envelope, signatures: [{ ...sig, keyid: "sha256:" + "0".repeat(64) }] };
    const unlabelled = { ...envelope, signatures: [{ sig: sig.sig }] };
    expect(verifyAttestation({ envelope: relabelled, publicKeyPem }).ok).toBe(true);
    expect(verifyAttestation({ envelope: unlabelled, publicKeyPem }).ok).toBe(true);
    expect(verifyAttestation({ envelope: relabelled, publicKeyPem, policy: { requireKeyid: true } }).failures).toEqual([
      `the signature that verifies names keyid "sha256:${"0".repeat(64)}", not this key's ${pair.keyid} (--require-keyid)`,
    ]);
    expect(verifyAttestation({ envelope: unlabelled, publicKeyPem, policy: { requireKeyid: true } }).failures).toEqual([`the signature that verifies names no keyid, not this key's ${pair.keyid} (--require-keyid)`]);
    // The right keyid on a signature that does not verify proves nothing.
    const borrowed = { ...envelope, signatures: [bogus, { ...sig, keyid: "someone-else" }] };
    expect(verifyAttestation({ envelope: borrowed, publicKeyPem, policy: { requireKeyid: true } }).ok).toBe(false);
  });

  it("checks the runtime digest when given one", () => {
    const { envelope } = attested();
    expect(verifyAttestation({ envelope, publicKeyPem, runtimeDigest: DIGEST.toUpperCase().replace("SHA256", "sha256") }).ok).toBe(true);
    expect(verifyAttestation({ envelope, publicKeyPem, runtimeDigest: `sha256:${"00".repeat(32)}` }).failures).toEqual([
      `the runtime's sha256 is ${"00".repeat(32)}, but the attestation is about ${"ab".repeat(32)}: a different runtime`,
    ]);
    expect(verifyAttestation({ envelope, publicKeyPem, runtimeDigest: "abc" }).failures[0]).toMatch(/is not "sha256:" and 64 hex digits/);
  });

  it("catches a validly signed statement that the report or its own results contradict", () => {
    const report = sampleReport({ 2: "failed" });
    const bytes = reportBytes(report);
    const statement = buildStatement(report, bytes);
    statement.predicate.verdict = "conformant";
    statement.subject[1]!.digest.sha256 = "00".repeat(32);
    const envelope = signEnvelope(Buffer.from(JSON.stringify(statement)), PAYLOAD_TYPE, privateKey, pair.keyid);
    const result = verifyAttestation({ envelope, publicKeyPem, reportBytes: bytes });
    expect(result.failures).toEqual([
      "the attested verdict conformant does not follow from the attested test results, which make it nonconformant",
      'the report\'s verdict is "nonconformant" but the attestation says "conformant"',
      `the report's runtime_digest is "${DIGEST}" but the attestation says sha256:${"00".repeat(32)}`,
    ]);
    const notAStatement = signEnvelope(Buffer.from('{"_type":"x"}'), PAYLOAD_TYPE, privateKey, pair.keyid);
    expect(verifyAttestation({ envelope: notAStatement, publicKeyPem }).failures).toContain("the signed statement has no predicate object");
    const otherType = signEnvelope(Buffer.from(JSON.stringify(statement)), "application/json", privateKey, pair.keyid);
    expect(verifyAttestation({ envelope: otherType, publicKeyPem }).failures).toEqual([`the envelope's payloadType is "application/json", not ${PAYLOAD_TYPE}`]);
  });

  it("refuses to sign report bytes that say something else than the report", () => {
    const report = sampleReport();
    const bytes = reportBytes({ ...report, runtime_version: "9.9.9" });
    expect(() => attestReport(report, bytes, privateKey, pair.keyid)).toThrow(/runtime_version is "9.9.9" but the attestation says "0.1.0"/);
    expect(() => attestReport({ ...report, runtime_digest: "sha1:x" }, reportBytes(report), privateKey, pair.keyid)).toThrow(/runtime_digest/);
  });
});

const hasTools = ["openssl", "jq", "sha256sum", "base64"].every((tool) => spawnSync(tool, ["--version"], { stdio: "ignore" }).error === undefined);

describe("the generic-tools recipe in docs/conformance/attestation.md", () => {
  itWhen(Boolean(hasTools), "openssl and jq")("verifies our attestation with openssl and jq", () => {
    const dir = mkdtempSync(join(tmp, "openssl-"));
    const { envelope, bytes } = attested();
    writeFileSync(join(dir, "report.dsse.json"), JSON.stringify(envelope, null, 2));
    writeFileSync(join(dir, "report.json"), bytes);
    writeFileSync(join(dir, "pulse-conform.pub"), pair.publicKeyPem);
    const script = exampleBlock(readDoc("conformance/attestation.md"), "openssl");
    const out = execFileSync("bash", ["-c", script], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    expect(out).toContain("Signature Verified Successfully");
    expect(out.trim().split("\n").at(-1)).toBe("conformant, certification true, pulse-reference 0.1.0");

    writeFileSync(join(dir, "report.json"), flip(bytes, 10, 1));
    expect(spawnSync("bash", ["-c", script], { cwd: dir, stdio: "ignore" }).status).not.toBe(0);
  });
});
