/**
 * Okapi BM25 (k1 = 1.2, b = 0.75, the Lucene idf ln(1 + (N − df + ½)/(df + ½))) over lowercase
 * word tokens, English stop words removed and a light suffix stemmer applied, so "deploying"
 * meets "deploy". Pure: an index is built once per corpus and asked many times.
 */

const STOP = new Set("a an and are as at be by do for from has have how i in is it its me my of on or our please should so that the their then there this to was we what when where which who will with you your can into about need want".split(" "));

export function stem(word: string): string {
  for (const suffix of ["ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "ed", "ly", "s"]) {
    if (word.length > suffix.length + 2 && word.endsWith(suffix)) return suffix === "ies" || suffix === "ied" ? `${word.slice(0, -suffix.length)}y` : word.slice(0, -suffix.length);
  }
  return word;
}

export function tokenize(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((t) => !STOP.has(t)).map(stem);
}

export interface Bm25Index {
  docs: { id: string; tf: Map<string, number>; length: number }[];
  df: Map<string, number>;
  avgLength: number;
}

export function buildIndex(docs: readonly { id: string; text: string }[]): Bm25Index {
  const df = new Map<string, number>();
  const out = docs.map((d) => {
    const tokens = tokenize(d.text);
    const tf = new Map<string, number>();
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
    return { id: d.id, tf, length: tokens.length };
  });
  const avgLength = out.length ? out.reduce((s, d) => s + d.length, 0) / out.length : 0;
  return { docs: out, df, avgLength };
}

/** Every document with a score above zero, best first (ties in corpus order). */
export function bm25(index: Bm25Index, query: string, k1 = 1.2, b = 0.75): { id: string; score: number }[] {
  const n = index.docs.length;
  const terms = [...new Set(tokenize(query))];
  const scored = index.docs.map((d, i) => {
    let score = 0;
    for (const t of terms) {
      const f = d.tf.get(t);
      if (!f) continue;
      const df = index.df.get(t) ?? 0;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      score += (idf * (f * (k1 + 1))) / (f + k1 * (1 - b + (b * d.length) / (index.avgLength || 1)));
    }
    return { id: d.id, score, i };
  });
  return scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score || a.i - b.i).map(({ id, score }) => ({ id, score }));
}

/** The baseline BM25 is measured against: documents ranked by how many query words occur in them as plain substrings. */
export function substringMatch(docs: readonly { id: string; text: string }[], query: string): { id: string; score: number }[] {
  const words = [...new Set(query.toLowerCase().split(/\s+/).filter(Boolean))];
  return docs
    .map((d, i) => ({ id: d.id, score: words.filter((w) => d.text.toLowerCase().includes(w)).length, i }))
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map(({ id, score }) => ({ id, score }));
}
