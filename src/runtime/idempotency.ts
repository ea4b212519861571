/**
 * §5.2: an idempotent phase invoked again with the same signature returns the identical output
 * without re-running side effects, including while the first invocation is still running
 * (concurrent duplicates wait for it). One cache per workspace, so no workspace sees another's
 * outputs; each is bounded so memory stays flat.
 *
 * A read is replayed only while the world it read is unchanged (decisions.md): an entry of a
 * phase that read memory and wrote none remembers the workspace's memory generation, which every
 * committed memory write of the workspace advances; once it has moved, the phase runs again
 * (it has no side effects to repeat, and its old answer is stale). A phase that wrote replays
 * regardless: its side effects must not happen twice.
 * Bounded by two generations rather than an exact
 * LRU list: entries go into the young map; when it is full it becomes the old map and the
 * previous old map is dropped; a hit in the old map moves the entry back to the young one.
 * Everything used within the last `max/2` insertions survives, with no per-hit reordering.
 */
export interface IdempotencyEntry {
  output: unknown;
  /** Canonical JSON of the output: replays are compared and returned byte-identical. */
  canonical: string;
  /** For a phase that read memory and wrote none: the workspace's memory generation it read. */
  readAt?: number;
}

interface Generations {
  young: Map<string, IdempotencyEntry>;
  old: Map<string, IdempotencyEntry>;
  /** Committed memory writes of the workspace so far. */
  world: number;
}

export class IdempotencyCache {
  private readonly workspaces = new Map<string, Generations>();
  /** Invocations running, per workspace then signature (no key string built per phase). */
  private readonly inflight = new Map<string, Map<string, Promise<IdempotencyEntry | undefined>>>();
  private readonly generationSize: number;

  constructor(
    readonly maxEntriesPerWorkspace = 10_000,
    /** The "tenantless-cache" mutant of the conformance self-test: one cache for every workspace. */
    private readonly tenantless = false,
  ) {
    this.generationSize = Math.max(1, Math.floor(maxEntriesPerWorkspace / 2));
  }

  /** The entry to replay, unless there is none or it is a read of a world that has changed since. */
  get(workspace: string, signature: string): IdempotencyEntry | undefined {
    if (this.tenantless) workspace = "*";
    const g = this.workspaces.get(workspace);
    if (!g) return undefined;
    let entry = g.young.get(signature);
    if (!entry) {
      entry = g.old.get(signature);
      if (entry) this.put(g, signature, entry);
    }
    return entry && (entry.readAt === undefined || entry.readAt === g.world) ? entry : undefined;
  }

  set(workspace: string, signature: string, entry: IdempotencyEntry): void {
    this.put(this.generations(workspace), signature, entry);
  }

  /** The workspace's memory generation: what a read that wrote nothing records in its entry. */
  world(workspace: string): number {
    return this.generations(workspace).world;
  }

  /** A memory write of the workspace committed: reads cached before it are stale. */
  worldChanged(workspace: string): void {
    this.generations(workspace).world++;
  }

  private generations(workspace: string): Generations {
    if (this.tenantless) workspace = "*";
    let g = this.workspaces.get(workspace);
    if (!g) {
      g = { young: new Map(), old: new Map(), world: 0 };
      this.workspaces.set(workspace, g);
    }
    return g;
  }

  private put(g: Generations, signature: string, entry: IdempotencyEntry): void {
    if (g.young.size >= this.generationSize) {
      g.old = g.young;
      g.young = new Map();
    }
    g.young.set(signature, entry);
  }

  /** The running invocation with this signature, if any. */
  running(workspace: string, signature: string): Promise<IdempotencyEntry | undefined> | undefined {
    if (this.tenantless) workspace = "*";
    return this.inflight.get(workspace)?.get(signature);
  }

  /** Marks an invocation as running until `done` settles (resolving to its entry, or undefined on failure). */
  track(workspace: string, signature: string, done: Promise<IdempotencyEntry | undefined>): void {
    if (this.tenantless) workspace = "*";
    let running = this.inflight.get(workspace);
    if (!running) this.inflight.set(workspace, (running = new Map()));
    running.set(signature, done);
    // The workspace's map stays when empty, as its cache does (a map made per phase would cost more).
    const clear = () => {
      if (running.get(signature) === done) running.delete(signature);
    };
    done.then(clear, clear);
  }

  /** Entries held for the workspace (an entry promoted from the old generation may count twice). */
  size(workspace: string): number {
    const g = this.workspaces.get(workspace);
    return g ? g.young.size + g.old.size : 0;
  }
}
