/** "Did you mean …?": the closest candidate within a tight edit distance, or nothing. */
export function closest(input: string, candidates: Iterable<string>): string | undefined {
  const needle = input.toLowerCase();
  // Tight threshold: a suggestion that is often wrong is worse than none.
  const limit = Math.max(1, Math.min(3, Math.floor(needle.length / 3)));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    if (candidate === input) continue;
    const lower = candidate.toLowerCase();
    // "timeout" for "timeout_ms": a clear prefix is as good as a one-letter typo.
    // ... and "closure-not-grounded" for "pulse/closure-not-grounded": a rule id without its namespace.
    const prefix = (Math.min(needle.length, lower.length) >= 4 && (lower.startsWith(needle) || needle.startsWith(lower))) || lower.endsWith("/" + needle);
    const d = prefix ? 1 : distance(needle, lower);
    if (d < bestDistance || (d === bestDistance && best !== undefined && candidate < best)) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

/** Optimal string alignment distance: Levenshtein plus adjacent transposition ("retreive"). */
export function distance(a: string, b: string): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > 8) return Math.abs(a.length - b.length);
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[] = new Array(rows * cols).fill(0);
  for (let i = 0; i < rows; i++) d[i * cols] = i;
  for (let j = 0; j < cols; j++) d[j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min((d[(i - 1) * cols + j] as number) + 1, (d[i * cols + j - 1] as number) + 1, (d[(i - 1) * cols + j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, (d[(i - 2) * cols + j - 2] as number) + 1);
      d[i * cols + j] = v;
    }
  }
  return d[rows * cols - 1] as number;
}

export function didYouMean(candidate: string | undefined): string | undefined {
  return candidate === undefined ? undefined : `did you mean "${candidate}"?`;
}
