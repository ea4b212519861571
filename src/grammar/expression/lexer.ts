import { type ParseResult, fail, isDigit, isIdentPart, isIdentStart, isSpace, ok, quote } from "../grammar-error.js";
import { KEYWORDS } from "./ast.js";
import { intern } from "../../source/intern.js";

export type Keyword = (typeof KEYWORDS)[number];
export type Punct = "==" | "!=" | "<" | "<=" | ">" | ">=" | "&&" | "||" | "!" | "(" | ")" | "[" | "]" | ",";

interface Span {
  offset: number;
  length: number;
}

export type Token =
  | (Span & { kind: "number"; value: number })
  | (Span & { kind: "string"; value: string })
  | (Span & { kind: "path"; path: string[] })
  | (Span & { kind: "keyword"; word: Keyword })
  | (Span & { kind: "punct"; punct: Punct })
  | (Span & { kind: "eof" });

const KEYWORD_SET: ReadonlySet<string> = new Set(KEYWORDS);

/** Splits an expression into tokens. Offsets are UTF-16 code units into `text`. */
export function tokenize(text: string): ParseResult<Token[]> {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) {
      i++;
      continue;
    }
    const token = isIdentStart(c)
      ? lexWord(text, i)
      : isDigit(c) || c === 45 /* - */
        ? lexNumber(text, i)
        : c === 39 || c === 34 /* ' " */
          ? lexString(text, i)
          : lexPunct(text, i, tokens[tokens.length - 1]);
    if (!token.ok) return token;
    tokens.push(token.value);
    i = token.value.offset + token.value.length;
  }
  tokens.push({ kind: "eof", offset: text.length, length: 0 });
  return ok(tokens);
}

function lexWord(text: string, start: number): ParseResult<Token> {
  const path: string[] = [];
  let i = start;
  for (;;) {
    const segmentStart = i;
    while (i < text.length && isIdentPart(text.charCodeAt(i))) i++;
    // Canonical strings: evaluation reads these as property names of every scope it is given.
    path.push(intern(text.slice(segmentStart, i)));
    if (text.charCodeAt(i) !== 46 /* . */) break;
    if (!isIdentStart(text.charCodeAt(i + 1))) return fail(`expected a field name after "."`, i, 1);
    i++;
  }
  const first = path[0] ?? "";
  const length = i - start;
  if (KEYWORD_SET.has(first)) {
    if (path.length === 1) return ok({ kind: "keyword", word: first as Keyword, offset: start, length });
    return fail(`${quote(first)} is a keyword and cannot start a path`, start, first.length);
  }
  const lower = first.toLowerCase();
  // `True` or `AND` would otherwise read a field that never exists and silently be false.
  if (KEYWORD_SET.has(lower)) return fail(`keywords are lower-case: write ${quote(lower)}`, start, first.length);
  return ok({ kind: "path", path, offset: start, length });
}

/** JSON number syntax, so any number a manifest author copies from data reads the same. */
function lexNumber(text: string, start: number): ParseResult<Token> {
  let i = start;
  if (text.charCodeAt(i) === 45) {
    i++;
    if (!isDigit(text.charCodeAt(i))) {
      return fail(`"-" must be followed by a digit (there is no arithmetic)`, start, 1);
    }
  }
  if (text.charCodeAt(i) === 48 /* 0 */ && isDigit(text.charCodeAt(i + 1))) {
    return fail("numbers cannot have leading zeros", i, 1);
  }
  while (isDigit(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) === 46 /* . */) {
    i++;
    if (!isDigit(text.charCodeAt(i))) return fail(`expected digits after "."`, i - 1, 1);
    while (isDigit(text.charCodeAt(i))) i++;
  }
  const e = text.charCodeAt(i);
  if (e === 101 || e === 69 /* e E */) {
    const exponent = i;
    i++;
    if (text.charCodeAt(i) === 43 || text.charCodeAt(i) === 45) i++;
    if (!isDigit(text.charCodeAt(i))) return fail("expected digits in the exponent", exponent, i - exponent);
    while (isDigit(text.charCodeAt(i))) i++;
  }
  const written = text.slice(start, i);
  const next = text.charCodeAt(i);
  if (isIdentPart(next) || next === 46) {
    return fail(`unexpected ${quote(text[i] ?? "")} after the number ${written}`, i, 1);
  }
  const value = Number(written);
  if (!Number.isFinite(value)) return fail(`number ${quote(written)} is out of range`, start, i - start);
  return ok({ kind: "number", value, offset: start, length: i - start });
}

