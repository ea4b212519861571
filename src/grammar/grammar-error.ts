/**
 * The result shape shared by every PULSE mini-grammar. Parsers never throw: a bad input is an
 * ordinary value, with the offset (UTF-16 code units into the parsed string) and length of the
 * offending text so the validator can underline the exact column inside a manifest string.
 */

export interface GrammarError {
  message: string;
  offset: number;
  length: number;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: GrammarError };

/** Manifest strings are short; the bound keeps worst-case parse time and memory trivial. */
export const MAX_INPUT_LENGTH = 4096;

/** Bounds recursion (parentheses, lists, `not`) so no input can exhaust the stack. */
export const MAX_NESTING_DEPTH = 64;

export function ok<T>(value: T): ParseResult<T> {
  return { ok: true, value };
}

export function fail<T = never>(message: string, offset: number, length = 1): ParseResult<T> {
  return { ok: false, error: { message, offset, length: Math.max(0, length) } };
}

/** The error for an over-long input, or undefined when the input is within bounds. */
export function lengthError(text: string, what: string): ParseResult<never> | undefined {
  if (text.length <= MAX_INPUT_LENGTH) return undefined;
  return fail(`${what} is too long (${text.length} characters, at most ${MAX_INPUT_LENGTH})`, MAX_INPUT_LENGTH, text.length - MAX_INPUT_LENGTH);
}

/** Moves an error found in a substring to its position in the enclosing string. */
export function rebase<T>(result: ParseResult<T>, base: number): ParseResult<T> {
  if (result.ok || base === 0) return result;
  return { ok: false, error: { ...result.error, offset: result.error.offset + base } };
}

/** Quotes user text in a message, shortening it so a pasted paragraph cannot flood the output. */
export function quote(text: string, max = 40): string {
  const shown = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return JSON.stringify(shown);
}

export function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

export function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

export function isLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

export function isIdentStart(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
}

export function isIdentPart(code: number): boolean {
  return isIdentStart(code) || isDigit(code);
}
