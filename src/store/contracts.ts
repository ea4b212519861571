/**
 * The persistence contract: what the runtime must not lose across a crash or a restart. One Store
 * holds, per loop and workspace, the iteration journal (iteration started, each phase committed
 * with its signature and output, iteration finished), the idempotency records, the audit trail
 * (append-only, one BLAKE3 hash chain per workspace: audit-chain.ts), the memory graphs, the loop
 * counters and an outbox/inbox for connections.
 *
 * Everything one step of an iteration writes arrives as ONE UnitOfWork and is committed in one
 * transaction: after a crash either all of a phase is there or none of it. Every method returns a
 * promise so that a networked store (PostgreSQL) implements the same contract as the embedded ones
 * (adapters/memory/store.ts, adapters/sqlite/store.ts). The runtime depends on this file only.
 */
import type { AuditEvent, AuditSubstrate, MemorySubstrate } from "../substrates/contracts.js";

/** An iteration as the journal opens it. */
export interface IterationStart {
  number: number;
  entry: string;
  input: unknown;
  cause?: unknown;
  started_at: string;
}

/** One committed phase of an iteration, in the order they committed. */
export interface PhaseCommit {
  phase_id: string;
  signature: string;
  status: "completed" | "replayed" | "skipped";
  /** The phase's output: the next phase's input when the iteration resumes after it. */
  output: unknown;
  /** The output's RFC 8785 canonical JSON when the runtime already wrote it (stores keep it instead of writing it again). */
  canonical?: string;
  /** The phase the iteration goes to next; null when the iteration ends after this one. */
  next: string | null;
}

export interface IterationEnd {
  status: string;
  closed: boolean;
  error?: { code: string; message: string };
}

/** An idempotent phase's output under its signature (§5.2), replayed instead of re-run. */
export interface IdempotencyRecord {
  workspace_id: string;
  signature: string;
  /** Canonical JSON of the output: replays are byte-identical. */
  canonical: string;
}

/** A signal a phase emitted: written with the phase, delivered after it committed. */
export interface OutboxEntry {
  event_id: string;
  connection_id: string;
  to_loop: string;
  envelope: unknown;
}

export interface PendingSignal extends OutboxEntry {
  /** The store's id of the entry, for settle(). */
  id: number;
  loop_id: string;
  workspace_id: string;
  trace_id: string;
}

/** The loop-wide counters of a workspace: what carries iteration numbers across restarts. */
export interface LoopCounters {
  iterations: number;
  started: boolean;
}

/** One change to a memory graph, as a row (kind and key name it; the last one wins): null deletes it. */
export interface MemoryChange {
  kind: "node" | "edge" | "signature" | "learned" | "mutation" | "counters";
  key: string;
  value: unknown;
  /**
   * The row this change replaces as the writer saw it (null: there was none); absent when not
   * known. A store that several writers share refuses the change when the row is no longer that.
   */
  prev?: unknown;
}

/**
 * Everything one step of one iteration writes. `started` opens the iteration (or `resumed`
 * continues one), `phase` records a committed phase, `finished` closes it; any may come alone.
 */
export interface UnitOfWork {
  loop_id: string;
  workspace_id: string;
  trace_id: string;
  started?: IterationStart;
  /** A resumed iteration continues at this phase (its journal row exists already). */
  resumed?: { at: string };
  phase?: PhaseCommit;
  finished?: IterationEnd;
  idempotency?: IdempotencyRecord;
  /** Audit events in iteration order; the store adds them to the workspace's hash chain. */
  audit: AuditEvent[];
  /**
   * A memory transaction of one of this store's memory graphs (Store.memory) that the phase
   * committed: its changes are written with the unit, never without it.
   */
  memory?: { substrate: MemorySubstrate; tx_id: string };
  outbox?: OutboxEntry[];
  /** The signal that triggered this iteration: recorded once, so a redelivery is recognised. */
  inbox?: { event_id: string };
  counters?: LoopCounters;
}

/** An iteration the journal saw start and never finish: where and how it continues. */
export interface InterruptedIteration {
  loop_id: string;
  workspace_id: string;
  trace_id: string;
  number: number;
  entry: string;
  input: unknown;
  cause?: unknown;
  /** Phases already committed, in order. */
  phases: PhaseCommit[];
  /** Audit events the trace already holds: the resumed trail continues at this seq. */
  audit_seq: number;
}

/** An audit event as stored: its place in the workspace's chain and its hashes. */
export interface StoredAuditEvent {
  event: AuditEvent;
  chain_seq: number;
  prev_hash: string;
  hash: string;
}

