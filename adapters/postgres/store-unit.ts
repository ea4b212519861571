/**
 * Units of work of one workspace as the arguments of ONE call of commit_units (schema.ts, version
 * 3): a row array per table for the whole batch, so a batch costs one round trip and one
 * statement per table, whatever the number of units in it. The call is its own transaction (or
 * part of the caller's): all of the batch or, on any error, none of it.
 *
 * The audit events arrive already hashed (chainStep): the host hashes from the chain head it
 * expects, and the call moves the head only if it is still there (PU002 otherwise).
 *
 * Rows that a later unit of the batch overwrites (an iteration's end, the loop counters, a memory
 * row) are sent once, as the last unit left them: what one transaction per unit would have left.
 */
import { canonicalJson } from "../../src/json/canonical-json.js";
import { chainHash } from "../../src/store/audit-chain.js";
import type { MemoryChange, UnitOfWork } from "../../src/store/contracts.js";
import type { AuditEvent } from "../../src/substrates/contracts.js";

export interface ChainHead {
  seq: number;
  hash: string;
}

export interface ChainStep {
  from: ChainHead;
  to: ChainHead;
  links: { seq: number; prev: string; hash: string; event: AuditEvent }[];
}

/** Hashes `events` onto the chain after `head` (throws, changing nothing, on an event that is not JSON). */
export function chainStep(head: ChainHead, events: readonly AuditEvent[]): ChainStep {
  const links: ChainStep["links"] = [];
  let prev = head.hash;
  for (const event of events) {
    const hash = chainHash(prev, event);
    links.push({ seq: head.seq + links.length, prev, hash, event });
    prev = hash;
  }
  return { from: head, to: { seq: head.seq + links.length, hash: prev }, links };
}

/** A committed memory transaction's rows, for the graph they belong to. */
export interface UnitMemory {
  graph: string;
  rows: readonly MemoryChange[];
}

/**
 * The fleet lease a unit is committed under (src/fleet): the database commits the unit only while
 * the lease row still names this holder at this epoch (commit_units, schema version 4; PU003).
 */
export interface UnitFence {
  holder: string;
  epoch: number;
}

/** JSON kept as text, canonical, byte for byte (what a replay returns). */
const json = (v: unknown): string => canonicalJson(v === undefined ? null : v);

type Row = Record<string, unknown>;

/** One unit's rows; throws (nothing added) on a value that is not JSON. */
function unitRows(unit: UnitOfWork, step: ChainStep | undefined) {
  const { loop_id, trace_id } = unit;
  const out: { started?: Row; phase?: Row; claim?: Row; audit: Row[]; outbox: Row[]; inbox?: Row; finished?: Row; counters?: Row } = { audit: [], outbox: [] };
  if (unit.started) {
    const s = unit.started;
    out.started = { loop_id, trace_id, number: s.number, entry: s.entry, input: json(s.input), cause: s.cause === undefined ? null : json(s.cause), started_at: s.started_at };
  }
  const p = unit.phase;
  if (p) out.phase = { loop_id, trace_id, phase_id: p.phase_id, signature: p.signature, status: p.status, output: p.canonical ?? json(p.output), next: p.next };
  if (unit.idempotency) out.claim = { signature: unit.idempotency.signature, output: unit.idempotency.canonical, loop_id, phase_id: p?.phase_id ?? null, trace_id };
  for (const { seq, prev, hash, event: e } of step?.links ?? []) {
    out.audit.push({ chain_seq: seq, event_id: e.event_id, event_type: e.event_type, trace_id: e.trace_id, loop_id: e.loop_id, phase_id: e.phase_id, seq: e.seq, timestamp: e.timestamp, signature: e.signature, data: e.data === undefined ? null : json(e.data), prev_hash: prev, hash });
  }
  for (const e of unit.outbox ?? []) out.outbox.push({ connection_id: e.connection_id, event_id: e.event_id, loop_id, phase_id: p?.phase_id ?? null, trace_id, signature: p?.signature ?? null, to_loop: e.to_loop, envelope: json(e.envelope) });
  if (unit.inbox) out.inbox = { loop_id, event_id: unit.inbox.event_id, trace_id };
  if (unit.finished) {
    const f = unit.finished;
    out.finished = { loop_id, trace_id, status: f.status, closed: f.closed, error: f.error ? json(f.error) : null };
  }
  if (unit.counters) out.counters = { loop_id, snapshot: json(unit.counters) };
  return out;
}

/**
 * How the database writes a memory row: `new` only where no other row is (or an identical one),
 * `same` only over the row the writer saw (`prev`), `max` merged field by field into the row
 * (the id counters: never moved back), `any` as given (a change that names no previous row).
 */
