/**
 * Which envelope ids a receiver (or an exactly-once sender) has seen: bounded by two
 * generations, like the idempotency cache, so a long-running host keeps a flat memory while
 * still recognising every redelivery within the last `max/2` to `max` signals.
 */
export class DedupeWindow {
  private young = new Set<string>();
  private old = new Set<string>();
  private readonly generation: number;

  constructor(max = 100_000) {
    this.generation = Math.max(1, Math.floor(max / 2));
  }

  /** True the first time an id is seen; false for every later time (within the window). */
  firstTime(id: string): boolean {
    if (this.young.has(id)) return false;
    if (this.old.has(id)) {
      this.add(id);
      return false;
    }
    this.add(id);
    return true;
  }

  has(id: string): boolean {
    return this.young.has(id) || this.old.has(id);
  }

  private add(id: string): void {
    if (this.young.size >= this.generation) {
      this.old = this.young;
      this.young = new Set();
    }
    this.young.add(id);
  }
}
