import { beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { blake3 } from "@noble/hashes/blake3.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { blake3Hex, initSignatures, narrowInputs, phaseSignature, signatureOf } from "../../src/runtime/signature.js";
import { canonicalJson } from "../../src/json/canonical-json.js";
import { parseSignatureRecipe } from "../../src/grammar/signature-recipe.js";

// The official BLAKE3 test vectors (BLAKE3-team/BLAKE3 test_vectors/test_vectors.json): input of
// `len` bytes 0, 1, …, 250, 0, 1, …; the first 32 bytes of the extended `hash` output.
const VECTORS: [number, string][] = [
  [0, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"],
  [1, "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213"],
  [1023, "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11"],
  [1024, "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7"],
  [1025, "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444"],
  [2048, "e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a"],
  [2049, "5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030"],
  [3072, "b98cb0ff3623be03326b373de6b9095218513e64f1ee2edd2525c7ad1e5cffd2"],
  [3073, "7124b49501012f81cc7f11ca069ec9226cecb8a2c850cfe644e327d22d3e1cd3"],
  [4096, "015094013f57a5277b59d8475c0501042c0b642e531b0a1c8f58d2163229e969"],
  [4097, "9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb995"],
  [5120, "9cadc15fed8b5d854562b26a9536d9707cadeda9b143978f319ab34230535833"],
  [5121, "628bd2cb2004694adaab7bbd778a25df25c47b9d4155a55f8fbd79f2fe154cff"],
  [6144, "3e2e5b74e048f3add6d21faab3f83aa44d3b2278afb83b80b3c35164ebeca205"],
  [6145, "f1323a8631446cc50536a9f705ee5cb619424d46887f3c376c695b70e0f0507f"],
  [7168, "61da957ec2499a95d6b8023e2b0e604ec7f6b50e80a9678b89d2628e99ada77a"],
  [7169, "a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e7817"],
];

function input(len: number): Uint8Array {
  return Uint8Array.from({ length: len }, (_, i) => i % 251);
}

beforeAll(() => initSignatures());

describe("BLAKE3", () => {
  it.each(VECTORS)("matches the official vector for %i bytes", (len, hex) => {
    expect(hex).toHaveLength(64);
    expect(blake3Hex(input(len))).toBe(hex);
  });

  it("agrees with @noble/hashes on arbitrary strings (UTF-8 encoded)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 300 }), (s) => {
        expect(blake3Hex(s)).toBe(bytesToHex(blake3(new TextEncoder().encode(s))));
      }),
      { numRuns: 300 },
    );
  });

  it("agrees with @noble/hashes on either side of the encoding buffer's edge, and on lone surrogates", () => {
    // Text up to 8192 / 3 code units is encoded into a reused buffer, longer text by hash-wasm.
    const texts = ["x".repeat(2730), "x".repeat(2731), "€".repeat(2730), "€".repeat(2731), "😀".repeat(1365), "😀".repeat(4000), "cut \ud83d", "\udc00 then more"];
    for (const s of texts) expect(blake3Hex(s), `${s.length} code units`).toBe(bytesToHex(blake3(Buffer.from(s, "utf8"))));
    // The buffer is reused: a short text after a long one hashes only its own bytes.
    expect(blake3Hex("ab")).toBe(bytesToHex(blake3(new TextEncoder().encode("ab"))));
  });
});

