import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseRate } from "../../src/grammar/rate.js";
import { anyText, chars, stringFrom } from "./arbitraries.js";

function rate(text: string): { count: number; perMs: number } {
  const result = parseRate(text);
  if (!result.ok) throw new Error(`${text}: ${result.error.message}`);
  return result.value;
}

describe("parseRate accepts", () => {
  it.each([
    ["10/min", 10, 60_000],
    ["5/s", 5, 1000],
    ["100/h", 100, 3_600_000],
    ["1000/day", 1000, 86_400_000],
    ["3/5m", 3, 300_000],
    ["3/1.5h", 3, 5_400_000],
    ["1/500ms", 1, 500],
    ["2/w", 2, 604_800_000],
    ["10 / minutes", 10, 60_000],
    [" 7/hr ", 7, 3_600_000],
    ["7/hrs", 7, 3_600_000],
    ["7/hours", 7, 3_600_000],
    ["7/sec", 7, 1000],
    ["7/seconds", 7, 1000],
    ["7/days", 7, 86_400_000],
    ["7/2 days", 7, 172_800_000],
  ])("%j", (text, count, perMs) => {
    expect(rate(text)).toEqual({ count, perMs });
  });

  it("reads the spec's rate_limit example", () => {
    expect(rate("10/min")).toEqual({ count: 10, perMs: 60_000 });
  });
});

describe("parseRate rejects", () => {
  it.each([
    ["", "empty rate", 0, 0],
    ["0/min", "at least 1", 0, 1],
    ["-1/min", "cannot be negative", 0, 1],
    ["1.5/min", "whole number", 0, 2],
    ["10", `expected "/"`, 2, 0],
    ["10 per min", `expected "/"`, 3, 1],
    ["10/", "expected a period", 3, 0],
    ["min/10", "starts with a count", 0, 1],
    ["10/mnute", `unknown rate unit "mnute", did you mean "minute"?`, 3, 5],
    ["10/fortnight", `unknown rate unit "fortnight" (use s, min, h, day or week)`, 3, 9],
    ["10/Min", `did you mean "min"?`, 3, 3],
    ["10/5", "add a unit to the period", 3, 1],
    ["10/min!", `unexpected "!"`, 6, 1],
    ["10/min extra", `unexpected "extra"`, 7, 5],
    ["3/0s", "longer than zero", 2, 2],
    ["3/0.0001s", "whole number of milliseconds", 2, 7],
    ["3/.5m", `digit before "."`, 2, 1],
    ["99999999999999999/s", "too large", 0, 17],
  ])("%j", (text, message, offset, length) => {
    const result = parseRate(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.message).toContain(message);
    expect(result.error.offset).toBe(offset);
    expect(result.error.length).toBe(length);
  });

  it("never throws and keeps errors inside the text", () => {
    const alphabet = [...chars("0123456789./ -smhdwin"), "min", "day", "hour", "sec"];
    fc.assert(
      fc.property(fc.oneof(anyText, stringFrom(alphabet)), (text) => {
        const result = parseRate(text);
        if (result.ok) {
          expect(Number.isSafeInteger(result.value.count) && result.value.count >= 1).toBe(true);
          expect(Number.isSafeInteger(result.value.perMs) && result.value.perMs >= 1).toBe(true);
        } else {
          expect(result.error.offset + result.error.length).toBeLessThanOrEqual(text.length);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("bounds the input length", () => {
    const result = parseRate(`1/${" ".repeat(5000)}s`);
    expect(result.ok || result.error.message).toContain("too long");
  });
});
