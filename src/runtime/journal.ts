/**
 * A loop's iteration journal on a Store (src/store/contracts.ts): each step of an iteration (its
 * start, each committed phase, its end) goes to the store as one unit of work, with the audit
 * events the step appended (when the store serves the loop's audit slot), its idempotency record
 * and its memory transaction, so that after a crash all of a phase is there or none of it. On load
 * it hands back what a restart needs: counters, idempotency records, interrupted iterations.
 */
import type { IdempotencyRecord, InterruptedIteration, LoopCounters, Store, UnitOfWork } from "../store/contracts.js";
import type { SubstrateSet } from "../substrates/contracts.js";
import type { AuditTrail } from "./audit-trail.js";

export type JournalStep = Omit<UnitOfWork, "loop_id" | "audit">;

export interface Recovered {
  counters: Map<string, LoopCounters>;
  idempotency: IdempotencyRecord[];
  interrupted: InterruptedIteration[];
}

export class Journal {
  /** Whether the store serves the loop's audit slot: then its events travel with each unit. */
  readonly holdsAudit: boolean;

  constructor(
    readonly store: Store,
    readonly loopId: string,
    substrates: SubstrateSet,
  ) {
    this.holdsAudit = substrates.audit === store.audit;
  }

  async commit(audit: AuditTrail, step: JournalStep): Promise<void> {
    const events = this.holdsAudit ? await audit.drain() : [];
    await this.store.commit({ ...step, loop_id: this.loopId, audit: events });
  }

  async recover(idempotencyLimit: number): Promise<Recovered> {
    const [counters, idempotency, interrupted] = await Promise.all([this.store.counters(this.loopId), this.store.idempotency(this.loopId, idempotencyLimit), this.store.interrupted(this.loopId)]);
    return { counters, idempotency, interrupted };
  }
}
