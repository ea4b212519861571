/**
 * One host's membership of a fleet (contracts.ts). Every `renewMs` it takes or renews the lease
 * of each loop it runs, in its workspace:
 *
 *   lease gained   the loop is this host's: first `resume` continues what the journal shows the
 *                  previous holder left interrupted (before anything new of the loop runs here);
 *                  then its cadences run here (periodic ticks claimed once per fleet on a grid
 *                  every host shares), ticks a dead holder claimed, never finished and left no
 *                  trace of in the journal run again here (`rerun`), and `onGain` starts taking
 *                  its signals
 *   lease lost     another host took it over, or this host could not renew it in time (the lease
 *                  store unreachable): cadences are declined here and `onLose` stops the signals
 *
 * A holder that cannot reach the lease store keeps its loops only until two thirds of the lease
 * time after it last asked for them, so two hosts never both believe they hold one. `stop()` releases every
 * lease, so the others take over at once instead of waiting for expiry.
 */
import type { IterationRequest } from "../runtime/iteration-result.js";
import type { FleetGate, Lease, LeaseStore } from "./contracts.js";

export interface FleetOptions {
  leases: LeaseStore;
  /** This host's name in the fleet (default: hostname:pid). */
  hostId: string;
  /** The workspace the host runs its loops' cadences in. */
  workspace: string;
  /** How long a lease lasts unless renewed (default 15 s): the longest a dead host's loops wait. */
  ttlMs?: number;
  /** How often leases are taken or renewed (default a third of the ttl). */
  renewMs?: number;
  onGain?(loopId: string, lease: Lease): void | Promise<void>;
  /**
   * Called first when this host gains a loop's lease, before the loop is admitted here: the host
   * reads the store again and continues the interrupted iteration it finds, queued ahead of
   * anything new. Resolves once the store was read, with the periodic ticks (scheduled_at, ms)
   * the resumed iterations belong to and a promise of their end.
   */
  resume?(loopId: string): Promise<{ ticks: number[]; finished: Promise<unknown> }>;
  /**
   * Runs a tick another host claimed and never finished (it died mid-iteration), after this host
   * took the loop over: the same scheduled time, so the same input. Resolves when it finished.
   */
  rerun?(loopId: string, request: IterationRequest): Promise<unknown>;
  onLose?(loopId: string, why: string): void | Promise<void>;
  onNote?(message: string): void;
}

export const DEFAULT_LEASE_TTL_MS = 15_000;

export class Fleet implements FleetGate {
  /** Periodic ticks fall on the Unix epoch's grid: every host computes the same ones. */
  readonly cadenceOrigin = 0;
  private readonly held = new Map<string, Lease>();
  /** Per held loop: when to give it up unless a renewal comes first. */
  private readonly deadlines = new Map<string, NodeJS.Timeout>();
  private loops: string[] = [];
  /** Every loop this host ran in the fleet, still fenced after stop(). */
  private readonly fleetLoops = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> = Promise.resolve();
  private failing = false;
  /** Why the lease store last failed, and the loops whose declined triggers said so already. */
  private failure = "";
  private readonly toldFailing = new Set<string>();
  /** Ticks admitted here whose iterations have not finished ("loop scheduled_at"). */
  private readonly running = new Set<string>();

  constructor(private readonly o: FleetOptions) {}

  get ttlMs(): number {
    return this.o.ttlMs ?? DEFAULT_LEASE_TTL_MS;
  }

  /**
   * The lease this host's units of `loopId` in `workspace` are committed under, for the store to
   * check in the commit's transaction: epoch 0 (no lease has it) when the loop is the fleet's but
   * not held here; undefined for a loop or workspace outside the fleet.
   */
  fence(loopId: string, workspace: string): { holder: string; epoch: number } | undefined {
    if (workspace !== this.o.workspace || !this.fleetLoops.has(loopId)) return undefined;
    return { holder: this.o.hostId, epoch: this.held.get(loopId)?.epoch ?? 0 };
  }

  holds(loopId: string): boolean {
    return this.held.has(loopId);
  }

  /** Starts competing for the leases of `loops`; resolves after the first round. */
  async start(loops: readonly string[]): Promise<void> {
    this.loops = [...loops];
    for (const loopId of loops) this.fleetLoops.add(loopId);
    await this.renew();
    const every = this.o.renewMs ?? Math.max(50, Math.floor(this.ttlMs / 3));
    this.timer = setInterval(() => void this.renew(), every);
  }

  /** One round: take or renew each lease, and act on what changed. Rounds never overlap. */
  renew(): Promise<void> {
    this.round = this.round.then(() => this.renewAll());
    return this.round;
  }

  private async renewAll(): Promise<void> {
    for (const loopId of this.loops) {
      const key = { loop_id: loopId, workspace_id: this.o.workspace };
      let lease: Lease | undefined;
      // The lease runs at least ttl from when it was asked for (by the store's clock, whatever this one says).
      const askedAt = Date.now();
      try {
        lease = await this.o.leases.acquire(key, this.o.hostId, this.ttlMs);
        if (this.failing) this.o.onNote?.("fleet: the lease store answers again");
        this.failing = false;
        this.toldFailing.clear();
      } catch (error) {
        if (!this.failing) this.o.onNote?.(`fleet: cannot renew leases (${(error as Error).message}); loops held here stop when their leases run out`);
        this.failing = true;
        this.failure = (error as Error).message;
        continue;
      }
      const had = this.held.get(loopId);
      if (lease) this.giveUpAt(loopId, askedAt + (this.ttlMs * 2) / 3);
      if (lease && !had) {
        // Called before the loop is admitted here, so what it resumes runs before any new tick.
        const resumed = this.o.resume?.(loopId);
        resumed?.catch(() => undefined);
        this.held.set(loopId, lease);
        await this.o.onGain?.(loopId, lease);
        // Not awaited: a long iteration must not hold up the renewal of other leases.
        void this.takeOver(loopId, resumed);
      } else if (lease) {
        this.held.set(loopId, lease);
      } else if (had) {
        await this.lose(loopId, "another host of the fleet took its lease over");
      }
    }
  }

