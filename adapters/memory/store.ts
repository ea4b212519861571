/**
 * The Store kept in this process's memory (`--store memory:`): today's behaviour behind the
 * persistence contract. It keeps the journal, the audit trail with its hash chains, the outbox
 * and the inbox exactly as the SQLite store does, so the contract tests hold for both; nothing
 * outlives the process.
 */
import { TrailCheck, withTraceProblems } from "../../src/store/audit-journal.js";
import { canonicalJson } from "../../src/json/canonical-json.js";
import { chainHash, eventCanonical, GENESIS, verifyChain, type ChainLink } from "../../src/store/audit-chain.js";
import type { AuditFilter, AuditPage, ChainReport, IdempotencyRecord, InterruptedIteration, IterationEnd, IterationStart, LoopCounters, PendingSignal, PhaseCommit, Store, StoreInfo, StoredAuditEvent, UnitOfWork } from "../../src/store/contracts.js";
import type { AuditEvent, AuditSubstrate, MemorySubstrate } from "../../src/substrates/contracts.js";
import { StoreAudit } from "../shared/store-audit.js";
import { InMemoryMemory } from "./memory.js";

interface IterationRecord {
  loop_id: string;
  workspace_id: string;
  trace_id: string;
  start: IterationStart;
  phases: PhaseCommit[];
  end?: IterationEnd;
}

/** Idempotency records kept per loop (the runtime's cache holds as many per workspace). */
const IDEMPOTENCY_LIMIT = 10_000;

export class MemoryStore implements Store {
  readonly durable = false;
  readonly description = "memory";
  readonly audit: AuditSubstrate = new StoreAudit(this);
  private readonly graphs = new Map<string, InMemoryMemory>();
  private readonly iterations = new Map<string, IterationRecord>();
  private readonly events: (StoredAuditEvent & { position: number })[] = [];
  private readonly chains = new Map<string, { links: ChainLink[]; head: string }>();
  private readonly idempotencyByLoop = new Map<string, Map<string, IdempotencyRecord>>();
  private readonly loopCounters = new Map<string, Map<string, LoopCounters>>();
  private readonly inbox = new Set<string>();
  private readonly outbox: (PendingSignal & { status: string; detail?: string })[] = [];
  private readonly outboxKeys = new Set<string>();

  memory(graph: string): MemorySubstrate {
    let memory = this.graphs.get(graph);
    if (!memory) this.graphs.set(graph, (memory = new InMemoryMemory()));
    return memory;
  }

  async commit(unit: UnitOfWork): Promise<void> {
    const { loop_id, workspace_id, trace_id } = unit;
    const key = `${loop_id}\u0000${workspace_id}\u0000${trace_id}`;
    // Everything is checked and copied before anything changes: a unit lands whole or not at all.
    const copy = <T>(v: T): T => (v === undefined ? v : (JSON.parse(canonicalJson(v)) as T));
    const started = unit.started && !this.iterations.has(key) ? { loop_id, workspace_id, trace_id, start: copy(unit.started), phases: [] } : undefined;
    // What the runtime already wrote as canonical JSON is parsed back rather than written again.
    const p = unit.phase;
    const phase = p && { phase_id: p.phase_id, signature: p.signature, status: p.status, output: JSON.parse(p.canonical ?? canonicalJson(p.output === undefined ? null : p.output)) as unknown, next: p.next };
    const outbox = (unit.outbox ?? []).map(copy);
    const audit = unit.audit.map((e) => {
      const canonical = eventCanonical(e);
      return { event: JSON.parse(canonical) as AuditEvent, canonical };
    });
    const finished = unit.finished && copy(unit.finished);
    if (started) this.iterations.set(key, started);
    const iteration = this.iterations.get(key);
    if (phase && iteration) iteration.phases.push(phase);
    if (finished && iteration) iteration.end = finished;
    if (unit.idempotency) {
      let records = this.idempotencyByLoop.get(loop_id);
      if (!records) this.idempotencyByLoop.set(loop_id, (records = new Map()));
      const k = `${unit.idempotency.workspace_id}\u0000${unit.idempotency.signature}`;
      records.delete(k);
      records.set(k, { ...unit.idempotency });
      if (records.size > IDEMPOTENCY_LIMIT) records.delete(records.keys().next().value as string);
    }
    if (audit.length > 0) {
      let chain = this.chains.get(workspace_id);
      if (!chain) this.chains.set(workspace_id, (chain = { links: [], head: GENESIS }));
      for (const { event, canonical } of audit) {
        const link = { chain_seq: chain.links.length, event, prev_hash: chain.head, hash: chainHash(chain.head, event, canonical) };
        chain.links.push(link);
        chain.head = link.hash;
        this.events.push({ ...link, position: this.events.length + 1 });
      }
    }
    for (const o of outbox) {
      const k = `${o.connection_id}\u0000${o.event_id}`;
      if (this.outboxKeys.has(k)) continue;
      this.outboxKeys.add(k);
      this.outbox.push({ ...o, id: this.outbox.length + 1, loop_id, workspace_id, trace_id, status: "pending" });
    }
    if (unit.inbox) this.inbox.add(`${loop_id}\u0000${workspace_id}\u0000${unit.inbox.event_id}`);
    if (unit.counters) {
      let counters = this.loopCounters.get(loop_id);
      if (!counters) this.loopCounters.set(loop_id, (counters = new Map()));
      counters.set(workspace_id, { ...unit.counters });
    }
  }