function checkOf(c: MemoryChange): { mode: "new" | "same" | "max" | "any"; prev: string | null } {
  // The counters' prev is the stamp the writer last saw (store-memory.ts), not a row.
  if (c.kind === "counters") return { mode: "max", prev: typeof c.prev === "string" ? c.prev : null };
  if (c.prev === undefined) return { mode: "any", prev: null };
  return c.prev === null ? { mode: "new", prev: null } : { mode: "same", prev: JSON.stringify(c.prev) };
}

/** The rows of a batch of one workspace's units, in the order the units were added. */
export class UnitBatch {
  private readonly rows: Record<"started" | "phases" | "claims" | "audit" | "outbox" | "inbox", Row[]> = { started: [], phases: [], claims: [], audit: [], outbox: [], inbox: [] };
  private readonly finished = new Map<string, Row>();
  private readonly counters = new Map<string, Row>();
  /** Memory rows by graph, kind and key, the last write of the batch (Map order: first insertion). */
  private readonly memory = new Map<string, Row>();
  private readonly forget = new Map<string, Row>();
  /** The leases the batch's units are committed under, one per loop, holder and epoch. */
  private readonly fences = new Map<string, Row>();
  private n = 0;
  /** The chain the batch's events extend, from its first unit's head to its last one's. */
  private chain?: { from: ChainHead; to: ChainHead };
  units = 0;

  /** Adds a unit, its events hashed by `step` (which follows the batch's last one); throws, adding nothing, on a value that is not JSON. */
  add(unit: UnitOfWork, step: ChainStep | undefined, memory?: UnitMemory, fence?: UnitFence): void {
    const r = unitRows(unit, step);
    if (fence) this.fences.set(`${unit.loop_id}\u0000${fence.holder}\u0000${fence.epoch}`, { loop_id: unit.loop_id, holder: fence.holder, epoch: fence.epoch });
    const changes = (memory?.rows ?? []).map((c) => ({ c, value: c.value === null ? null : JSON.stringify(c.value) }));
    const ordered = (row: Row | undefined, into: Row[]) => row && into.push({ n: this.n++, ...row });
    ordered(r.started, this.rows.started);
    ordered(r.phase, this.rows.phases);
    ordered(r.claim, this.rows.claims);
    this.rows.audit.push(...r.audit);
    for (const o of r.outbox) ordered(o, this.rows.outbox);
    ordered(r.inbox, this.rows.inbox);
    if (r.finished) this.finished.set(`${unit.loop_id}\u0000${unit.trace_id}`, r.finished);
    if (r.counters) this.counters.set(unit.loop_id, r.counters);
    for (const { c, value } of changes) {
      const key = `${memory!.graph}\u0000${c.kind}\u0000${c.key}`;
      // What the database checks before writing (commit_units, schema version 5): the row as the
      // batch's first change of it saw it. A row deleted then written again in one batch is
      // written anew (after the delete), as one transaction per unit would.
      const earlier = this.memory.get(key) ?? this.forget.get(key);
      const check = this.forget.has(key) && value !== null ? { mode: "new", prev: null } : earlier ? { mode: earlier.mode, prev: earlier.prev } : checkOf(c);
      const row = { graph: memory!.graph, kind: c.kind, key: c.key, ...check };
      if (value === null) (this.memory.delete(key), this.forget.has(key) || this.forget.set(key, row));
      else this.memory.set(key, { ...row, value });
    }
    if (step && step.links.length > 0) this.chain = { from: this.chain?.from ?? step.from, to: step.to };
    this.units++;
  }

  /** The arguments of commit_units($1 … $8) after p_ws and p_new_ws: the chain, the time, the rows. */
  args(now: string): [number | null, string | null, number | null, string | null, string, string] {
    const p: Record<string, unknown[]> = {};
    for (const [k, rows] of Object.entries(this.rows)) if (rows.length > 0) p[k] = rows;
    let n = this.n;
    if (this.memory.size > 0) p.memory = [...this.memory.values()].map((row) => ({ n: n++, ...row }));
    if (this.forget.size > 0) p.forget = [...this.forget.values()];
    if (this.finished.size > 0) p.finished = [...this.finished.values()];
    if (this.counters.size > 0) p.counters = [...this.counters.values()];
    if (this.fences.size > 0) p.fences = [...this.fences.values()];
    const c = this.chain;
    return [c ? c.from.seq : null, c ? c.from.hash : null, c ? c.to.seq : null, c ? c.to.hash : null, now, JSON.stringify(p)];
  }
}
