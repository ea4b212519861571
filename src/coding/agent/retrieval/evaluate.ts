/**
 * Retrieval quality on a labelled set: for each query the one relevant document's rank under a
 * ranking function, summed up as hit@1, hit@3 and mean reciprocal rank (0 when not ranked).
 */
export interface Labelled {
  q: string;
  relevant: string;
}

export interface Quality {
  hit1: number;
  hit3: number;
  mrr: number;
}

export async function evaluate(queries: readonly Labelled[], rank: (q: string) => Promise<string[]> | string[]): Promise<Quality> {
  let hit1 = 0;
  let hit3 = 0;
  let rr = 0;
  for (const { q, relevant } of queries) {
    const ids = await rank(q);
    const at = ids.indexOf(relevant);
    if (at === 0) hit1++;
    if (at >= 0 && at < 3) hit3++;
    if (at >= 0) rr += 1 / (at + 1);
  }
  const n = queries.length || 1;
  const r = (x: number) => Math.round((x / n) * 1000) / 1000;
  return { hit1: r(hit1), hit3: r(hit3), mrr: r(rr) };
}
