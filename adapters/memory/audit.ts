/**
 * In-memory §9.3 audit substrate: append and query, per workspace. There is no update or delete
 * method, by design (§7.3); events are copied in and out, so no caller can edit a stored one.
 */
import { SubstrateRequestError } from "../../src/substrates/contracts.js";
import type { AuditEvent, AuditSubstrate, CallContext } from "../../src/substrates/contracts.js";
import { cloneJson, jsonEqual, NotJsonError } from "../shared/json.js";
import { badRequest, checkContext, describe, optionalString, requireArgs, requireString } from "../shared/validate.js";

const SLOT = "audit";

/** RFC 3339 date-time, e.g. 2026-04-10T12:00:00Z or 2026-04-10T14:00:00.123+02:00. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

interface TraceLog {
  /** In append order. */
  events: AuditEvent[];
  /** The events whose id is `<trace_id>-<seq>` (every one the runtime appends), by seq. */
  bySeq: AuditEvent[];
}

interface WorkspaceLog {
  byTrace: Map<string, TraceLog>;
  /** Events with any other id. */
  byId: Map<string, AuditEvent>;
}

export class InMemoryAudit implements AuditSubstrate {
  private readonly workspaces = new Map<string, WorkspaceLog>();

  /**
   * Appends the event. Refused: an event whose trace_id or workspace_id is not the call's (the
   * substrate echoes the caller's trace, §7.7), a malformed event, or an event_id already used
   * for a different event. Appending an identical event again is an idempotent replay.
   */
  async append_event(args: { event: AuditEvent }, ctx: CallContext): Promise<{ event_id: string }> {
    const event = appendedEvent(args, ctx);
    const log = this.log(ctx.workspace_id);
    let trace = log.byTrace.get(event.trace_id);
    // An id of the runtime's shape is found through its trace and seq: no lookup in an index of
    // every event by a string never hashed before (the costliest part of an append).
    const seqShaped = hasSeqId(event);
    const existing = seqShaped ? (trace?.bySeq[event.seq] ?? (log.byId.size > 0 ? log.byId.get(event.event_id) : undefined)) : (log.byId.get(event.event_id) ?? seqShapedHolder(log, event.event_id));
    if (existing) return replayed(existing, event);
    if (!trace) {
      trace = { events: [], bySeq: [] };
      log.byTrace.set(event.trace_id, trace);
    }
    trace.events.push(event);
    if (seqShaped) trace.bySeq[event.seq] = event;
    else log.byId.set(event.event_id, event);
    return { event_id: event.event_id };
  }

  /** Events of the trace in this workspace, by seq then append order; since ≤ timestamp ≤ until. */
  async query_by_trace(args: { trace_id: string; since?: string; until?: string }, ctx: CallContext): Promise<AuditEvent[]> {
    const { traceId, within } = traceQuery(args, ctx);
    const events = this.workspaces.get(ctx.workspace_id)?.byTrace.get(traceId)?.events ?? [];
    const selected = events.filter(within);
    // Array.prototype.sort is stable, so equal seqs keep their append order.
    return cloneJson(selected.sort((x, y) => x.seq - y.seq));
  }

  private log(workspaceId: string): WorkspaceLog {
    let log = this.workspaces.get(workspaceId);
    if (!log) {
      log = { byId: new Map(), byTrace: new Map() };
      this.workspaces.set(workspaceId, log);
    }
    return log;
  }
}

const TRACE_ID_LENGTH = 32;

/** Whether the event's id is `<trace_id>-<seq>`, seq in decimal, as the runtime numbers its events. */
function hasSeqId(event: AuditEvent): boolean {
  const id = event.event_id;
  return id.length > TRACE_ID_LENGTH + 1 && id.startsWith(event.trace_id) && id.charCodeAt(TRACE_ID_LENGTH) === 45 && decimalAt(id, TRACE_ID_LENGTH + 1) === event.seq;
}

/** The number written in canonical decimal (no sign, no leading zero) from `start` to the end, or -1. */
function decimalAt(text: string, start: number): number {
  if (text.length - start > 15 || (text.charCodeAt(start) === 48 && text.length - start > 1)) return -1;
  let n = 0;
  for (let i = start; i < text.length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    n = n * 10 + digit;
  }
  return n;
}

