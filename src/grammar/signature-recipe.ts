import { intern } from "../source/intern.js";
import { type ParseResult, fail, isIdentPart, isIdentStart, isSpace, lengthError, ok, quote } from "./grammar-error.js";

export interface SignatureField {
  /** Dotted path into the phase input, e.g. `["request", "query"]`. */
  path: readonly string[];
  offset: number;
  length: number;
}

export interface SignatureRecipe {
  fn: "hash" | "blake3";
  fields: readonly SignatureField[];
}

const EXAMPLE = "e.g. hash(query, workspace_id, k)";

/**
 * Parses a `phase.signature` recipe, which names the input fields that enter the signature
 * hash. Both `hash` and `blake3` mean BLAKE3-256 (decisions.md); the name is kept for display.
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
  if (fn !== "hash" && fn !== "blake3") {
    return fail(`unknown signature function ${quote(fn)} (use hash or blake3)`, fnStart, fn.length);
  }
  i = skipSpace(text, i);
  if (text[i] !== "(") return fail(`expected "(" after ${quote(fn)} (${EXAMPLE})`, i, i < text.length ? 1 : 0);
  const open = i;
  i++;

  const fields: SignatureField[] = [];
  const seen = new Set<string>();
  for (;;) {
    i = skipSpace(text, i);
    if (text[i] === ")" && fields.length === 0) return fail(`name at least one input field (${EXAMPLE})`, open, i + 1 - open);
    const field = scanPath(text, i);
    if (!field.ok) {
      if (field.error.offset !== i) return field;
      const after = fields.length === 0 ? `"("` : `","`;
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
    if (text[i] === ")") break;
    if (i === text.length) return fail(`unclosed "("`, open, 1);
    return fail(`expected "," or ")" after ${quote(key)}, found ${quote(text[i] ?? "")}`, i, 1);
  }
  const close = i;
  i = skipSpace(text, close + 1);
  if (i < text.length) return fail(`unexpected ${quote(text.slice(i).trimEnd())} after ")"`, i, text.length - i);
  return ok({ fn, fields });
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
