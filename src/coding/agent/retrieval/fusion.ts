/**
 * Reciprocal-rank fusion (Cormack, Clarke and Büttcher 2009): a document's score is the sum over
 * rankings of 1 / (k + rank), k = 60, ranks from 1. Hybrid screening fuses BM25 and vector
 * rankings this way: no score scales to calibrate, and a document either ranking finds counts.
 */
export function reciprocalRankFusion(rankings: readonly (readonly string[])[], k = 60): { id: string; score: number }[] {
  const scores = new Map<string, number>();
  const first = new Map<string, number>();
  let order = 0;
  for (const ranking of rankings) {
    ranking.forEach((id, i) => {
      scores.set(id, (scores.get(id) ?? 0) + 1 / (k + i + 1));
      if (!first.has(id)) first.set(id, order++);
    });
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score || first.get(a.id)! - first.get(b.id)!);
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