describe("phase signatures", () => {
  const recipe = (text: string) => {
    const r = parseSignatureRecipe(text);
    if (!r.ok) throw new Error(r.error.message);
    return r.value;
  };

  it("is blake3:<64 hex> over canonical {loop_id, phase_id, workspace_id, inputs}", () => {
    const subject = { loop_id: "a.b", phase_id: "p", workspace_id: "ws", inputs: { b: 1, a: [true, null] } };
    const sig = phaseSignature(subject);
    expect(sig).toMatch(/^blake3:[0-9a-f]{64}$/);
    expect(sig).toBe(`blake3:${blake3Hex('{"inputs":{"a":[true,null],"b":1},"loop_id":"a.b","phase_id":"p","workspace_id":"ws"}')}`);
  });

  it("remembers the last signature of a phase id without mixing loops, workspaces or inputs", () => {
    // One phase id, signed again and again with what a memo could confuse: each answer must be
    // the signature computed from scratch.
    const fresh = (s: { loop_id: string; phase_id: string; workspace_id: string; inputs: unknown }) =>
      `blake3:${blake3Hex(`{"inputs":${canonicalJson(s.inputs)},"loop_id":${JSON.stringify(s.loop_id)},"phase_id":${JSON.stringify(s.phase_id)},"workspace_id":${JSON.stringify(s.workspace_id)}}`)}`;
    const subjects = [
      { loop_id: "a.b", phase_id: "memo", workspace_id: "w1", inputs: { q: 1 } },
      { loop_id: "a.b", phase_id: "memo", workspace_id: "w1", inputs: { q: 1 } },
      { loop_id: "a.b", phase_id: "memo", workspace_id: "w2", inputs: { q: 1 } },
      { loop_id: "a.c", phase_id: "memo", workspace_id: "w2", inputs: { q: 1 } },
      { loop_id: "a.c", phase_id: "memo", workspace_id: "w2", inputs: { q: 2 } },
      { loop_id: "a.c", phase_id: "other", workspace_id: "w2", inputs: { q: 2 } },
      { loop_id: "a.c", phase_id: "memo", workspace_id: "w2", inputs: { q: 2 } },
      { loop_id: "a.b", phase_id: "memo", workspace_id: "w1", inputs: { q: 1 } },
    ];
    const seen = subjects.map((s) => phaseSignature(s));
    expect(seen).toEqual(subjects.map(fresh));
    expect(new Set(seen).size).toBe(5);
  });

  it("does not depend on key order, and does depend on the workspace", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (inputs) => {
        const reordered = Object.fromEntries(Object.entries(inputs).reverse());
        const a = phaseSignature({ loop_id: "a.b", phase_id: "p", workspace_id: "w1", inputs });
        expect(phaseSignature({ loop_id: "a.b", phase_id: "p", workspace_id: "w1", inputs: reordered })).toBe(a);
        expect(phaseSignature({ loop_id: "a.b", phase_id: "p", workspace_id: "w2", inputs })).not.toBe(a);
      }),
      { numRuns: 200 },
    );
  });

  it("narrows inputs to the recipe's fields: other fields do not change it", () => {
    const r = recipe("hash(query, workspace_id, k)");
    const base = { loop_id: "g.l", phase_id: "retrieve_ctx", workspace_id: "ws_1" };
    const a = phaseSignature({ ...base, inputs: { query: "q", k: 5, noise: 1 } }, r);
    expect(phaseSignature({ ...base, inputs: { query: "q", k: 5, noise: 2, more: [1] } }, r)).toBe(a);
    expect(phaseSignature({ ...base, inputs: { query: "q", k: 6 } }, r)).not.toBe(a);
    expect(narrowInputs({ query: "q", k: 5 }, r, "ws_1")).toEqual({ query: "q", workspace_id: "ws_1", k: 5 });
    expect(narrowInputs({ request: { query: "q" } }, recipe("hash(request.query, missing)"), "w")).toEqual({ "request.query": "q", missing: null });
  });

  it("refuses values JSON cannot carry instead of signing a coercion", () => {
    expect(() => signatureOf({ a: NaN })).toThrow(/NaN/);
    expect(() => signatureOf({ a: new Map() })).toThrow(/Map/);
    expect(() => signatureOf({ a: 1n } as unknown)).toThrow(/bigint/);
    expect(() => canonicalJson([undefined])).toThrow(/undefined/);
    // Half of an emoji is not I-JSON: other implementations would sign it differently, or refuse it.
    expect(() => signatureOf({ text: "cut \ud83d" })).toThrow(/lone surrogate/);
    expect(signatureOf({ text: "whole \ud83d\ude00" })).toMatch(/^blake3:[0-9a-f]{64}$/);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => canonicalJson(cycle)).toThrow(/deeper than/);
  });
});