/** The event stored under a `<trace_id>-<seq>` id equal to `id`, when `id` has that shape. */
function seqShapedHolder(log: WorkspaceLog, id: string): AuditEvent | undefined {
  if (id.length <= TRACE_ID_LENGTH + 1 || id.charCodeAt(TRACE_ID_LENGTH) !== 45) return undefined;
  const seq = decimalAt(id, TRACE_ID_LENGTH + 1);
  if (seq < 0) return undefined;
  return log.byTrace.get(id.slice(0, TRACE_ID_LENGTH))?.bySeq[seq];
}

/**
 * An audit substrate that keeps only a count per event_type and workspace: for benchmarks that
 * run a million phases and must show the runtime itself keeps nothing per phase. It checks the
 * call context and the trace echo like InMemoryAudit, but not duplicates (that needs the events);
 * query_by_trace always answers [].
 */
export class CountingAudit implements AuditSubstrate {
  private readonly counts = new Map<string, Map<string, number>>();
  private appended = 0;

  async append_event(args: { event: AuditEvent }, ctx: CallContext): Promise<{ event_id: string }> {
    checkContext(SLOT, ctx);
    const event = requireArgs(SLOT, "append_event", args).event as AuditEvent | undefined;
    if (typeof event !== "object" || event === null) throw badRequest(SLOT, `append_event: event must be an object, got ${describe(event)}`);
    if (event.trace_id !== ctx.trace_id) {
      throw new SubstrateRequestError(SLOT, "TRACE_MISMATCH", `append_event: event.trace_id ${describe(event.trace_id)} is not the call's trace_id "${ctx.trace_id}"`);
    }
    let perType = this.counts.get(ctx.workspace_id);
    if (!perType) this.counts.set(ctx.workspace_id, (perType = new Map()));
    perType.set(event.event_type, (perType.get(event.event_type) ?? 0) + 1);
    this.appended++;
    return { event_id: event.event_id };
  }

  async query_by_trace(args: { trace_id: string; since?: string; until?: string }, ctx: CallContext): Promise<AuditEvent[]> {
    checkContext(SLOT, ctx);
    requireString(SLOT, "query_by_trace", requireArgs(SLOT, "query_by_trace", args), "trace_id");
    return [];
  }

  /** Events appended per event_type, in one workspace or summed over all. */
  countsByType(workspaceId?: string): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [workspace, perType] of this.counts) {
      if (workspaceId !== undefined && workspace !== workspaceId) continue;
      for (const [type, n] of perType) out[type] = (out[type] ?? 0) + n;
    }
    return out;
  }

  get total(): number {
    return this.appended;
  }
}

const STRING_FIELDS = ["event_id", "event_type", "trace_id", "loop_id", "workspace_id", "signature"];
const EVENT_FIELDS = ["event_id", "event_type", "trace_id", "loop_id", "phase_id", "workspace_id", "timestamp", "signature", "seq", "data"];

/**
 * A copy of the event. One with only §9.3's fields (the runtime's, on every phase) is copied by
 * name: the fields other than `data` must be strings or numbers, which the checks below then
 * verify, and every stored event gets one object shape. Anything else (other keys, a null
 * prototype) takes the generic deep copy, which refuses what is not plain JSON.
 */
function copyEvent(value: object): Record<string, unknown> {
  const v = value as Record<string, unknown>;
  let present = 0;
  for (const field of EVENT_FIELDS) if (v[field] !== undefined) present++;
  if (Object.getPrototypeOf(v) !== Object.prototype || Object.keys(v).length !== present) return cloneJson(v);
  const event: Record<string, unknown> = {
    event_id: v.event_id,
    event_type: v.event_type,
    trace_id: v.trace_id,
    loop_id: v.loop_id,
    phase_id: v.phase_id,
    workspace_id: v.workspace_id,
    timestamp: v.timestamp,
    signature: v.signature,
    seq: v.seq,
  };
  if (v.data !== undefined) event.data = cloneJson(v.data, "$.data");
  return event;
}

