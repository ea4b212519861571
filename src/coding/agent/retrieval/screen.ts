/**
 * Seed 002's screening strategies over any documents: `keyword` is BM25; `vector` ranks by the
 * cosine of provider embeddings (exact nearest neighbours: the stores are small), cached on disk;
 * `hybrid` is reciprocal-rank fusion of the two. No strategy falls back silently: vector and
 * hybrid without an embedder are refused where the agent is assembled.
 */
import { bm25, buildIndex } from "./bm25.js";
import { cosine, reciprocalRankFusion } from "./fusion.js";
import type { EmbeddingCache } from "./embedding-cache.js";

export type Strategy = "keyword" | "vector" | "hybrid";

export interface Screened<E> {
  entry: E;
  id: string;
  score: number;
  /** 1-based rank under each strategy that ranked it. */
  ranks: { keyword?: number; vector?: number; reranked?: number };
}

export class ScreeningError extends Error {}

export async function screen<E>(docs: readonly { id: string; text: string; entry: E }[], query: string, options: { strategy: Strategy; k: number; embeddings?: EmbeddingCache; signal?: AbortSignal }): Promise<Screened<E>[]> {
  if (docs.length === 0 || !query.trim()) return [];
  const byId = new Map(docs.map((d) => [d.id, d]));
  const keyword = options.strategy === "vector" ? [] : bm25(buildIndex(docs), query);
  let vector: { id: string; score: number }[] = [];
  if (options.strategy !== "keyword") {
    if (!options.embeddings) throw new ScreeningError(`${options.strategy} screening needs an embeddings endpoint (screening.embeddingAlias naming an llm entry with an embeddingModel)`);
    const [q, ...vectors] = await options.embeddings.embed([query, ...docs.map((d) => d.text)], options.signal);
    vector = docs.map((d, i) => ({ id: d.id, score: cosine(q!, vectors[i]!) })).sort((a, b) => b.score - a.score);
  }
  const rankOf = (list: { id: string }[]) => new Map(list.map((x, i) => [x.id, i + 1]));
  const kr = rankOf(keyword);
  const vr = rankOf(vector);
  const fused = options.strategy === "keyword" ? keyword : options.strategy === "vector" ? vector : reciprocalRankFusion([keyword.map((x) => x.id), vector.map((x) => x.id)]);
  return fused.slice(0, options.k).map((x) => ({ entry: byId.get(x.id)!.entry, id: x.id, score: x.score, ranks: { ...(kr.has(x.id) ? { keyword: kr.get(x.id)! } : {}), ...(vr.has(x.id) ? { vector: vr.get(x.id)! } : {}) } }));
}
