import { intern } from "../source/intern.js";
import { type ParseResult, fail, isIdentPart, isIdentStart, isSpace, lengthError, ok, quote } from "./grammar-error.js";

export interface SignatureField {
  /** Dotted path into the phase input, e.g. `["request", "query"]`. */
  path: readonly string[];
  offset: number;
  length: number;
}

export interface SignatureRecipe {
  /** The function as written: `hash` and `blake3` mean BLAKE3-256; others are named by the recipe only. */
  fn: string;
  /** `canonical_json` or `jcs` when the recipe spells the serialisation: `sha256(canonical_json({a, b}))`. */
  encoding?: string;
  fields: readonly SignatureField[];
}

const EXAMPLE = "e.g. hash(query, workspace_id, k)";
/** Functions pulse signs with: BLAKE3-256 (§5.6 recommends it; decisions.md). */
export const BLAKE3_FUNCTIONS: readonly string[] = ["hash", "blake3"];
/** Other digests the protocol's published manifests name; accepted, and signed with BLAKE3 (the validator warns). */
const OTHER_FUNCTIONS: readonly string[] = ["sha256", "sha384", "sha512", "sha3_256", "sha3_512", "blake2b", "blake2s"];
const ENCODINGS: readonly string[] = ["canonical_json", "jcs"];

/**
 * Parses a `phase.signature` recipe, which names the input fields that enter the signature hash:
 * `hash(query, workspace_id, k)`, and the spelled-out form of published manifests,
 * `sha256(canonical_json({query, workspace_id}))` (the serialisation, and braces around the
 * fields, optional). Which function the runtime really applies is its business (BLAKE3-256).
 */
export function parseSignatureRecipe(text: string): ParseResult<SignatureRecipe> {
  const tooLong = lengthError(text, "signature recipe");
  if (tooLong) return tooLong;
  let i = skipSpace(text, 0);
  if (i === text.length) return fail(`empty signature recipe (${EXAMPLE})`, 0, text.length);
  const fnStart = i;
  while (i < text.length && isIdentPart(text.charCodeAt(i))) i++;
  const fn = text.slice(fnStart, i);
  if (fn === "") return fail(`a signature recipe is a function of input fields (${EXAMPLE})`, fnStart, 1);
  if (!BLAKE3_FUNCTIONS.includes(fn) && !OTHER_FUNCTIONS.includes(fn)) {
    return fail(`unknown signature function ${quote(fn)} (use hash or blake3; ${OTHER_FUNCTIONS.join(", ")} are read too)`, fnStart, fn.length);
  }
  const outer = openParen(text, i, fn);
  if (!outer.ok) return outer;
  i = skipSpace(text, outer.value);
  const closers = [{ char: ")", at: outer.value - 1 }];

  // An optional serialisation, `canonical_json(`, then optional braces around the field list.
  const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i, i + 32))?.[0];
  let encoding: string | undefined;
  if (word !== undefined && ENCODINGS.includes(word) && text[skipSpace(text, i + word.length)] === "(") {
    encoding = word;
    const inner = openParen(text, i + word.length, word);
    if (!inner.ok) return inner;
    closers.push({ char: ")", at: inner.value - 1 });
    i = skipSpace(text, inner.value);
  }
  if (text[i] === "{") {
    closers.push({ char: "}", at: i });
    i++;
  }
  const innermost = closers[closers.length - 1] as { char: string; at: number };

  const fields: SignatureField[] = [];
  const seen = new Set<string>();
  for (;;) {
    i = skipSpace(text, i);
    if (text[i] === innermost.char && fields.length === 0) return fail(`name at least one input field (${EXAMPLE})`, innermost.at, i + 1 - innermost.at);
    const field = scanPath(text, i);
    if (!field.ok) {
      if (field.error.offset !== i) return field;
      const after = fields.length === 0 ? quote(text[innermost.at] ?? "(") : `","`;
      const found = i < text.length ? `, found ${quote(text[i] ?? "")}` : "";
      return fail(`expected a field name after ${after}${found}`, i, i < text.length ? 1 : 0);
    }
    const key = field.value.path.join(".");
    if (seen.has(key)) return fail(`${quote(key)} is listed twice`, field.value.offset, field.value.length);
    seen.add(key);
    fields.push(field.value);
    i = skipSpace(text, field.value.offset + field.value.length);
    if (text[i] === ",") {
      i++;
      continue;
    }
    if (text[i] === innermost.char) break;
    if (i === text.length) return fail(`unclosed ${quote(text[innermost.at] ?? "(")}`, innermost.at, 1);
    return fail(`expected "," or ${quote(innermost.char)} after ${quote(key)}, found ${quote(text[i] ?? "")}`, i, 1);
  }
  // Close what was opened, innermost first.
  let end = i;
  for (let c = closers.length - 1; c >= 0; c--) {
    const closer = closers[c] as { char: string; at: number };
    i = skipSpace(text, i);
    if (text[i] !== closer.char) {
      if (i === text.length) return fail(`unclosed ${quote(text[closer.at] ?? "(")}`, closer.at, 1);
      return fail(`expected ${quote(closer.char)}, found ${quote(text[i] ?? "")}`, i, 1);
    }
    end = i++;
  }
  i = skipSpace(text, i);
  if (i < text.length) return fail(`unexpected ${quote(text.slice(i).trimEnd())} after ${quote(text[end] ?? ")")}`, i, text.length - i);
  return ok(encoding === undefined ? { fn, fields } : { fn, encoding, fields });
}

/** `name (` with the offset just past the parenthesis. */
function openParen(text: string, from: number, name: string): ParseResult<number> {
  const at = skipSpace(text, from);
  if (text[at] !== "(") return fail(`expected "(" after ${quote(name)} (${EXAMPLE})`, at, at < text.length ? 1 : 0);
  return ok(at + 1);
}

function scanPath(text: string, start: number): ParseResult<SignatureField> {
  const path: string[] = [];
  let i = start;
  for (;;) {
    if (!isIdentStart(text.charCodeAt(i))) {
      return path.length === 0 ? fail("expected a field name", i, 1) : fail(`expected a field name after "."`, i - 1, 1);
    }
    const segmentStart = i;
    while (i < text.length && isIdentPart(text.charCodeAt(i))) i++;
    path.push(intern(text.slice(segmentStart, i)));
    if (text[i] !== ".") break;
    i++;
  }
  return ok({ path, offset: start, length: i - start });
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}