  /**
   * Finishes, once resumed, the ticks whose iterations the journal had interrupted, and runs again
   * here the other ticks of the loop that hosts which lost it claimed and never finished.
   */
  private async takeOver(loopId: string, resuming?: Promise<{ ticks: number[]; finished: Promise<unknown> }>): Promise<void> {
    const key = { loop_id: loopId, workspace_id: this.o.workspace };
    let resumed: number[] = [];
    try {
      const r = await resuming;
      if (r) {
        resumed = r.ticks;
        const end = (await r.finished) as { error?: { code?: string } } | undefined;
        // Stopped again by a lost lease, the tick stays unfinished for the next holder.
        if (end?.error?.code !== "LEASE_LOST") for (const at of resumed) await this.o.leases.finishTick(key, at);
      }
    } catch (error) {
      this.o.onNote?.(`fleet: ${loopId}: resuming what the journal shows interrupted failed: ${(error as Error).message}`);
    }
    if (!this.o.rerun) return;
    let ticks: { scheduled_at: number; holder: string }[];
    try {
      // This host's own too (it lost the lease mid-tick and gained it back, or restarted under
      // the same id), unless still running here.
      ticks = (await this.o.leases.unfinishedTicks(key, "")).filter((t) => !this.running.has(`${loopId} ${t.scheduled_at}`));
    } catch (error) {
      this.o.onNote?.(`fleet: cannot read the unfinished ticks of ${loopId}: ${(error as Error).message}`);
      return;
    }
    for (const tick of ticks.filter((t) => !resumed.includes(t.scheduled_at))) {
      const scheduled_at = new Date(tick.scheduled_at).toISOString();
      this.o.onNote?.(`fleet: ${loopId} tick ${scheduled_at} was left unfinished by ${tick.holder}: running it here`);
      try {
        await this.o.rerun(loopId, { workspace: this.o.workspace, input: { cadence: "periodic", scheduled_at }, cause: { cadence: "periodic", scheduled_at, taken_over_from: tick.holder } });
        await this.o.leases.finishTick(key, tick.scheduled_at);
      } catch (error) {
        this.o.onNote?.(`fleet: ${loopId} tick ${scheduled_at} could not run here: ${(error as Error).message}`);
      }
    }
  }

  async finished(loopId: string, request: IterationRequest, reason: string, left = false): Promise<void> {
    if (reason !== "periodic") return;
    const scheduled = Date.parse(String((request.input as { scheduled_at?: unknown } | undefined)?.scheduled_at));
    if (!Number.isFinite(scheduled)) return;
    this.running.delete(`${loopId} ${scheduled}`);
    if (!left) await this.o.leases.finishTick({ loop_id: loopId, workspace_id: this.o.workspace }, scheduled);
  }

  /**
   * Without a renewal by `at` (a third of the lease before it can run out for the others), the
   * loop is given up: a timer, not the next round, so a slow or hanging store cannot delay it.
   */
  private giveUpAt(loopId: string, at: number): void {
    clearTimeout(this.deadlines.get(loopId));
    const timer = setTimeout(() => void this.lose(loopId, "its lease could not be renewed before it ran out"), Math.max(0, at - Date.now()));
    timer.unref();
    this.deadlines.set(loopId, timer);
  }

  private async lose(loopId: string, why: string): Promise<void> {
    clearTimeout(this.deadlines.get(loopId));
    this.deadlines.delete(loopId);
    if (!this.held.delete(loopId)) return;
    await this.o.onLose?.(loopId, why);
  }

  async admit(loopId: string, request: IterationRequest, reason: string): Promise<boolean> {
    if (!this.held.has(loopId)) return false;
    if (reason !== "periodic") return true;
    const scheduled = Date.parse(String((request.input as { scheduled_at?: unknown } | undefined)?.scheduled_at));
    if (!Number.isFinite(scheduled)) return true;
    try {
      const lease = this.held.get(loopId);
      const claimed = await this.o.leases.claimTick({ loop_id: loopId, workspace_id: this.o.workspace }, scheduled, this.o.hostId, lease?.epoch);
      if (claimed) this.running.add(`${loopId} ${scheduled}`);
      return claimed;
    } catch (error) {
      this.o.onNote?.(`fleet: tick ${new Date(scheduled).toISOString()} of ${loopId} not run: it could not be claimed (${(error as Error).message})`);
      return false;
    }
  }

  declined(loopId: string): string | undefined {
    // Held here, the tick was claimed by another host (or its claim failed, said by admit): routine.
    if (this.held.has(loopId) || !this.failing || this.toldFailing.has(loopId)) return undefined;
    this.toldFailing.add(loopId);
    return `no host of the fleet is known to run it: the lease store cannot be reached (${this.failure}); not said again until it answers`;
  }

  /** Stops competing and releases every lease held, so other hosts take over at once. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.round.catch(() => undefined);
    this.loops = [];
    for (const timer of this.deadlines.values()) clearTimeout(timer);
    this.deadlines.clear();
    for (const loopId of [...this.held.keys()]) {
      this.held.delete(loopId);
      await this.o.leases.release({ loop_id: loopId, workspace_id: this.o.workspace }, this.o.hostId).catch(() => undefined);
    }
  }
}
