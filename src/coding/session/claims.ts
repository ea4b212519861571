/**
 * Handoffs by key: a waiter learns the moment a run takes (true) or gives up (false) what it
 * waits for, without polling. A settle with nobody waiting is dropped.
 */
export class Claims {
  private readonly waiting = new Map<string, { promise: Promise<boolean>; settle: (taken: boolean) => void }>();

  wait(key: string): Promise<boolean> {
    let c = this.waiting.get(key);
    if (!c) {
      let settle!: (taken: boolean) => void;
      const promise = new Promise<boolean>((r) => (settle = r));
      c = { promise, settle };
      this.waiting.set(key, c);
    }
    return c.promise;
  }

  settle(key: string, taken: boolean): void {
    const c = this.waiting.get(key);
    if (!c) return;
    this.waiting.delete(key);
    c.settle(taken);
  }
}