const ESCAPES: Readonly<Record<string, string>> = {
  "\\": "\\",
  "'": "'",
  '"': '"',
  n: "\n",
  t: "\t",
  r: "\r",
};

function lexString(text: string, start: number): ParseResult<Token> {
  const quoteChar = text[start];
  let value = "";
  let i = start + 1;
  let runStart = i;
  while (i < text.length) {
    const ch = text[i];
    if (ch === quoteChar) {
      value += text.slice(runStart, i);
      return ok({ kind: "string", value, offset: start, length: i + 1 - start });
    }
    if (ch !== "\\") {
      i++;
      continue;
    }
    value += text.slice(runStart, i);
    const escape = text[i + 1] ?? "";
    if (escape === "u") {
      const hex = text.slice(i + 2, i + 6);
      if (!/^[0-9A-Fa-f]{4}$/.test(hex)) return fail(`expected 4 hex digits after \\u`, i, Math.min(6, text.length - i));
      value += String.fromCharCode(parseInt(hex, 16));
      i += 6;
    } else {
      const decoded = Object.prototype.hasOwnProperty.call(ESCAPES, escape) ? ESCAPES[escape] : undefined;
      if (decoded === undefined) {
        if (escape === "") break;
        return fail(`unknown escape "\\${escape}" (use \\\\, \\', \\", \\n, \\t, \\r or \\uXXXX)`, i, 2);
      }
      value += decoded;
      i += 2;
    }
    runStart = i;
  }
  return fail("unterminated string", start, text.length - start);
}

/**
 * A lone "=" usually means "==", but not after an operator: `status == = 'x'` already has its
 * "==" (the "=" is one too many) and `a < = 1` split "<=" with a space.
 */
function strayEquals(previous: Token | undefined): string {
  if (previous?.kind !== "punct") return `use "==" to compare`;
  const op = previous.punct;
  if (op === "<" || op === ">" || op === "!") return `unexpected "=" after ${quote(op)}; write ${quote(`${op}=`)} with no space`;
  return `expected a value after ${quote(op)}, found "="`;
}

const TWO_CHAR: ReadonlySet<string> = new Set(["==", "!=", "<=", ">=", "&&", "||"]);
const ONE_CHAR: ReadonlySet<string> = new Set(["<", ">", "!", "(", ")", "[", "]", ","]);

/** Operators, with a pointed message for the spellings other languages taught the user. */
function lexPunct(text: string, start: number, previous: Token | undefined): ParseResult<Token> {
  const three = text.slice(start, start + 3);
  if (three === "===" || three === "!==") {
    return fail(`use ${quote(three.slice(0, 2))} (comparison is always strict)`, start, 3);
  }
  const two = text.slice(start, start + 2);
  if (TWO_CHAR.has(two)) return ok({ kind: "punct", punct: two as Punct, offset: start, length: 2 });
  if (two === "<>") return fail(`use "!=" for "not equal"`, start, 2);
  if (two === "=>" || two === "=<") return fail(`use ${quote(`${two[1]}=`)}`, start, 2);
  const one = text[start] ?? "";
  if (ONE_CHAR.has(one)) return ok({ kind: "punct", punct: one as Punct, offset: start, length: 1 });
  if (one === "=") return fail(strayEquals(previous), start, 1);
  if (one === "&") return fail(`use "and" (or "&&")`, start, 1);
  if (one === "|") return fail(`use "or" (or "||")`, start, 1);
  if (one === "." && isDigit(text.charCodeAt(start + 1))) return fail(`write a digit before "." (e.g. 0.5)`, start, 1);
  const cp = text.codePointAt(start) ?? 0;
  const shown = String.fromCodePoint(cp);
  return fail(`unexpected character ${quote(shown)}`, start, shown.length);
}
