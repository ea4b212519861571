/**
 * A provider's embeddings endpoint (`POST /v1/embeddings`, OpenAI-compatible; Ollama serves it on
 * `/v1` too), with the chat client's retry policy. Inputs go in batches.
 */
import { ChatError, postWithRetry, type ChatClientOptions } from "../http/chat-client.js";
import type { Embedder } from "../../../src/coding/agent/retrieval/embedding-cache.js";

export function embeddingsUrl(baseUrl: string): string {
  const root = baseUrl.replace(/\/+$/, "");
  return root.endsWith("/v1") ? `${root}/embeddings` : `${root}/v1/embeddings`;
}

export class HttpEmbedder implements Embedder {
  /** Texts sent to the endpoint so far (what the cache saves shows here). */
  embedded = 0;

  constructor(
    readonly model: string,
    private readonly options: ChatClientOptions,
    private readonly batch = 64,
  ) {}

  async embed(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += this.batch) {
      const input = texts.slice(i, i + this.batch);
      const { value } = await postWithRetry(embeddingsUrl(this.options.baseUrl), this.options, { model: this.model, input }, parse, signal);
      if (value.length !== input.length) throw new ChatError(`${embeddingsUrl(this.options.baseUrl)} answered ${value.length} vectors for ${input.length} inputs`, 502);
      out.push(...value);
      this.embedded += input.length;
    }
    return out;
  }
}

function parse(url: string, text: string): number[][] {
  let parsed: { data?: { index?: number; embedding?: unknown }[] };
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ChatError(`${url} answered something that is not JSON: ${text.slice(0, 200)}`, 502);
  }
  if (!Array.isArray(parsed.data)) throw new ChatError(`${url} answered without data[]`, 502);
  const rows = [...parsed.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  return rows.map((r, i) => {
    if (!Array.isArray(r.embedding) || r.embedding.some((x) => typeof x !== "number")) throw new ChatError(`${url}: data[${i}].embedding is not a list of numbers`, 502);
    return r.embedding as number[];
  });
}
