/**
 * Phase id → index of the phase that first declares it. A loop has a handful of phases and the
 * ids are interned strings, so a scan (where `===` compares pointers) beats hashing on every
 * lookup; past SCAN_LIMIT ids a Map takes over.
 */
const SCAN_LIMIT = 16;

export class PhaseIndex {
  /**
   * V8 holds the hidden classes a class's instances pass through (one per field the constructor
   * adds) only weakly. Every PhaseIndex is short-lived: when a full GC finds none alive, those
   * classes are collected, and every optimised function that checks for them (the resolver, the
   * rules, the validator) is thrown away and runs unoptimised until it is compiled again; on a
   * loaded machine that made a validation twice as slow. One instance held by the class itself
   * keeps them alive (a module-level binding no function reads would not: V8 drops it once the
   * module has run, and the bundler removes it).
   */
  static readonly keptAlive: PhaseIndex = new PhaseIndex();

  private readonly ids: string[] = [];
  private readonly indices: number[] = [];
  private map: Map<string, number> | undefined;

  /** Records `id` as declared at `index` unless it already is; returns where it was first declared. */
  declare(id: string, index: number): number {
    const first = this.get(id);
    if (first !== undefined) return first;
    this.ids.push(id);
    this.indices.push(index);
    if (this.map) this.map.set(id, index);
    else if (this.ids.length > SCAN_LIMIT) this.map = new Map(this.ids.map((k, i) => [k, this.indices[i] as number]));
    return index;
  }

  get(id: string): number | undefined {
    if (this.map) return this.map.get(id);
    const ids = this.ids;
    for (let i = 0; i < ids.length; i++) if (ids[i] === id) return this.indices[i];
    return undefined;
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  get size(): number {
    return this.ids.length;
  }

  /** The declared ids, in declaration order. */
  keys(): readonly string[] {
    return this.ids;
  }
}

