/**
 * Embeddings cached on disk by content hash (SHA-256 of the model and the text), one JSON file
 * per model under the agent's cache, replaced by rename: a second run over the same guides and
 * knowledge embeds nothing new, and an edited entry is embedded again on its own.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface Embedder {
  readonly model: string;
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}

export const contentHash = (model: string, text: string): string => createHash("sha256").update(model).update("\0").update(text).digest("hex");

export class EmbeddingCache {
  private readonly file: string;
  private vectors: Record<string, number[]> | undefined;
  /** Texts embedded through this cache (not found in it). */
  misses = 0;
  hits = 0;

  constructor(
    private readonly dir: string,
    private readonly embedder: Embedder,
  ) {
    this.file = join(dir, `embeddings-${createHash("sha256").update(embedder.model).digest("hex").slice(0, 16)}.json`);
  }

  private load(): Record<string, number[]> {
    if (this.vectors) return this.vectors;
    try {
      this.vectors = existsSync(this.file) ? (JSON.parse(readFileSync(this.file, "utf8")) as Record<string, number[]>) : {};
    } catch {
      // A damaged cache is only lost time: start it again.
      this.vectors = {};
    }
    return this.vectors;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]> {
    const vectors = this.load();
    const keys = texts.map((t) => contentHash(this.embedder.model, t));
    const missing = [...new Set(keys.map((k, i) => (vectors[k] ? -1 : i)).filter((i) => i >= 0).map((i) => texts[i]!))];
    this.hits += texts.length - keys.filter((k) => !vectors[k]).length;
    if (missing.length > 0) {
      const fresh = await this.embedder.embed(missing, signal);
      missing.forEach((t, i) => (vectors[contentHash(this.embedder.model, t)] = fresh[i]!));
      this.misses += missing.length;
      mkdirSync(this.dir, { recursive: true });
      const tmp = `${this.file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(vectors));
      renameSync(tmp, this.file);
    }
    return keys.map((k) => vectors[k]!);
  }
}
