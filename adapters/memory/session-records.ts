/**
 * Session records in memory: for tests and for a `pulse serve` that keeps nothing. Copies in and
 * out, so a caller never mutates what is stored.
 */
import {
  newIterationRecord,
  newSessionRecord,
  SessionRecordsError,
  type ControlRequest,
  type IterationPatch,
  type IterationRecord,
  type NewIteration,
  type NewSession,
  type SessionPatch,
  type SessionRecord,
  type SessionRecords,
  type SessionStatus,
  EVENTS_PAGE,
  type NewSessionEventRecord,
  type SessionEventRecord,
} from "../../src/coding/session/records.js";

export class MemorySessionRecords implements SessionRecords {
  private readonly sessions = new Map<string, SessionRecord>();
  private readonly iterationsById = new Map<string, IterationRecord>();
  private seq = 0;
  private readonly order = new Map<string, number>();

  constructor(private readonly now: () => string = () => new Date().toISOString()) {}

  async create(session: NewSession): Promise<SessionRecord> {
    if (this.sessions.has(session.id)) throw new SessionRecordsError("EXISTS", `session ${session.id} already exists`);
    const record = newSessionRecord(session, this.now());
    this.sessions.set(record.id, record);
    this.order.set(record.id, this.seq++);
    return structuredClone(record);
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const found = this.sessions.get(id) ?? this.byPrefix(id);
    return found && structuredClone(found);
  }

  async list(filter: { status?: SessionStatus } = {}): Promise<SessionRecord[]> {
    return [...this.sessions.values()]
      .filter((s) => filter.status === undefined || s.status === filter.status)
      .sort((a, b) => b.created_at.localeCompare(a.created_at) || this.order.get(b.id)! - this.order.get(a.id)!)
      .map((s) => structuredClone(s));
  }

  async update(id: string, patch: SessionPatch): Promise<SessionRecord> {
    const s = this.sessions.get(id);
    if (!s) throw new SessionRecordsError("NOT_FOUND", `no session ${id}`);
    Object.assign(s, structuredClone(patch), { updated_at: this.now() });
    return structuredClone(s);
  }

  requestControl(id: string, control: ControlRequest | null): Promise<SessionRecord> {
    return this.update(id, { control });
  }

  async addIteration(iteration: NewIteration): Promise<IterationRecord> {
    if (!this.sessions.has(iteration.session_id)) throw new SessionRecordsError("NOT_FOUND", `no session ${iteration.session_id}`);
    if (this.iterationsById.has(iteration.id)) throw new SessionRecordsError("EXISTS", `iteration ${iteration.id} already exists`);
    for (const i of this.iterationsById.values()) {
      if (i.session_id === iteration.session_id && i.iteration_number === iteration.iteration_number) throw new SessionRecordsError("EXISTS", `session ${iteration.session_id} already has an iteration ${iteration.iteration_number}`);
    }
    const record = newIterationRecord(structuredClone(iteration), this.now());
    this.iterationsById.set(record.id, record);
    return structuredClone(record);
  }

  async updateIteration(id: string, patch: IterationPatch): Promise<IterationRecord> {
    const i = this.iterationsById.get(id);
    if (!i) throw new SessionRecordsError("NOT_FOUND", `no iteration ${id}`);
    Object.assign(i, structuredClone(patch));
    return structuredClone(i);
  }

  async iterations(sessionId: string): Promise<IterationRecord[]> {
    return [...this.iterationsById.values()].filter((i) => i.session_id === sessionId).sort((a, b) => a.iteration_number - b.iteration_number).map((i) => structuredClone(i));
  }

  private readonly eventLog = new Map<string, SessionEventRecord[]>();

  async appendEvents(sessionId: string, events: NewSessionEventRecord[]): Promise<number> {
    if (!this.sessions.has(sessionId)) throw new SessionRecordsError("NOT_FOUND", `no session ${sessionId}`);
    const log = this.eventLog.get(sessionId) ?? [];
    this.eventLog.set(sessionId, log);
    for (const e of events) log.push({ seq: log.length + 1, at: e.at, type: e.type, data: structuredClone(e.data) });
    return log.length;
  }

  async events(sessionId: string, afterSeq = 0, limit = EVENTS_PAGE): Promise<SessionEventRecord[]> {
    return (this.eventLog.get(sessionId) ?? []).filter((e) => e.seq > afterSeq).slice(0, limit).map((e) => structuredClone(e));
  }

  async close(): Promise<void> {}

  private byPrefix(prefix: string): SessionRecord | undefined {
    if (prefix.length < 4) return undefined;
    const hits = [...this.sessions.keys()].filter((k) => k.startsWith(prefix));
    return hits.length === 1 ? this.sessions.get(hits[0]!) : undefined;
  }
}
