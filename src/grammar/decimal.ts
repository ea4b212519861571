import { isDigit } from "./grammar-error.js";

/**
 * An unsigned decimal as written (`1`, `1.5`), kept as digit strings so that scaling by a unit
 * is exact: `1.1h` must be 3960000 ms, not the 3960000.0000000005 that float arithmetic gives.
 */
export interface Decimal {
  whole: string;
  fraction: string;
  start: number;
  end: number;
}

export type DecimalScan =
  | { kind: "none" }
  | { kind: "ok"; decimal: Decimal }
  | { kind: "error"; message: string; offset: number; length: number };

/** Reads `digits [ "." digits ]` at `start`; "none" when no number starts there. */
export function scanDecimal(text: string, start: number): DecimalScan {
  let i = start;
  while (i < text.length && isDigit(text.charCodeAt(i))) i++;
  const whole = text.slice(start, i);
  if (text.charCodeAt(i) !== 46 /* . */) {
    return whole === "" ? { kind: "none" } : { kind: "ok", decimal: { whole, fraction: "", start, end: i } };
  }
  if (whole === "") {
    return { kind: "error", message: `write a digit before "." (e.g. 0.5)`, offset: i, length: 1 };
  }
  const dot = i++;
  while (i < text.length && isDigit(text.charCodeAt(i))) i++;
  if (i === dot + 1) return { kind: "error", message: `expected digits after "."`, offset: dot, length: 1 };
  return { kind: "ok", decimal: { whole, fraction: text.slice(dot + 1, i), start, end: i } };
}

/** `decimal × unitMs` exactly, or undefined when the product is not a whole number. */
export function scaleExact(decimal: Decimal, unitMs: number): bigint | undefined {
  const scaled = BigInt(decimal.whole + decimal.fraction) * BigInt(unitMs);
  const divisor = 10n ** BigInt(decimal.fraction.length);
  return scaled % divisor === 0n ? scaled / divisor : undefined;
}

export const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
