import { type Decimal, MAX_SAFE, scaleExact, scanDecimal } from "./decimal.js";
import { type ParseResult, fail, isLetter, isSpace, lengthError, ok, quote } from "./grammar-error.js";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;
/** Calendar months and years have no fixed length; the project fixes them (decisions.md). */
const MONTH = 30 * DAY;
const YEAR = 365 * DAY;

/** Compact units, largest first: a compound must list them in this order, each at most once. */
const COMPACT_UNITS: readonly (readonly [string, number])[] = [
  ["w", WEEK],
  ["d", DAY],
  ["h", HOUR],
  ["m", MINUTE],
  ["s", SECOND],
  ["ms", 1],
];

const WORDS: ReadonlyMap<string, number> = new Map([
  ["hourly", HOUR],
  ["daily", DAY],
  ["weekly", WEEK],
  ["monthly", MONTH],
]);

const ISO_DATE: readonly (readonly [string, number])[] = [
  ["Y", YEAR],
  ["M", MONTH],
  ["W", WEEK],
  ["D", DAY],
];
const ISO_TIME: readonly (readonly [string, number])[] = [
  ["H", HOUR],
  ["M", MINUTE],
  ["S", SECOND],
];

const EXAMPLES = "e.g. 500ms, 30s, 1h30m, PT1H or daily";

/**
 * Parses a PULSE duration to whole milliseconds: compact (`500ms`, `1.5h`, `1h30m`), ISO-8601
 * (`PT1H`, `P1DT2H`, `P1M` = 30 days, `P1Y` = 365 days) or a word (`hourly`, `daily`, `weekly`,
 * `monthly`). Zero is allowed (`phase_offset: "0s"`); negative and sub-millisecond results are not.
 */
export function parseDuration(text: string): ParseResult<number> {
  const tooLong = lengthError(text, "duration");
  if (tooLong) return tooLong;
  let start = 0;
  let end = text.length;
  while (start < end && isSpace(text.charCodeAt(start))) start++;
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
  if (start === end) return fail(`empty duration (${EXAMPLES})`, start, 0);

  const body = text.slice(start, end);
  const lower = body.toLowerCase();
  const word = WORDS.get(lower);
  if (word !== undefined) return ok(word);
  if (body[0] === "-") return fail("a duration cannot be negative", start, 1);
  if (body[0] === "+") return fail(`remove the "+" sign`, start, 1);
  if (lower === "nan" || lower === "infinity") return fail(`not a duration (${EXAMPLES})`, start, end - start);
  if (body[0] === "P" || body[0] === "p") return parseIso(text, start, end);
  return parseCompact(text, start, end);
}

function parseCompact(text: string, start: number, end: number): ParseResult<number> {
  let total = 0n;
  let lastRank = -1;
  let i = start;
  while (i < end) {
    const number = scanDecimal(text, i);
    if (number.kind === "error") return fail(number.message, number.offset, number.length);
    if (number.kind === "none") {
      return fail(i === start ? `not a duration (${EXAMPLES})` : `unexpected ${quote(text[i] ?? "")} (${EXAMPLES})`, i, i === start ? end - i : 1);
    }
    const decimal = number.decimal;
    i = decimal.end;
    while (i < end && isSpace(text.charCodeAt(i))) i++;
    const unitStart = i;
    while (i < end && isLetter(text.charCodeAt(i))) i++;
    const unit = text.slice(unitStart, i);
    const written = text.slice(decimal.start, decimal.end);
    if (unit === "") {
      if (unitStart < end) return fail(`unexpected ${quote(text[unitStart] ?? "")} after ${written}`, unitStart, 1);
      return fail(`add a unit, e.g. ${written}ms or ${written}s`, decimal.start, decimal.end - decimal.start);
    }
    const rank = COMPACT_UNITS.findIndex(([name]) => name === unit);
    const entry = COMPACT_UNITS[rank];
    if (entry === undefined) {
      return fail(`unknown duration unit ${quote(unit)} (use ms, s, m, h, d, w)`, unitStart, unit.length);
    }
    if (rank === lastRank) return fail(`unit ${quote(unit)} appears twice`, unitStart, unit.length);
    if (rank < lastRank) {
      const previous = COMPACT_UNITS[lastRank]?.[0] ?? "";
      return fail(`write larger units first: ${quote(unit)} goes before ${quote(previous)} (e.g. 1h30m)`, unitStart, unit.length);
    }
    lastRank = rank;
    const part = exactPart(decimal, entry[1], written + unit);
    if (!part.ok) return fail(part.error.message, decimal.start, i - decimal.start);
    total += part.value;
    if (total > MAX_SAFE) return fail("duration is too large", start, end - start);
    while (i < end && isSpace(text.charCodeAt(i))) i++;
  }
  return ok(Number(total));
}

