/**
 * Phase signatures (§5.6, decisions.md): BLAKE3-256 over the RFC 8785 canonical JSON of
 * `{loop_id, phase_id, workspace_id, inputs}`, written `blake3:<64 hex>`, with `inputs` narrowed
 * by the phase's recipe (`hash(query, workspace_id, k)`) when it has one. The signature is the
 * idempotency key and the CloudEvents deduplication key.
 *
 * BLAKE3 comes from hash-wasm (WebAssembly, ~1 µs for a typical input; @noble/hashes takes
 * ~7 µs, and signatures are computed for every phase). Call `initSignatures()` once first.
 */
import { createBLAKE3, type IHasher } from "hash-wasm";
import type { SignatureRecipe } from "../grammar/signature-recipe.js";
import { canonicalJson } from "../json/canonical-json.js";

let hasher: IHasher | undefined;
let loading: Promise<void> | undefined;

export function initSignatures(): Promise<void> {
  loading ??= createBLAKE3(256).then((h) => {
    hasher = h;
  });
  return loading;
}

/** Where text is encoded before hashing: hash-wasm would allocate a Buffer per call. */
const scratch = Buffer.allocUnsafeSlow(8192);

/** BLAKE3-256 of UTF-8 text (or bytes), as 64 lowercase hex digits. */
export function blake3Hex(data: string | Uint8Array): string {
  if (!hasher) throw new Error("initSignatures() must complete before signatures are computed");
  hasher.init();
  // A UTF-16 code unit is at most 3 bytes of UTF-8 (a lone surrogate becomes U+FFFD, as Buffer.from writes it).
  if (typeof data === "string" && data.length * 3 <= scratch.length) hasher.update(scratch.subarray(0, scratch.write(data, 0, "utf8")));
  else hasher.update(data);
  // Node's hex encoder is faster than hash-wasm's (String.fromCharCode over 64 codes).
  const digest = hasher.digest("binary");
  return Buffer.from(digest.buffer, digest.byteOffset, digest.length).toString("hex");
}

export function signatureOf(value: unknown): string {
  return `blake3:${blake3Hex(canonicalJson(value))}`;
}

function readPath(input: unknown, path: readonly string[]): unknown {
  let v = input;
  for (const key of path) {
    if (v === null || typeof v !== "object" || !Object.prototype.hasOwnProperty.call(v, key)) return null;
    v = (v as Record<string, unknown>)[key];
  }
  return v === undefined ? null : v;
}

/**
 * The inputs a recipe names, as `{ "<path>": value }`. A field the input lacks enters as null;
 * `workspace_id` falls back to the workspace the phase runs in.
 */
export function narrowInputs(inputs: unknown, recipe: SignatureRecipe | undefined, workspaceId: string): unknown {
  if (!recipe) return inputs === undefined ? null : inputs;
  const out: Record<string, unknown> = {};
  for (const field of recipe.fields) {
    const key = field.path.join(".");
    let value = readPath(inputs, field.path);
    if (value === null && key === "workspace_id") value = workspaceId;
    out[key] = value;
  }
  return out;
}

export interface SignatureSubject {
  loop_id: string;
  phase_id: string;
  workspace_id: string;
  inputs: unknown;
}

/**
 * What a phase id last signed: the constant end of its text (loop, phase, workspace), and the last
 * text and signature, since a phase often sees the same input again (a constant output before it).
 */
interface Memo {
  loopId: string;
  workspaceId: string;
  tail: string;
  text: string;
  signature: string;
}

const memos = new Map<string, Memo>();
/** Phase ids remembered at once; beyond it the memo starts over (it only saves work). */
const MEMOS = 4096;

function memoOf(subject: SignatureSubject): Memo {
  let memo = memos.get(subject.phase_id);
  if (memo === undefined || memo.loopId !== subject.loop_id || memo.workspaceId !== subject.workspace_id) {
    if (memos.size >= MEMOS) memos.clear();
    const tail = `,"loop_id":${JSON.stringify(subject.loop_id)},"phase_id":${JSON.stringify(subject.phase_id)},"workspace_id":${JSON.stringify(subject.workspace_id)}}`;
    memo = { loopId: subject.loop_id, workspaceId: subject.workspace_id, tail, text: "", signature: "" };
    memos.set(subject.phase_id, memo);
  }
  return memo;
}

export function phaseSignature(subject: SignatureSubject, recipe?: SignatureRecipe): string {
  // The canonical form of {inputs, loop_id, phase_id, workspace_id}, keys already in RFC 8785
  // order, written directly: this runs for every phase.
  const memo = memoOf(subject);
  const text = `{"inputs":${canonicalJson(narrowInputs(subject.inputs, recipe, subject.workspace_id))}${memo.tail}`;
  if (text !== memo.text) {
    memo.signature = `blake3:${blake3Hex(text)}`;
    memo.text = text;
  }
  return memo.signature;
}
