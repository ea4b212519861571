/**
 * The optional reranker (`screening.rerankerAlias`): a model orders the screened candidates by
 * relevance to the query, one structured call whose schema allows only their ids; ids it leaves
 * out keep their screening order after the ones it ranked. A failed call fails the step, as any
 * structured answer that is still invalid after its retry.
 */
import { generateStructured, type Llm } from "../llm.js";
import type { Screened } from "./screen.js";

export async function rerank<E>(llm: Llm, query: string, hits: readonly Screened<E>[], textOf: (id: string) => string, options: { iteration?: number; signal?: AbortSignal } = {}): Promise<Screened<E>[]> {
  if (hits.length < 2) return [...hits];
  const ids = hits.map((h) => h.id);
  const schema = { type: "object", required: ["order"], properties: { order: { type: "array", items: { enum: ids }, uniqueItems: true } } };
  const prompt = [`Order these passages from most to least relevant to the query, by id.`, `Query: ${query}`, ...hits.map((h) => `[${h.id}]\n${textOf(h.id).slice(0, 800)}`)].join("\n\n");
  const r = await generateStructured<{ order: string[] }>(llm, { role: "reranker", prompt, ...(options.iteration !== undefined ? { iteration: options.iteration } : {}), ...(options.signal ? { signal: options.signal } : {}) }, schema);
  const order = [...r.value.order, ...ids.filter((id) => !r.value.order.includes(id))];
  const byId = new Map(hits.map((h) => [h.id, h]));
  return order.map((id, i) => ({ ...byId.get(id)!, ranks: { ...byId.get(id)!.ranks, reranked: i + 1 } }));
}
