/**
 * A fleet: several hosts that run the same loops on shared state (PostgreSQL) and signals (NATS),
 * sharing the work. Each loop runs on one host at a time, the holder of its **lease**: the holder
 * fires its cadences and takes its signals; the others stand by. A holder renews its lease well
 * before it runs out; a host that dies stops renewing, and another takes the lease over once it
 * expired. Leases live in a LeaseStore (adapters/postgres/leases.ts across machines,
 * adapters/memory/leases.ts within one process), whose clock decides expiry, so hosts whose
 * clocks disagree still agree on who holds what.
 *
 * Each scheduled cadence tick is claimed once per fleet (claimTick): a tick a new holder finds
 * already claimed by the old one is not fired again.
 */
import type { IterationRequest } from "../runtime/iteration-result.js";

/** What a host asks of its fleet (src/fleet/fleet.ts) before a cadence runs an iteration. */
export interface FleetGate {
  /** The shared grid periodic ticks fall on (ms since the epoch), so every host computes the same ticks. */
  readonly cadenceOrigin: number;
  /** Whether this host runs the iteration: it holds the loop's lease and, for a periodic tick, claimed it. */
  admit(loopId: string, request: IterationRequest, reason: string): Promise<boolean>;
  /**
   * Why a trigger admit() refused is declined, when that is worth saying: undefined when it is
   * routine (a live host of the fleet holds the loop's lease, or claimed the tick), said once per
   * episode when it is not (no host is known to run the loop: the lease store cannot be reached).
   * Without it, every refusal is declined as "another host of the fleet runs it".
   */
  declined?(loopId: string): string | undefined;
  /**
   * An admitted iteration has finished (whatever its status); `left`: it stopped because the
   * lease was lost, and its tick stays unfinished for the lease's next holder.
   */
  finished(loopId: string, request: IterationRequest, reason: string, left?: boolean): Promise<void>;
}

export interface LeaseKey {
  loop_id: string;
  workspace_id: string;
}

export interface Lease extends LeaseKey {
  /** The host that holds it. */
  holder: string;
  /** Grows by one each time the lease changes hands: a fencing token. */
  epoch: number;
  /** When it runs out unless renewed (ms since the epoch, the store's clock). */
  expires_at: number;
  /** The fleet's schedule origin for the loop's periodic cadence (ms), set by the first holder. */
  origin: number;
}

export interface LeaseStore {
  /**
   * Takes the lease when it is free or expired, renews it when `holder` has it already; resolves
   * with the lease as it now stands, or undefined when another host holds it.
   */
  acquire(key: LeaseKey, holder: string, ttlMs: number): Promise<Lease | undefined>;
  /** Gives the lease up (a host that stops), so another host takes over at once. */
  release(key: LeaseKey, holder: string): Promise<void>;
  /**
   * Claims one scheduled tick of a loop for the fleet: true for the first claim only. With
   * `epoch`, only while the lease still names `holder` at that epoch and has not run out, checked
   * in the same statement as the claim: a holder stalled past its lease (SIGSTOP, a long pause)
   * whose overdue timer fires before it notices cannot claim a tick the new holder owns.
   */
  claimTick(key: LeaseKey, scheduledAt: number, holder: string, epoch?: number): Promise<boolean>;
  /**
   * Records that the iteration of a claimed tick has finished. With the PostgreSQL store the
   * iteration's end already did, in its own transaction (schema version 4): this round trip is
   * then a no-op, and a host killed before it leaves no tick to run again.
   */
  finishTick(key: LeaseKey, scheduledAt: number): Promise<void>;
  /** Ticks other hosts claimed and never finished (they died mid-iteration), oldest first. */
  unfinishedTicks(key: LeaseKey, exceptHolder: string): Promise<{ scheduled_at: number; holder: string }[]>;
  /** Every lease, for `pulse` status output and tests. */
  leases(): Promise<Lease[]>;
  close?(): Promise<void>;
}
