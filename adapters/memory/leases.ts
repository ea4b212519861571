/**
 * Fleet leases within one process (src/fleet/contracts.ts): what the PostgreSQL leases do, on a
 * clock of the caller's, for tests and for hosts of one process that share loops.
 */
import type { Lease, LeaseKey, LeaseStore } from "../../src/fleet/contracts.js";

const id = (k: LeaseKey) => `${k.loop_id}\u0000${k.workspace_id}`;

export class InMemoryLeases implements LeaseStore {
  private readonly rows = new Map<string, Lease>();
  /** Claimed ticks → their holder, and whether they finished. */
  private readonly ticks = new Map<string, { key: LeaseKey; at: number; holder: string; finished: boolean }>();

  constructor(private readonly now: () => number = Date.now) {}

  async acquire(key: LeaseKey, holder: string, ttlMs: number): Promise<Lease | undefined> {
    const now = this.now();
    const current = this.rows.get(id(key));
    if (current && current.holder !== holder && current.expires_at >= now) return undefined;
    const lease: Lease = {
      ...key,
      holder,
      epoch: current ? current.epoch + (current.holder === holder ? 0 : 1) : 1,
      expires_at: now + ttlMs,
      origin: current?.origin ?? now,
    };
    this.rows.set(id(key), lease);
    return { ...lease };
  }

  async release(key: LeaseKey, holder: string): Promise<void> {
    const current = this.rows.get(id(key));
    if (current?.holder === holder) current.expires_at = this.now() - 1;
  }

  async claimTick(key: LeaseKey, scheduledAt: number, holder: string, epoch?: number): Promise<boolean> {
    const k = `${id(key)}\u0000${scheduledAt}`;
    if (this.ticks.has(k)) return false;
    const lease = this.rows.get(id(key));
    if (epoch !== undefined && !(lease?.holder === holder && lease.epoch === epoch && lease.expires_at > this.now())) return false;
    this.ticks.set(k, { key, at: scheduledAt, holder, finished: false });
    return true;
  }

  async finishTick(key: LeaseKey, scheduledAt: number): Promise<void> {
    const tick = this.ticks.get(`${id(key)}\u0000${scheduledAt}`);
    if (tick) tick.finished = true;
  }

  async unfinishedTicks(key: LeaseKey, exceptHolder: string): Promise<{ scheduled_at: number; holder: string }[]> {
    return [...this.ticks.values()]
      .filter((t) => id(t.key) === id(key) && !t.finished && t.holder !== exceptHolder)
      .sort((a, b) => a.at - b.at)
      .map((t) => ({ scheduled_at: t.at, holder: t.holder }));
  }

  async leases(): Promise<Lease[]> {
    return [...this.rows.values()].map((l) => ({ ...l }));
  }
}
