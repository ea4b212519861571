/**
 * What one phase attempt sees of the substrates. Every call gets the iteration's trace_id and the
 * workspace (§5.5, §7.7) and passes its substrate's circuit breaker; memory writes go into a
 * transaction that commits with the phase or not at all (§5.1); audit events a handler appends
 * are held until the same commit; a learn phase cannot rewrite history (§7.2); and a handler that
 * keeps calling after its phase ended is refused (§7.1).
 */
import {
  SubstrateRequestError,
  SubstrateUnavailableError,
  type AuditEvent,
  type AuthSubstrate,
  type Bound,
  type BoundSubstrateSet,
  type CallContext,
  type MemorySubstrate,
  type AuditSubstrate,
  type PolicySubstrate,
  type SubstrateSet,
  type TimeSubstrate,
} from "../substrates/contracts.js";
import type { CircuitBreaker } from "./circuit-breaker.js";
import { InvariantViolation, PhaseTimeoutError } from "./errors.js";
import { newTraceId } from "./trace.js";

export interface Breakers {
  memory: CircuitBreaker;
  policy: CircuitBreaker;
  audit: CircuitBreaker;
  auth: CircuitBreaker;
  time?: CircuitBreaker;
}

export interface ScopeOptions {
  loopId: string;
  phaseId: string;
  kind: string;
  traceId: string;
  workspaceId: string;
  /** Aborts substrate calls in flight when the phase times out (its signal is made only if read). */
  abort: { readonly signal: AbortSignal } | undefined;
  feedbackImmutability: boolean;
  traceIdPropagation: boolean;
  /** Called with tokens substrates return (TopologyContext, ConsolidationEvent), for the invariants. */
  observe: (value: unknown, where: string) => void;
  /** Memory writes go through the phase's transaction (false only in a conformance mutant). */
  transactionalWrites: boolean;
  /** Every call carries the iteration's trace id (false only in a conformance mutant). */
  propagatesTrace: boolean;
  /** Told about violations raised inside substrate calls, which a handler may swallow. */
  onViolation: (violation: InvariantViolation) => void;
}

export interface Mutation {
  operation: string;
  result: unknown;
}

/**
 * Runs a substrate call through its circuit breaker: only unavailability counts as failure. A
 * call still pending when its phase timed out (`cutoff` aborted with a PhaseTimeoutError) counts
 * as a failure of that substrate at that moment, whatever it does later: a substrate that hangs
 * longer than the phase allows is unavailable to it, or the circuit never opens and the loop
 * spins one timeout per iteration.
 */
