/**
 * Issue 28, retrieval: the agent's screening strategies on a small labelled set of guides
 * (bench/fixtures/agent-retrieval/), against a plain substring match (guides ranked by how
 * many of the query's words occur in them). Quality, not time: hit@1, hit@3 and MRR, each
 * strategy through the agent's own screen(); vector and hybrid embed with character trigrams.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadGuides } from "../src/coding/agent/retrieval/corpus.js";
import { EmbeddingCache } from "../src/coding/agent/retrieval/embedding-cache.js";
import { evaluate, type Quality } from "../src/coding/agent/retrieval/evaluate.js";
import { substringMatch } from "../src/coding/agent/retrieval/bm25.js";
import { screen, type Strategy } from "../src/coding/agent/retrieval/screen.js";
import { RETRIEVAL_GUIDES, RETRIEVAL_QUERIES, trigramVector } from "./agent-retrieval-data.js";
import { report } from "./measure.js";

const corpus = loadGuides([RETRIEVAL_GUIDES]);
const embeddings = new EmbeddingCache(mkdtempSync(join(tmpdir(), "pulse-bench-emb-")), { model: "trigram-256", embed: async (texts) => texts.map((t) => trigramVector(t)) });
const k = corpus.length;

const rows: { name: string; value: string }[] = [];
const fmt = (q: Quality) => `hit@1 ${q.hit1.toFixed(2)} · hit@3 ${q.hit3.toFixed(2)} · MRR ${q.mrr.toFixed(3)}`;
const baseline = await evaluate(RETRIEVAL_QUERIES, (q) => substringMatch(corpus, q).map((x) => x.id));
rows.push({ name: "substring match (baseline)", value: fmt(baseline) });
const results: Record<string, Quality> = {};
for (const strategy of ["keyword", "vector", "hybrid"] as Strategy[]) {
  results[strategy] = await evaluate(RETRIEVAL_QUERIES, async (q) => (await screen(corpus, q, { strategy, k, embeddings })).map((x) => x.id));
  rows.push({ name: `${strategy === "keyword" ? "keyword (BM25)" : strategy === "hybrid" ? "hybrid (RRF of BM25 and vector, k = 60)" : "vector (trigram embeddings, cosine)"}`, value: fmt(results[strategy]!) });
}
rows.push({ name: "queries / guides", value: `${RETRIEVAL_QUERIES.length} / ${corpus.length}` });

report({
  title: `Agent screening quality on ${RETRIEVAL_QUERIES.length} labelled queries over ${corpus.length} guides`,
  rows,
  target: "BM25 and hybrid each beat the substring match on MRR and hit@1",
  met: results.keyword!.mrr > baseline.mrr && results.hybrid!.mrr > baseline.mrr && results.keyword!.hit1 > baseline.hit1 && results.hybrid!.hit1 > baseline.hit1,
});
