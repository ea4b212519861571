/**
 * The labelled guides the agent's screening is measured on (bench/fixtures/agent-retrieval/:
 * 16 ops guides in the seed's store format, 20 queries each naming its one relevant guide), and
 * the embedding used offline: character-trigram hashing vectors (256 dimensions), which the tests'
 * loopback provider serves too. It embeds spelling, not meaning: it measures the fusion, not a model.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Labelled } from "../src/coding/agent/retrieval/evaluate.js";

const here = import.meta.dirname.endsWith(join("dist", "bench")) ? join(import.meta.dirname, "../../bench") : import.meta.dirname;
export const RETRIEVAL_GUIDES = join(here, "fixtures/agent-retrieval/guides.json");
export const RETRIEVAL_QUERIES = JSON.parse(readFileSync(join(here, "fixtures/agent-retrieval/queries.json"), "utf8")) as Labelled[];

export function trigramVector(text: string, dims = 256): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const w = `#${word}#`;
    for (let i = 0; i + 3 <= w.length; i++) {
      let h = 2166136261;
      for (const c of w.slice(i, i + 3)) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
      v[(h >>> 0) % dims]! += 1;
    }
  }
  return v;
}