export async function guarded<T>(breaker: CircuitBreaker, call: () => Promise<T>, cutoff?: { readonly signal: AbortSignal }): Promise<T> {
  breaker.admit();
  let cut = false;
  const signal = cutoff?.signal;
  const onAbort = () => {
    if (signal?.reason instanceof PhaseTimeoutError) {
      cut = true;
      breaker.failed();
    }
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const result = await call();
    if (!cut) breaker.succeeded();
    return result;
  } catch (error) {
    if (!cut) {
      if (error instanceof SubstrateUnavailableError) breaker.failed();
      else breaker.succeeded(); // it answered: reachable, whatever it said
    }
    throw error;
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

export class PhaseScope {
  readonly substrates: BoundSubstrateSet;
  readonly mutations: Mutation[] = [];
  readonly pendingAudit: AuditEvent[] = [];
  /** Whether the phase read memory (retrieve_context, topology_analyze): its output depends on the world. */
  readMemory = false;
  private txId: string | undefined;
  private txOpening: Promise<string> | undefined;
  private open = true;
  private readonly ctx: ScopeContext;

  constructor(
    private readonly target: SubstrateSet,
    private readonly breakers: Breakers,
    private readonly options: ScopeOptions,
  ) {
    this.ctx = new ScopeContext(options.traceId, options.workspaceId, options.abort, !options.propagatesTrace);
    this.substrates = target.time ? new LazySubstratesWithTime(this) : new LazySubstrates(this);
  }

  /** @internal */ makeMemory(): Bound<MemorySubstrate> {
    return this.memoryProxy();
  }

  /** @internal */ makeAudit(): Bound<AuditSubstrate> {
    return this.auditProxy();
  }

  /** @internal */ makePassThrough<T>(slot: "policy" | "auth" | "time"): Bound<T> {
    const operations = { policy: ["check_policy", "compute_effective"], auth: ["permission_check", "agent_lifecycle"], time: ["at_timescale", "forecast"] }[slot];
    return this.passThrough(slot, this.target[slot] as object, operations) as Bound<T>;
  }

  private ensureOpen(slot: string, operation: string): void {
    if (!this.open) {
      throw this.violation(
        new InvariantViolation(
          "phase_atomicity",
          this.options.loopId,
          this.options.phaseId,
          `${slot}.${operation} was called after the phase ended; a phase's substrate work must finish inside the phase`,
        ),
      );
    }
  }

  private violation(v: InvariantViolation): InvariantViolation {
    this.options.onViolation(v);
    return v;
  }

  private passThrough(slot: keyof Breakers, impl: object, operations: readonly string[]): object {
    const proxy: Record<string, unknown> = {};
    for (const op of operations) {
      proxy[op] = (args: unknown) => {
        this.ensureOpen(slot, op);
        const fn = (impl as Record<string, (a: unknown, c: CallContext) => Promise<unknown>>)[op] as (a: unknown, c: CallContext) => Promise<unknown>;
        return guarded(this.breakers[slot] as CircuitBreaker, () => fn.call(impl, args, this.ctx), this.options.abort);
      };
    }
    return proxy;
  }

  private withTx(tx_id: string): CallContext {
    return this.callContext({ tx_id });
  }

  private callContext(extra: { tx_id?: string; journaled?: boolean }): CallContext {
    const ctx: CallContext = { trace_id: this.ctx.trace_id, workspace_id: this.ctx.workspace_id, ...extra };
    const signal = this.ctx.signal;
    if (signal) ctx.signal = signal;
    return ctx;
  }

  private async transaction(): Promise<string> {
    if (this.txId) return this.txId;
    this.txOpening ??= guarded(this.breakers.memory, () => this.target.memory.begin_transaction({}, this.ctx), this.options.abort).then((r) => (this.txId = r.tx_id));
    return this.txOpening;
  }

  private memoryProxy(): Bound<MemorySubstrate> {
    const memory = this.target.memory;
    const breaker = this.breakers.memory;
    const learn = this.options.kind === "learn" && this.options.feedbackImmutability;
    const refuse = (detail: string) => this.violation(new InvariantViolation("feedback_immutability", this.options.loopId, this.options.phaseId, detail));
    const read = <A, R>(op: string, call: (args: A, ctx: CallContext) => Promise<R>) => async (args: A): Promise<R> => {
      this.ensureOpen("memory", op);
      this.readMemory = true;
      const ctx = this.txId ? this.withTx(this.txId) : this.ctx;
      return guarded(breaker, () => call.call(memory, args, ctx), this.options.abort);
    };
    const write = <A, R>(op: string, call: (args: A, ctx: CallContext) => Promise<R>) => async (args: A): Promise<R> => {
      this.ensureOpen("memory", op);
      if (!this.options.transactionalWrites) {
        const result = await guarded(breaker, () => call.call(memory, args, this.ctx), this.options.abort);
        this.mutations.push({ operation: op, result });
        return result;
      }
      const tx_id = await this.transaction();
      try {
        const result = await guarded(breaker, () => call.call(memory, args, this.withTx(tx_id)), this.options.abort);
        this.mutations.push({ operation: op, result });
        return result;
      } catch (error) {
        if (learn && error instanceof SubstrateRequestError && error.code === "NODE_EXISTS") {
          throw refuse("store_node would rewrite an existing node; a learn phase may only append nodes or update confidence (§7.2)");
        }
        throw error;
      }
    };
    return {
      retrieve_context: async (args) => {
        const result = await read("retrieve_context", memory.retrieve_context)(args);
        this.options.observe(result?.topology, "memory.retrieve_context");
        return result;
      },
      topology_analyze: async (args) => {
        const result = await read("topology_analyze", memory.topology_analyze)(args);
        this.options.observe(result, "memory.topology_analyze");
        return result;
      },
      // An explicit id may name an existing node; the substrate says so (NODE_EXISTS), and in a
      // learn phase that is a rewrite.
      store_node: write("store_node", memory.store_node),
      store_edge: write("store_edge", memory.store_edge),
      learn_from_outcome: write("learn_from_outcome", memory.learn_from_outcome),
      consolidate: async (args) => {
        if (learn) throw refuse("consolidate merges and rewrites nodes; a learn phase may only append nodes or update confidence (§7.2)");
        const result = await write("consolidate", memory.consolidate)(args);
        this.options.observe(result, "memory.consolidate");
        return result;
      },
      begin_transaction: async () => ({ tx_id: await this.transaction() }),
      // The runtime commits and rolls back the phase's transaction; a handler cannot end it early.
      commit_transaction: async () => undefined,
      rollback_transaction: async () => {
        throw new SubstrateRequestError("memory", "TX_OWNED_BY_RUNTIME", "the phase's transaction is rolled back by failing the phase (throw), not by the handler");
      },
    };
  }

  private auditProxy(): Bound<AuditSubstrate> {
    return {
      append_event: async ({ event }) => {
        this.ensureOpen("audit", "append_event");
        if (this.options.traceIdPropagation && event.trace_id !== this.options.traceId) {
          throw this.violation(
            new InvariantViolation(
              "trace_id_propagation",
              this.options.loopId,
              this.options.phaseId,
              `an audit event carries trace_id ${String(event.trace_id)}, not the iteration's ${this.options.traceId}`,
            ),
          );
        }
        // Held until the phase commits: a failed phase leaves no events behind but its failure.
        this.pendingAudit.push({ ...event, trace_id: this.options.traceId, workspace_id: this.options.workspaceId });
        return { event_id: event.event_id };
      },
      query_by_trace: (args) => {
        this.ensureOpen("audit", "query_by_trace");
        return guarded(this.breakers.audit, () => this.target.audit.query_by_trace(args, this.ctx), this.options.abort);
      },
    };
  }

  /** The phase's memory transaction, once it opened one. */
  get transactionId(): string | undefined {
    return this.txId;
  }

  /**
   * Makes the phase's memory writes visible, all at once. Returns no promise when the phase
   * opened no transaction (most phases): callers skip an await, and its allocations, then.
   */
  commit(): Promise<void> | undefined {
    this.open = false;
    if (this.txId === undefined && this.txOpening === undefined) return undefined;
    return this.commitTransaction();
  }

  private async commitTransaction(): Promise<void> {
    const tx_id = this.txId ?? (this.txOpening ? await this.txOpening.catch(() => undefined) : undefined);
    if (tx_id) await guarded(this.breakers.memory, () => this.target.memory.commit_transaction({ tx_id }, this.callContext({ journaled: true })));
  }

  /** Discards the phase's memory writes and held audit events. Never throws. */
  async rollback(): Promise<void> {
    this.open = false;
    this.mutations.length = 0;
    this.pendingAudit.length = 0;
    const tx_id = this.txId ?? (this.txOpening ? await this.txOpening.catch(() => undefined) : undefined);
    if (!tx_id) return;
    try {
      await this.target.memory.rollback_transaction({ tx_id }, { trace_id: this.ctx.trace_id, workspace_id: this.ctx.workspace_id });
    } catch {
      // An unreachable substrate never committed the transaction either.
    }
  }

  close(): void {
    this.open = false;
  }
}

/** A CallContext whose abort signal exists only once someone looks at it. */
class ScopeContext implements CallContext {
  constructor(
    private readonly traceId: string,
    readonly workspace_id: string,
    private readonly abort: { readonly signal: AbortSignal } | undefined,
    /** A new trace id per call (the conformance self-test's "fresh-trace-per-call" mutant). */
    private readonly freshTrace = false,
  ) {}

  get trace_id(): string {
    return this.freshTrace ? newTraceId() : this.traceId;
  }

  get signal(): AbortSignal | undefined {
    return this.abort?.signal;
  }
}

/** The substrates a handler sees, each built on first use: most phases touch one or none. */
class LazySubstrates implements BoundSubstrateSet {
  private m?: Bound<MemorySubstrate>;
  private p?: Bound<PolicySubstrate>;
  private a?: Bound<AuditSubstrate>;
  private u?: Bound<AuthSubstrate>;

  constructor(protected readonly scope: PhaseScope) {}

  get memory(): Bound<MemorySubstrate> {
    return (this.m ??= this.scope.makeMemory());
  }

  get policy(): Bound<PolicySubstrate> {
    return (this.p ??= this.scope.makePassThrough<PolicySubstrate>("policy"));
  }

  get audit(): Bound<AuditSubstrate> {
    return (this.a ??= this.scope.makeAudit());
  }

  get auth(): Bound<AuthSubstrate> {
    return (this.u ??= this.scope.makePassThrough<AuthSubstrate>("auth"));
  }
}

class LazySubstratesWithTime extends LazySubstrates {
  private t?: Bound<TimeSubstrate>;

  get time(): Bound<TimeSubstrate> {
    return (this.t ??= this.scope.makePassThrough<TimeSubstrate>("time"));
  }
}
