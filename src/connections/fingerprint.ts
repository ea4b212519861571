/**
 * A fingerprint of what an envelope says, for telling a redelivery (same id, same content) from an
 * id reused for other content. Computed on every received signal, so it does not serialise: two
 * independent 32-bit FNV-1a lanes over the value tree, object keys in sorted order (equal JSON
 * values have equal fingerprints whatever their key order). Not a cryptographic hash: forging a
 * collision would only make a forged event pass for a duplicate of a real one, which runs nothing.
 */

let a = 0;
let b = 0;

function mix(c: number): void {
  a = Math.imul(a ^ c, 16777619);
  b = Math.imul(b ^ c, 16777619) ^ (b >>> 15);
}

function text(s: string): void {
  for (let i = 0; i < s.length; i++) mix(s.charCodeAt(i));
  mix(0x1_0000); // a terminator no UTF-16 unit equals: "ab","c" differs from "a","bc"
}

function value(v: unknown): void {
  if (v === null || v === undefined) return mix(0x1_0001);
  switch (typeof v) {
    case "string":
      mix(0x1_0002);
      return text(v);
    case "number":
      mix(0x1_0003);
      return text(String(v));
    case "boolean":
      return mix(v ? 0x1_0004 : 0x1_0005);
    case "object": {
      if (Array.isArray(v)) {
        mix(0x1_0006);
        for (const x of v) value(x);
        return mix(0x1_0007);
      }
      mix(0x1_0008);
      const keys = Object.keys(v);
      if (keys.length > 1) keys.sort();
      for (const k of keys) {
        text(k);
        value((v as Record<string, unknown>)[k]);
      }
      return mix(0x1_0009);
    }
    default:
      return mix(0x1_000a);
  }
}

export function fingerprintOf(v: unknown): string {
  a = 0x811c9dc5;
  b = 0x050c5d1f;
  value(v);
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}
