import { closest } from "./suggest.js";
import { MAX_SAFE, scaleExact, scanDecimal } from "./decimal.js";
import { type ParseResult, fail, isDigit, isLetter, isSpace, lengthError, ok, quote } from "./grammar-error.js";

export interface Rate {
  /** How many invocations are allowed per window: a positive integer. */
  count: number;
  /** The window length in milliseconds: a positive integer. */
  perMs: number;
}

const UNITS: ReadonlyMap<string, number> = new Map([
  ["ms", 1],
  ...names(1000, "s", "sec", "secs", "second", "seconds"),
  ...names(60_000, "m", "min", "mins", "minute", "minutes"),
  ...names(3_600_000, "h", "hr", "hrs", "hour", "hours"),
  ...names(86_400_000, "d", "day", "days"),
  ...names(604_800_000, "w", "wk", "wks", "week", "weeks"),
]);

function names(ms: number, ...words: string[]): [string, number][] {
  return words.map((w) => [w, ms]);
}

/** Suggest whole words: a one-letter candidate would "match" any typo that starts with it. */
const SUGGESTIONS = ["ms", "sec", "second", "min", "minute", "hour", "day", "week"];

const EXAMPLES = "e.g. 10/min, 5/s, 100/h, 1000/day or 3/5m";

/** Parses a rate such as `10/min` or `3/5m` (three per five minutes), as used by `rate_limit`. */
export function parseRate(text: string): ParseResult<Rate> {
  const tooLong = lengthError(text, "rate");
  if (tooLong) return tooLong;
  let end = text.length;
  while (end > 0 && isSpace(text.charCodeAt(end - 1))) end--;
  let i = 0;
  while (i < end && isSpace(text.charCodeAt(i))) i++;
  if (i === end) return fail(`empty rate (${EXAMPLES})`, i, 0);

  if (text[i] === "-") return fail("a rate count cannot be negative", i, 1);
  const countStart = i;
  while (i < end && isDigit(text.charCodeAt(i))) i++;
  if (i === countStart) return fail(`a rate starts with a count (${EXAMPLES})`, i, 1);
  if (text[i] === ".") return fail("a rate count must be a whole number", countStart, i + 1 - countStart);
  const count = BigInt(text.slice(countStart, i));
  if (count === 0n) return fail("a rate count must be at least 1", countStart, i - countStart);
  if (count > MAX_SAFE) return fail("rate count is too large", countStart, i - countStart);

  while (i < end && isSpace(text.charCodeAt(i))) i++;
  if (text[i] !== "/") {
    const found = i < end ? `found ${quote(text.slice(i, end))}` : "found nothing";
    return fail(`expected "/" and a period after the count, ${found} (${EXAMPLES})`, i, i < end ? 1 : 0);
  }
  i++;
  while (i < end && isSpace(text.charCodeAt(i))) i++;
  if (i === end) return fail(`expected a period after "/" (${EXAMPLES})`, i, 0);

  const periodStart = i;
  const number = scanDecimal(text, i);
  if (number.kind === "error") return fail(number.message, number.offset, number.length);
  const decimal = number.kind === "ok" ? number.decimal : { whole: "1", fraction: "", start: i, end: i };
  i = decimal.end;
  while (i < end && isSpace(text.charCodeAt(i))) i++;
  const unitStart = i;
  while (i < end && isLetter(text.charCodeAt(i))) i++;
  const unit = text.slice(unitStart, i);
  if (unit === "") {
    if (unitStart < end) return fail(`unexpected ${quote(text[unitStart] ?? "")} in the period`, unitStart, 1);
    const written = text.slice(decimal.start, decimal.end);
    return fail(`add a unit to the period, e.g. ${written}s or ${written}min`, decimal.start, decimal.end - decimal.start);
  }
  const unitMs = UNITS.get(unit);
  if (unitMs === undefined) {
    const near = closest(unit, SUGGESTIONS);
    const hint = near === undefined ? "" : `, did you mean ${quote(near)}?`;
    return fail(`unknown rate unit ${quote(unit)}${hint} (use s, min, h, day or week)`, unitStart, unit.length);
  }
  while (i < end && isSpace(text.charCodeAt(i))) i++;
  if (i < end) return fail(`unexpected ${quote(text.slice(i, end))} after the period`, i, end - i);

  const perMs = scaleExact(decimal, unitMs);
  const periodLength = end - periodStart;
  if (perMs === undefined) return fail("the period must be a whole number of milliseconds", periodStart, periodLength);
  if (perMs === 0n) return fail("the period must be longer than zero", periodStart, periodLength);
  if (perMs > MAX_SAFE) return fail("the period is too long", periodStart, periodLength);
  return ok({ count: Number(count), perMs: Number(perMs) });
}
