/**
 * Screening as the agent does it: BM25 (idf, length normalisation, stemming), reciprocal-rank
 * fusion, the store formats refused with the file and entry named, embeddings from a loopback
 * provider cached by content hash (an edited entry alone is embedded again), and quality on the
 * labelled set of docs/benchmarks.md: BM25 and hybrid each beat a plain substring match.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpEmbedder } from "../../adapters/agents/llm/embeddings-client.js";
import { bm25, buildIndex, substringMatch, tokenize } from "../../src/coding/agent/retrieval/bm25.js";
import { CorpusError, loadGuides, loadKnowledge } from "../../src/coding/agent/retrieval/corpus.js";
import { EmbeddingCache } from "../../src/coding/agent/retrieval/embedding-cache.js";
import { evaluate } from "../../src/coding/agent/retrieval/evaluate.js";
import { reciprocalRankFusion } from "../../src/coding/agent/retrieval/fusion.js";
import { screen } from "../../src/coding/agent/retrieval/screen.js";
import { RETRIEVAL_GUIDES, RETRIEVAL_QUERIES } from "../../bench/agent-retrieval-data.js";
import { startModelApi, type ModelApi } from "./support/model-api.js";

let api: ModelApi;
beforeAll(async () => (api = await startModelApi()));
afterAll(() => api.close());
const cacheOf = (dir = mkdtempSync(join(tmpdir(), "pulse-agent-emb-"))) => new EmbeddingCache(dir, new HttpEmbedder("trigram-256", { baseUrl: `${api.url}/v1`, maxRetries: 0 }));

describe("BM25", () => {
  const docs = [
    { id: "a", text: "deploy the service to production" },
    { id: "b", text: "the the the the the service" },
    { id: "c", text: "deploying services safely: a deployment checklist for production deploys" },
  ];
  it("weighs rare terms over common ones, drops stop words and stems", () => {
    expect(tokenize("The Deploying services")).toEqual(["deploy", "service"]);
    expect(tokenize("deploys deployed")).toEqual(["deploy", "deploy"]);
    // "the" is a stop word: no evidence for any document.
    expect(bm25(buildIndex(docs), "the").map((x) => x.id)).toEqual([]);
    const ranked = bm25(buildIndex(docs), "deploy to production");
    expect(ranked.map((x) => x.id)).toEqual(["a", "c"]);
    expect(ranked[0]!.score).toBeGreaterThan(ranked[1]!.score);
    // The substring baseline counts "the" and "to" as evidence: the doc of filler words ranks.
    expect(substringMatch(docs, "the service").map((x) => x.id)).toEqual(["a", "b", "c"]);
  });

  it("fuses rankings by reciprocal rank (k = 60): a document both rank high wins", () => {
    const fused = reciprocalRankFusion([["x", "y", "z"], ["y", "z", "x"]]);
    expect(fused.map((f) => f.id)).toEqual(["y", "x", "z"]);
    expect(fused[0]!.score).toBeCloseTo(1 / 62 + 1 / 61, 10);
  });
});

describe("the store formats", () => {
  it("loads guides and knowledge from files and directories, and names the file and entry of a mistake", () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-agent-corpus-"));
    writeFileSync(join(dir, "g.json"), JSON.stringify({ meta: { name: "g", version: "1.0.0", domain: "d" }, entries: [{ name: "n", description: "d", plan: ["a"] }] }));
    expect(loadGuides([dir]).map((d) => d.id)).toEqual(["g/n"]);
    writeFileSync(join(dir, "g.json"), JSON.stringify({ meta: { name: "g" }, entries: [{ name: "n", description: "d", plan: ["a"] }, { name: "m", description: "d", plan: "a" }] }));
    expect(() => loadGuides([dir])).toThrow(CorpusError);
    expect(() => loadGuides([dir])).toThrow(`${join(dir, "g.json")}: entries[1].plan: must be a list of steps (strings)`);
    writeFileSync(join(dir, "k.json"), JSON.stringify({ meta: { name: "k" }, entries: [{ name: "n", description: "d" }] }));
    expect(() => loadKnowledge([join(dir, "k.json")])).toThrow(`${join(dir, "k.json")}: entries[0].content: must be a string`);
    expect(loadKnowledge([join(dir, "missing")])).toEqual([]);
  });
});

describe("vector screening through the provider's embeddings endpoint", () => {
  it("embeds each text once: a second screening embeds nothing new, an edited entry alone is embedded again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-agent-emb-"));
    const corpus = loadGuides([RETRIEVAL_GUIDES]);
    const before = api.embedded.length;
    const first = await screen(corpus, "deploy the new build to prod", { strategy: "vector", k: 3, embeddings: cacheOf(dir) });
    expect(first[0]!.id).toBe("ops/release to production");
    expect(api.embedded.length - before).toBe(corpus.length + 1);
    // A new process (a new cache object) over the same directory.
    const again = cacheOf(dir);
    await screen(corpus, "deploy the new build to prod", { strategy: "hybrid", k: 3, embeddings: again });
    expect(api.embedded.length - before).toBe(corpus.length + 1);
    expect(again.misses).toBe(0);
    const edited = corpus.map((d, i) => (i === 0 ? { ...d, text: `${d.text}\nand tell the team` } : d));
    await screen(edited, "deploy the new build to prod", { strategy: "vector", k: 3, embeddings: cacheOf(dir) });
    expect(api.embedded.slice(corpus.length + 1 + before)).toEqual([edited[0]!.text]);
  });
});

describe("quality on the labelled guides (docs/benchmarks.md)", () => {
  it("BM25 and hybrid each beat a plain substring match, on hit@1 and on MRR", async () => {
    const corpus = loadGuides([RETRIEVAL_GUIDES]);
    const embeddings = cacheOf();
    const baseline = await evaluate(RETRIEVAL_QUERIES, (q) => substringMatch(corpus, q).map((x) => x.id));
    const keyword = await evaluate(RETRIEVAL_QUERIES, async (q) => (await screen(corpus, q, { strategy: "keyword", k: corpus.length })).map((x) => x.id));
    const hybrid = await evaluate(RETRIEVAL_QUERIES, async (q) => (await screen(corpus, q, { strategy: "hybrid", k: corpus.length, embeddings })).map((x) => x.id));
    expect(RETRIEVAL_QUERIES.length).toBe(30);
    expect(keyword.mrr).toBeGreaterThan(baseline.mrr);
    expect(keyword.hit1).toBeGreaterThan(baseline.hit1);
    expect(hybrid.mrr).toBeGreaterThan(baseline.mrr);
    expect(hybrid.hit1).toBeGreaterThan(baseline.hit1);
    // What docs/benchmarks.md records.
    expect({ baseline, keyword, hybrid }).toEqual({ baseline: { hit1: 0.867, hit3: 0.967, mrr: 0.921 }, keyword: { hit1: 0.967, hit3: 1, mrr: 0.983 }, hybrid: { hit1: 1, hit3: 1, mrr: 1 } });
  });
});
