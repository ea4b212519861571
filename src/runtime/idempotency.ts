/**
 * §5.2: an idempotent phase invoked again with the same signature returns the identical output
 * without re-running side effects, including while the first invocation is still running
 * (concurrent duplicates wait for it). One cache per workspace, so no workspace sees another's
 * outputs; each is bounded (least recently used entries go first) so memory stays flat.
 */
export interface IdempotencyEntry {
  output: unknown;
  /** Canonical JSON of the output: replays are compared and returned byte-identical. */
  canonical: string;
}

export class IdempotencyCache {
  private readonly workspaces = new Map<string, Map<string, IdempotencyEntry>>();
  private readonly inflight = new Map<string, Promise<IdempotencyEntry | undefined>>();

  constructor(readonly maxEntriesPerWorkspace = 10_000) {}

  get(workspace: string, signature: string): IdempotencyEntry | undefined {
    const entries = this.workspaces.get(workspace);
    const entry = entries?.get(signature);
    if (entry && entries) {
      // Refresh recency: Map iteration order is insertion order.
      entries.delete(signature);
      entries.set(signature, entry);
    }
    return entry;
  }

  set(workspace: string, signature: string, entry: IdempotencyEntry): void {
    let entries = this.workspaces.get(workspace);
    if (!entries) {
      entries = new Map();
      this.workspaces.set(workspace, entries);
    }
    entries.delete(signature);
    entries.set(signature, entry);
    if (entries.size > this.maxEntriesPerWorkspace) entries.delete(entries.keys().next().value as string);
  }

  /** The running invocation with this signature, if any. */
  running(workspace: string, signature: string): Promise<IdempotencyEntry | undefined> | undefined {
    return this.inflight.get(`${workspace}\u0000${signature}`);
  }

  /** Marks an invocation as running until `done` settles (resolving to its entry, or undefined on failure). */
  track(workspace: string, signature: string, done: Promise<IdempotencyEntry | undefined>): void {
    const key = `${workspace}\u0000${signature}`;
    this.inflight.set(key, done);
    const clear = () => {
      if (this.inflight.get(key) === done) this.inflight.delete(key);
    };
    done.then(clear, clear);
  }

  size(workspace: string): number {
    return this.workspaces.get(workspace)?.size ?? 0;
  }
}