/** The event as a plain copy, or a BAD_REQUEST naming what is wrong (shared with the PostgreSQL audit). */
export function validEvent(value: unknown): AuditEvent {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw badRequest(SLOT, `append_event: event must be an object, got ${describe(value)}`);
  let event: Record<string, unknown>;
  try {
    event = copyEvent(value);
  } catch (error) {
    if (error instanceof NotJsonError) throw badRequest(SLOT, `append_event: event: ${error.message}`);
    throw error;
  }
  for (const field of STRING_FIELDS) requireString(SLOT, "append_event", event, field);
  if (event.phase_id !== null && (typeof event.phase_id !== "string" || event.phase_id.length === 0)) {
    throw badRequest(SLOT, `append_event: phase_id must be a non-empty string or null, got ${describe(event.phase_id)}`);
  }
  const { timestamp, seq, data } = event;
  if (typeof timestamp !== "string" || Number.isNaN(parseRfc3339(timestamp))) {
    throw badRequest(SLOT, `append_event: timestamp must be an RFC 3339 date-time, got ${describe(timestamp)}`);
  }
  if (typeof seq !== "number" || !Number.isInteger(seq) || seq < 0) throw badRequest(SLOT, `append_event: seq must be an integer ≥ 0, got ${describe(seq)}`);
  if (data !== undefined && (typeof data !== "object" || data === null || Array.isArray(data))) throw badRequest(SLOT, `append_event: data must be an object when present, got ${describe(data)}`);
  return event as unknown as AuditEvent;
}

/** `since`/`until` of query_by_trace as epoch ms, or a BAD_REQUEST. */
/**
 * An append_event request as every audit adapter checks it: a well-formed event of the call's
 * own trace and workspace (the substrate echoes the caller's trace, §7.7).
 */
export function appendedEvent(args: { event: AuditEvent }, ctx: CallContext): AuditEvent {
  checkContext(SLOT, ctx);
  const event = validEvent(requireArgs(SLOT, "append_event", args).event);
  if (event.trace_id !== ctx.trace_id) throw new SubstrateRequestError(SLOT, "TRACE_MISMATCH", `append_event: event.trace_id ${describe(event.trace_id)} is not the call's trace_id "${ctx.trace_id}"`);
  if (event.workspace_id !== ctx.workspace_id) throw new SubstrateRequestError(SLOT, "WORKSPACE_MISMATCH", `append_event: event.workspace_id ${describe(event.workspace_id)} is not the call's workspace_id "${ctx.workspace_id}"`);
  return event;
}

/** An event_id appended before: an identical event is an idempotent replay, a different one is refused. */
export function replayed(existing: AuditEvent, event: AuditEvent): { event_id: string } {
  if (jsonEqual(existing, event)) return { event_id: event.event_id };
  throw new SubstrateRequestError(SLOT, "DUPLICATE_EVENT_ID", `append_event: event_id "${event.event_id}" was already appended with different content; audit events are never rewritten`);
}

/** A query_by_trace request: the trace, and whether an event falls in since ≤ timestamp ≤ until. */
export function traceQuery(args: { trace_id: string; since?: string; until?: string }, ctx: CallContext): { traceId: string; within: (event: AuditEvent) => boolean } {
  checkContext(SLOT, ctx);
  const a = requireArgs(SLOT, "query_by_trace", args);
  const traceId = requireString(SLOT, "query_by_trace", a, "trace_id");
  const since = instant(optionalString(SLOT, "query_by_trace", a, "since"), "since");
  const until = instant(optionalString(SLOT, "query_by_trace", a, "until"), "until");
  const within = (event: AuditEvent) => {
    const at = parseRfc3339(event.timestamp);
    return (since === undefined || at >= since) && (until === undefined || at <= until);
  };
  return { traceId, within };
}

export function instant(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const at = parseRfc3339(value);
  if (Number.isNaN(at)) throw badRequest(SLOT, `query_by_trace: ${name} must be an RFC 3339 date-time, got ${describe(value)}`);
  return at;
}

/** Milliseconds since the epoch, or NaN when the text is not an RFC 3339 date-time. */
let lastText = "";
let lastValue = Number.NaN;

export function parseRfc3339(text: string): number {
  // Events of one iteration usually share a timestamp: remember the last one parsed.
  if (text === lastText) return lastValue;
  lastValue = parseUncached(text);
  lastText = text;
  return lastValue;
}

function parseUncached(text: string): number {
  if (!RFC3339.test(text)) return Number.NaN;
  // Date.parse reads the canonical form (T, Z) directly; only the rarer spellings need normalising.
  return Date.parse(/[tz ]/.test(text) ? text.toUpperCase().replace(" ", "T") : text);
}
