/**
 * Which envelope ids a receiver (or an exactly-once sender) has seen, and what each id carried.
 * Bounded by two generations, like the idempotency cache, in entries and in bytes: a
 * generation is retired once it holds half the entries or half the bytes, so a long-running host
 * keeps a flat memory however long the ids it is sent, while recognising every redelivery within
 * the last generation or two.
 *
 * An id seen before with other content (a fingerprint of what the envelope says) is a conflict,
 * not a duplicate: CloudEvents ids are unique per distinct event, so either the sender reuses ids
 * or someone forges them, and taking it as a duplicate would drop a real event without a word.
 */
export interface DedupeLimits {
  /** Ids remembered at most (default 100,000; at least half of them always). */
  maxEntries?: number;
  /** Bytes the remembered ids and fingerprints may take at most (default 16 MiB). */
  maxBytes?: number;
}

export const DEFAULT_DEDUPE: Required<DedupeLimits> = { maxEntries: 100_000, maxBytes: 16 * 1024 * 1024 };

/** What one remembered id costs: its characters and its fingerprint's (two bytes each), and the map entry. */
const ENTRY_OVERHEAD = 64;

export type Seen = "first" | "duplicate" | "conflict";

export class DedupeWindow {
  private young = new Map<string, string>();
  private old = new Map<string, string>();
  private youngBytes = 0;
  private readonly entries: number;
  private readonly bytes: number;

  constructor(limits: DedupeLimits = {}) {
    this.entries = Math.max(1, Math.floor((limits.maxEntries ?? DEFAULT_DEDUPE.maxEntries) / 2));
    this.bytes = Math.max(1, Math.floor((limits.maxBytes ?? DEFAULT_DEDUPE.maxBytes) / 2));
  }

  /** Whether the id is new, a duplicate of what it carried before, or the same id with other content. */
  see(id: string, fingerprint = ""): Seen {
    const known = this.young.get(id) ?? this.old.get(id);
    if (known !== undefined) {
      if (known !== fingerprint) return "conflict";
      if (!this.young.has(id)) this.add(id, fingerprint);
      return "duplicate";
    }
    this.add(id, fingerprint);
    return "first";
  }

  /** True the first time an id is seen; false for every later time (within the window). */
  firstTime(id: string): boolean {
    return this.see(id) === "first";
  }

  /** Forgets an id (its signal could not be processed): the next time it is seen, it is "first". */
  forget(id: string): void {
    const fp = this.young.get(id);
    if (fp !== undefined) {
      this.young.delete(id);
      this.youngBytes -= cost(id, fp);
    }
    this.old.delete(id);
  }

  has(id: string): boolean {
    return this.young.has(id) || this.old.has(id);
  }

  /** Bytes the window holds now (both generations), as it counts them. */
  get size(): { entries: number; bytes: number } {
    let bytes = this.youngBytes;
    for (const [id, fp] of this.old) bytes += cost(id, fp);
    return { entries: this.young.size + this.old.size, bytes };
  }

  private add(id: string, fingerprint: string): void {
    const c = cost(id, fingerprint);
    if (this.young.size >= this.entries || this.youngBytes + c > this.bytes) {
      this.old = this.young;
      this.young = new Map();
      this.youngBytes = 0;
    }
    this.young.set(id, fingerprint);
    this.youngBytes += c;
  }
}

function cost(id: string, fingerprint: string): number {
  return 2 * (id.length + fingerprint.length) + ENTRY_OVERHEAD;
}
