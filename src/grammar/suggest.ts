/**
 * "Did you mean …?": the closest candidate within a tight edit distance, or nothing.
 *
 * A manifest can name thousands of phases and get every reference wrong, so one suggestion per
 * reference against every phase is quadratic. Two bounds keep that linear without changing
 * any suggestion a normal manifest gets: candidates that cannot be within the threshold are
 * skipped before the edit distance runs (and the edit distance stops at the threshold), and a
 * large candidate list carries a work budget: once lookups against it have spent the budget,
 * later lookups against it suggest nothing.
 */

/** Lists up to this size are cheap to scan on every lookup; constant lists (tokens, keys) all are. */
const BUDGETED_LIST = 64;
/** Work units (candidates scanned plus edit-distance cells) per large list: a fraction of a second of lookups. */
const LIST_BUDGET = 4_000_000;
// Keyed by the list itself: callers pass one loop's phase list for all of its references, so
// this is a budget per loop, and it goes away with the loop.
const spent = new WeakMap<object, number>();

export function closest(input: string, candidates: Iterable<string>): string | undefined {
  const list = Array.isArray(candidates) ? (candidates as readonly string[]) : [...candidates];
  const budgeted = list.length > BUDGETED_LIST && typeof candidates === "object";
  const used = budgeted ? (spent.get(candidates) ?? 0) : 0;
  if (used >= LIST_BUDGET) return undefined;
  const needle = input.toLowerCase();
  // Tight threshold: a suggestion that is often wrong is worse than none.
  const limit = Math.max(1, Math.min(3, Math.floor(needle.length / 3)));
  let work = list.length;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of list) {
    if (candidate === input) continue;
    const lower = candidate.toLowerCase();
    // "timeout" for "timeout_ms": a clear prefix is as good as a one-letter typo.
    // ... and "closure-not-grounded" for "pulse/closure-not-grounded": a rule id without its namespace.
    const prefix = (Math.min(needle.length, lower.length) >= 4 && (lower.startsWith(needle) || needle.startsWith(lower))) || lower.endsWith("/" + needle);
    let d = 1;
    if (!prefix) {
      // The distance is at least the length difference: such a candidate can never be chosen.
      if (Math.abs(needle.length - lower.length) > limit) continue;
      d = distance(needle, lower, limit);
      work += needle.length * (2 * limit + 1);
      if (d > limit) continue;
    }
    if (d < bestDistance || (d === bestDistance && best !== undefined && candidate < best)) {
      best = candidate;
      bestDistance = d;
    }
  }
  if (budgeted) spent.set(candidates, used + work);
  return best;
}

/**
 * Optimal string alignment distance: Levenshtein plus adjacent transposition ("retreive").
 * Exact up to `max`; past it, some value above `max` (only cells within `max` of the diagonal
 * are computed, so the cost is O(length × max) rather than O(length²)).
 */
export function distance(a: string, b: string, max = Infinity): number {
  if (a === b) return 0;
  const gap = Math.abs(a.length - b.length);
  if (gap > 8 || gap > max) return gap;
  const cols = b.length + 1;
  const over = Math.min(max, a.length + b.length) + 1;
  // Three rolling rows (the transposition looks two rows back).
  let prev2: number[] = new Array<number>(cols).fill(over);
  let prev: number[] = Array.from({ length: cols }, (_, j) => (j <= max ? j : over));
  let cur: number[] = new Array<number>(cols).fill(over);
  let prevMin = 0;
  for (let i = 1; i <= a.length; i++) {
    const lo = Math.max(1, i - max);
    const hi = Math.min(b.length, i + max);
    cur[lo - 1] = lo === 1 ? Math.min(i, over) : over;
    if (hi + 1 < cols) cur[hi + 1] = over;
    let rowMin = cur[lo - 1] as number;
    for (let j = lo; j <= hi; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, (prev2[j - 2] as number) + 1);
      v = Math.min(v, over);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    // Every cell derives from the two rows above it: once both are past max, so is the answer.
    if (rowMin >= over && prevMin >= over) return over;
    prevMin = rowMin;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[b.length] as number;
}

export function didYouMean(candidate: string | undefined): string | undefined {
  return candidate === undefined ? undefined : `did you mean "${candidate}"?`;
}

/** A list for a message: all of it when short, else the first few and how many more. */
export function someOf(items: readonly string[], shown = 10): string {
  if (items.length <= shown) return items.join(", ");
  return `${items.slice(0, shown).join(", ")} … and ${items.length - shown} more`;
}