export interface AuditFilter {
  loop_id?: string;
  trace_id?: string;
  workspace_id?: string;
  /** Events after this position (exclusive), for paging. */
  after?: number;
  limit: number;
}

export interface AuditPage {
  events: (StoredAuditEvent & { position: number })[];
  /** Position to pass as `after` for the next page; undefined at the end. */
  next?: number;
}

export interface ChainReport {
  workspace_id: string;
  ok: boolean;
  events: number;
  /** The first broken link, or trace (`trace_id`, chain_seq -1) whose events have a gap or miss a journaled step, when not ok. */
  broken?: { chain_seq: number; event_id: string | null; trace_id?: string; reason: string };
}

export interface StoreInfo {
  kind: string;
  location: string;
  /** Schema version of the store's tables (0 for a store that keeps nothing on disk). */
  version: number;
  bytes?: number;
  counts: Record<string, number>;
}

export interface Store {
  /** e.g. "sqlite .pulse/pulse.db", "memory". */
  readonly description: string;
  /** Whether what it holds outlives the process. */
  readonly durable: boolean;
  /** The audit substrate over this store's trail: the loop's audit slot when the store serves it. */
  readonly audit: AuditSubstrate;
  /** The memory substrate of one graph (a manifest's memory URI) kept in this store. */
  memory(graph: string): MemorySubstrate;

  /** Writes the unit in one transaction (all of it or, failing, none). */
  commit(unit: UnitOfWork): Promise<void>;

  counters(loopId: string): Promise<Map<string, LoopCounters>>;
  interrupted(loopId: string): Promise<InterruptedIteration[]>;
  /**
   * Drops what this process cached of a workspace (memory graphs loaded from its rows), so the
   * next read comes from the shared database: a fleet host calls it when it takes a loop of the
   * workspace over, to see what other hosts committed. Stores only this process writes omit it.
   */
  refresh?(workspaceId: string): void | Promise<void>;
  /** The most recent idempotency records of a loop's workspaces, newest first. */
  idempotency(loopId: string, limit: number): Promise<IdempotencyRecord[]>;
  /** Whether the loop's inbox holds the event (a redelivered signal). */
  received(loopId: string, workspaceId: string, eventId: string): Promise<boolean>;
  /**
   * How the journal records one iteration (`running` while it has no end), or undefined when
   * nothing of it is there: what a unit whose commit was in doubt (StoreError.inDoubt) left.
   */
  iteration?(loopId: string, workspaceId: string, traceId: string): Promise<{ status: string } | undefined>;
  /**
   * What the journal keeps of one iteration by trace id: its input and its committed phases
   * (outputs included), or undefined when it holds none. Read by the studio's trace view for
   * iterations no longer held in memory; stores that cannot answer omit it.
   */
  journal?(loopId: string, workspaceId: string, traceId: string): Promise<{ input: unknown; phases: PhaseCommit[] } | undefined>;
  /** Signals written to the outbox and not yet settled, oldest first. */
  pending(limit: number): Promise<PendingSignal[]>;
  /** A signal of the outbox was acknowledged (or refused for good): it is not sent again. */
  settle(connectionId: string, eventId: string, outcome: "delivered" | "dropped", detail?: string): Promise<void>;

  queryAudit(filter: AuditFilter): Promise<AuditPage>;
  verifyAudit(workspaceId?: string): Promise<ChainReport[]>;
  info(): Promise<StoreInfo>;
  close(): Promise<void>;
}

/** The store refused or failed (a locked, corrupt, read-only or full file; a newer schema). */
export class StoreError extends Error {
  /**
   * The connection broke with the unit on the wire: the server may have committed it or not, and
   * only reading it back once the server answers tells which (Store.iteration).
   */
  readonly inDoubt: boolean;

  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown; inDoubt?: boolean },
  ) {
    super(message, options);
    this.name = "StoreError";
    this.inDoubt = options?.inDoubt === true;
  }
}

/** Where `pulse run` keeps its state unless --store says otherwise (relative to the working directory). */
export const DEFAULT_STORE = "sqlite:.pulse/pulse.db";

/**
 * A `--store` spec in its one spelling: a plain file path (as `pulse session --store` has always
 * taken) becomes `sqlite:PATH` (`memory` alone stays the memory store); anything with a scheme, known or a typo, is left for the parser to
 * accept or refuse, so `sqllite:x` never quietly becomes a new file.
 */
export function spellStoreSpec(spec: string): string {
  return spec.trim() !== "" && spec !== "memory" && !/^[A-Za-z][A-Za-z0-9+.-]+:/.test(spec) ? `sqlite:${spec}` : spec;
}
