import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { formatDuration, parseDuration } from "../../src/grammar/duration.js";
import { anyText, chars, stringFrom } from "./arbitraries.js";

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

function ms(text: string): number {
  const result = parseDuration(text);
  if (!result.ok) throw new Error(`${text}: ${result.error.message}`);
  return result.value;
}

function rejection(text: string): { message: string; offset: number; length: number } {
  const result = parseDuration(text);
  if (result.ok) throw new Error(`${text} was accepted as ${result.value}`);
  return result.error;
}

describe("parseDuration: compact form", () => {
  it.each([
    ["500ms", 500],
    ["30s", 30 * S],
    ["5m", 5 * M],
    ["1h", H],
    ["1d", D],
    ["1w", 7 * D],
    ["1.5h", 1.5 * H],
    ["0.25s", 250],
    ["1h30m", 90 * M],
    ["1d2h3m4s5ms", D + 2 * H + 3 * M + 4 * S + 5],
    ["1h 30m", 90 * M],
    ["500 ms", 500],
    ["  30s\n", 30 * S],
    ["0s", 0],
  ])("%j is %d ms", (text, expected) => {
    expect(ms(text)).toBe(expected);
  });

  it("scales decimals exactly instead of through floating point", () => {
    expect(ms("1.1h")).toBe(3_960_000);
    expect(ms("0.3s")).toBe(300);
  });

  it("reads the spec's phase_offset and interval values", () => {
    expect(ms("0s")).toBe(0);
    expect(ms("1h")).toBe(H);
    expect(ms("weekly")).toBe(7 * D);
  });
});

describe("parseDuration: ISO-8601 and words", () => {
  it.each([
    ["PT1H", H],
    ["PT0.5S", 500],
    ["PT1H30M", 90 * M],
    ["P1D", D],
    ["P1W", 7 * D],
    ["P1DT2H", D + 2 * H],
    ["P1M", 30 * D],
    ["P1Y", 365 * D],
    ["P1Y2M3W4DT5H6M7.5S", 365 * D + 60 * D + 21 * D + 4 * D + 5 * H + 6 * M + 7500],
    ["pt1h", H],
    ["hourly", H],
    ["daily", D],
    ["weekly", 7 * D],
    ["monthly", 30 * D],
    ["Daily", D],
  ])("%j is %d ms", (text, expected) => {
    expect(ms(text)).toBe(expected);
  });

  it("reads M as months before T and as minutes after it", () => {
    expect(ms("P2M")).toBe(60 * D);
    expect(ms("PT2M")).toBe(2 * M);
  });
});

describe("parseDuration: rejections point at the offending text", () => {
  it.each([
    ["", "empty duration", 0, 0],
    ["   ", "empty duration", 3, 0],
    ["-5m", "cannot be negative", 0, 1],
    [" -5m", "cannot be negative", 1, 1],
    ["+5m", `remove the "+"`, 0, 1],
    ["5hrs", `unknown duration unit "hrs" (use ms, s, m, h, d, w)`, 1, 3],
    ["5M", `unknown duration unit "M"`, 1, 1],
    ["1h30x", `unknown duration unit "x"`, 4, 1],
    ["500", "add a unit, e.g. 500ms", 0, 3],
    ["1h30", "add a unit, e.g. 30ms", 2, 2],
    ["NaN", "not a duration", 0, 3],
    ["Infinity", "not a duration", 0, 8],
    ["1.5ms", "not a whole number of milliseconds", 0, 5],
    ["PT0.0001S", "not a whole number of milliseconds", 2, 7],
    [".5h", `digit before "."`, 0, 1],
    ["1.h", `digits after "."`, 1, 1],
    ["30m1h", "larger units first", 4, 1],
    ["1m1m", `unit "m" appears twice`, 3, 1],
    ["1h,30m", `unexpected ","`, 2, 1],
    ["soon", "not a duration", 0, 4],
    ["P", "empty iso-8601 duration", 0, 1],
    ["PT", `expected a time component after "T"`, 1, 1],
    ["P1DT", `expected a time component after "T"`, 3, 1],
    ["P1H", `go after "T"`, 2, 1],
    ["PT1D", `go before "T"`, 3, 1],
    ["P1X", `unknown iso-8601 designator "X"`, 2, 1],
    ["P1D2Y", "in the order Y, M, W, D", 4, 1],
    ["PT1S1H", "in the order H, M, S", 5, 1],
    ["PT1HT", `"T" appears twice`, 4, 1],
    ["PT1", "add a designator", 2, 1],
    ["-PT1H", "cannot be negative", 0, 1],
    ["99999999999999999w", "too large", 0, 18],
  ])("%j", (text, message, offset, length) => {
    const error = rejection(text);
    expect(error.message).toContain(message);
    expect(error.offset).toBe(offset);
    expect(error.length).toBe(length);
  });

  it("accepts the largest safe integer and rejects one more", () => {
    expect(ms(`${Number.MAX_SAFE_INTEGER}ms`)).toBe(Number.MAX_SAFE_INTEGER);
    expect(rejection(`${Number.MAX_SAFE_INTEGER + 1}ms`).message).toContain("too large");
  });

  it("bounds the input length", () => {
    const error = rejection("1".repeat(5000) + "ms");
    expect(error.message).toContain("too long");
    expect(error.offset).toBe(4096);
    expect(ms(`${"0".repeat(4000)}1ms`)).toBe(1);
  });
});

describe("formatDuration", () => {
  it.each([
    [90_000, "1m30s"],
    [604_800_000, "7d"],
    [0, "0ms"],
    [500, "500ms"],
    [D + H + 1, "1d1h1ms"],
    [1.5, "1.5ms"],
    [-90_000, "-1m30s"],
  ])("%d → %j", (value, text) => {
    expect(formatDuration(value)).toBe(text);
  });

  it("round-trips every whole, safe number of milliseconds", () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: 0, max: 10 * D })), (value) => {
        expect(parseDuration(formatDuration(value))).toEqual({ ok: true, value });
      }),
    );
  });
});

describe("parseDuration never throws", () => {
  const alphabet = [...chars("0123456789.-+ PTYMWDHSmshdw"), "ms", "hourly", "daily", "\t"];

  it("on arbitrary text", () => {
    fc.assert(
      fc.property(fc.oneof(anyText, stringFrom(alphabet)), (text) => {
        const result = parseDuration(text);
        if (result.ok) {
          expect(Number.isSafeInteger(result.value) && result.value >= 0).toBe(true);
        } else {
          expect(result.error.offset).toBeGreaterThanOrEqual(0);
          expect(result.error.offset + result.error.length).toBeLessThanOrEqual(text.length);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