function parseIso(text: string, start: number, end: number): ParseResult<number> {
  let total = 0n;
  let i = start + 1;
  let units = ISO_DATE;
  let rank = -1;
  let inTime = false;
  let timeStart = -1;
  let components = 0;
  const example = "(e.g. PT1H, PT0.5S, P1D, P1DT2H)";
  while (i < end) {
    const c = text[i] ?? "";
    if (c === "T" || c === "t") {
      if (inTime) return fail(`"T" appears twice`, i, 1);
      inTime = true;
      timeStart = i;
      units = ISO_TIME;
      rank = -1;
      i++;
      continue;
    }
    const number = scanDecimal(text, i);
    if (number.kind === "error") return fail(number.message, number.offset, number.length);
    if (number.kind === "none") return fail(`expected a number in the iso-8601 duration ${example}`, i, 1);
    const decimal = number.decimal;
    i = decimal.end;
    const designator = (text[i] ?? "").toUpperCase();
    if (i >= end) return fail(`add a designator after ${text.slice(decimal.start, decimal.end)} ${example}`, decimal.start, decimal.end - decimal.start);
    const at = units.findIndex(([name]) => name === designator);
    const entry = units[at];
    if (entry === undefined) {
      if (!inTime && ISO_TIME.some(([name]) => name === designator)) {
        return fail(`hours and seconds go after "T" (e.g. PT${text.slice(decimal.start, decimal.end)}${designator})`, i, 1);
      }
      if (inTime && ISO_DATE.some(([name]) => name === designator)) {
        return fail(`years, weeks and days go before "T" (e.g. P1DT2H)`, i, 1);
      }
      return fail(`unknown iso-8601 designator ${quote(text[i] ?? "")} (use Y, M, W, D, then T and H, M, S)`, i, 1);
    }
    if (at <= rank) {
      return fail(`iso-8601 designators go in the order ${inTime ? "H, M, S" : "Y, M, W, D"}, each at most once`, i, 1);
    }
    rank = at;
    const part = exactPart(decimal, entry[1], text.slice(decimal.start, i + 1));
    if (!part.ok) return fail(part.error.message, decimal.start, i + 1 - decimal.start);
    total += part.value;
    if (total > MAX_SAFE) return fail("duration is too large", start, end - start);
    components++;
    i++;
  }
  if (inTime && rank === -1) return fail(`expected a time component after "T" ${example}`, timeStart, 1);
  if (components === 0) return fail(`empty iso-8601 duration ${example}`, start, end - start);
  return ok(Number(total));
}

function exactPart(decimal: Decimal, unitMs: number, written: string): ParseResult<bigint> {
  const value = scaleExact(decimal, unitMs);
  if (value === undefined) return fail(`${written} is not a whole number of milliseconds`, 0);
  return ok(value);
}

const FORMAT_UNITS: readonly (readonly [string, number])[] = [
  ["d", DAY],
  ["h", HOUR],
  ["m", MINUTE],
  ["s", SECOND],
];

/**
 * Compact human form for messages and diagrams: 90000 → "1m30s", 604800000 → "7d", 0 → "0ms".
 * Days are the largest unit so that a week and a fortnight read alike ("7d", "14d"); the output
 * parses back to the same value with parseDuration for every whole, non-negative ms.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 0) return `-${formatDuration(-ms)}`;
  if (ms === 0) return "0ms";
  let rest = ms;
  let out = "";
  for (const [unit, size] of FORMAT_UNITS) {
    const count = Math.floor(rest / size);
    if (count > 0) {
      out += `${count}${unit}`;
      rest -= count * size;
    }
  }
  if (rest > 0) out += `${rest}ms`;
  return out;
}