  async counters(loopId: string): Promise<Map<string, LoopCounters>> {
    return new Map([...(this.loopCounters.get(loopId) ?? [])].map(([ws, c]) => [ws, { ...c }]));
  }

  async interrupted(loopId: string): Promise<InterruptedIteration[]> {
    const out: InterruptedIteration[] = [];
    for (const it of this.iterations.values()) {
      if (it.loop_id !== loopId || it.end) continue;
      let seq = -1;
      for (const link of this.chains.get(it.workspace_id)?.links ?? []) if (link.event.trace_id === it.trace_id && link.event.loop_id === loopId) seq = Math.max(seq, link.event.seq);
      const record: InterruptedIteration = { loop_id: loopId, workspace_id: it.workspace_id, trace_id: it.trace_id, number: it.start.number, entry: it.start.entry, input: it.start.input, phases: structuredClone(it.phases), audit_seq: seq + 1 };
      if (it.start.cause !== undefined) record.cause = it.start.cause;
      out.push(record);
    }
    return out;
  }

  async journal(loopId: string, workspaceId: string, traceId: string): Promise<{ input: unknown; phases: PhaseCommit[] } | undefined> {
    for (const it of this.iterations.values()) if (it.loop_id === loopId && it.workspace_id === workspaceId && it.trace_id === traceId) return { input: structuredClone(it.start.input), phases: structuredClone(it.phases) };
    return undefined;
  }

  async idempotency(loopId: string, limit: number): Promise<IdempotencyRecord[]> {
    return [...(this.idempotencyByLoop.get(loopId)?.values() ?? [])].reverse().slice(0, limit);
  }

  async received(loopId: string, workspaceId: string, eventId: string): Promise<boolean> {
    return this.inbox.has(`${loopId}\u0000${workspaceId}\u0000${eventId}`);
  }

  async pending(limit: number): Promise<PendingSignal[]> {
    return this.outbox
      .filter((o) => o.status === "pending")
      .slice(0, limit)
      .map(({ status: _s, detail: _d, ...o }) => structuredClone(o));
  }

  async settle(connectionId: string, eventId: string, outcome: "delivered" | "dropped", detail?: string): Promise<void> {
    const o = this.outbox.find((e) => e.connection_id === connectionId && e.event_id === eventId);
    if (o && o.status === "pending") {
      o.status = outcome;
      if (detail !== undefined) o.detail = detail;
    }
  }

  async queryAudit(filter: AuditFilter): Promise<AuditPage> {
    const after = filter.after ?? 0;
    const selected = this.events.filter((e) => e.position > after && (filter.loop_id === undefined || e.event.loop_id === filter.loop_id) && (filter.trace_id === undefined || e.event.trace_id === filter.trace_id) && (filter.workspace_id === undefined || e.event.workspace_id === filter.workspace_id));
    const events = selected.slice(0, filter.limit).map((e) => structuredClone(e));
    const page: AuditPage = { events };
    if (selected.length > filter.limit) page.next = (events[events.length - 1] as { position: number }).position;
    return page;
  }

  async verifyAudit(workspaceId?: string): Promise<ChainReport[]> {
    const mine = (ws: string) => workspaceId === undefined || ws === workspaceId;
    const reports = [...this.chains].filter(([ws]) => mine(ws)).map(([ws, chain]) => ({ workspace_id: ws, ...verifyChain(chain.links, { next_seq: chain.links.length, hash: chain.head }) }));
    const trails = new TrailCheck();
    for (const [ws, chain] of this.chains) if (mine(ws)) for (const link of chain.links) trails.add(link.event);
    const journal = [...this.iterations.values()].filter((it) => mine(it.workspace_id)).map((it) => ({ workspace_id: it.workspace_id, loop_id: it.loop_id, trace_id: it.trace_id, finished: it.end !== undefined, phases: it.phases }));
    return withTraceProblems(reports, trails.problems(journal));
  }

  async info(): Promise<StoreInfo> {
    let phases = 0;
    for (const it of this.iterations.values()) phases += it.phases.length;
    let idempotency = 0;
    for (const records of this.idempotencyByLoop.values()) idempotency += records.size;
    return { kind: "memory", location: "memory", version: 0, counts: { iterations: this.iterations.size, phases, idempotency, audit_events: this.events.length, outbox: this.outbox.length, inbox: this.inbox.size } };
  }

  async close(): Promise<void> {
    // Nothing to release: everything goes with the process.
  }
}
