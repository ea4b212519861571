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

  /** Steps held back to travel with the next one of their iteration (by trace id). */
  private readonly deferred = new Map<string, JournalStep>();

  /**
   * Holds a step back until the iteration's next commit: an iteration's start travels with its
   * first phase and its last phase with its end, so each phase costs one transaction. A crash in
   * between loses nothing committed: the iteration had not started, or is resumed at that phase.
   */
  defer(step: JournalStep): void {
    const prior = this.deferred.get(step.trace_id);
    this.deferred.set(step.trace_id, prior ? { ...prior, ...step } : step);
  }

  async commit(audit: AuditTrail, step: JournalStep): Promise<void> {
    const prior = this.deferred.get(step.trace_id);
    if (prior) this.deferred.delete(step.trace_id);
    const events = this.holdsAudit ? await audit.drain() : [];
    try {
      await this.store.commit({ ...prior, ...step, loop_id: this.loopId, audit: events });
    } catch (error) {
      audit.refused(events);
      throw error;
    }
  }

  /** Forgets the steps of an iteration held back for its next commit (one that will not come here). */
  discard(traceId: string): void {
    this.deferred.delete(traceId);
  }

  /**
   * What the store holds of the loop: of every workspace (at load), or read afresh of one
   * (`workspace`: a fleet host taking it over, after the store dropped what it cached of it).
   */
  async recover(idempotencyLimit: number, workspace?: string): Promise<Recovered> {
    if (workspace !== undefined) await this.store.refresh?.(workspace);
    const [counters, idempotency, interrupted] = await Promise.all([this.store.counters(this.loopId), this.store.idempotency(this.loopId, idempotencyLimit), this.store.interrupted(this.loopId)]);
    if (workspace === undefined) return { counters, idempotency, interrupted };
    const mine = counters.get(workspace);
    return { counters: new Map(mine ? [[workspace, mine]] : []), idempotency: idempotency.filter((r) => r.workspace_id === workspace), interrupted: interrupted.filter((i) => i.workspace_id === workspace) };
  }
}
