/**
 * The audit events of one iteration (§7.3): every phase transition, substrate mutation and signal
 * is appended exactly once, with trace_id, phase_id, timestamp and signature, numbered 0, 1, 2, …
 * without gaps. Event ids are `<trace_id>-<seq>`, so an append retried after a lost response is
 * recognised by the audit substrate instead of written twice.
 */
import type { AuditEvent, AuditSubstrate } from "../substrates/contracts.js";
import type { CircuitBreaker } from "./circuit-breaker.js";
import type { Clock } from "./clock.js";
import { guarded } from "./phase-scope.js";

let isoAt = NaN;
let iso = "";

/** RFC 3339 time of a clock reading; consecutive events usually share a millisecond. */
function timestamp(ms: number): string {
  if (ms !== isoAt) {
    isoAt = ms;
    iso = new Date(ms).toISOString();
  }
  return iso;
}

export class AuditTrail {
  private seq = 0;
  /**
   * For the trail of directly invoked phases (the conformance driver's phase.invoke): the calls
   * already audited, so repeating the same call adds no event. An iteration's own trail has none:
   * there every visit to a phase is a transition, even a second identical one after a route.
   */
  private readonly transitions: Set<string> | undefined;

  constructor(
    private readonly audit: AuditSubstrate,
    private readonly breaker: CircuitBreaker,
    private readonly clock: Clock,
    readonly loopId: string,
    readonly workspaceId: string,
    readonly traceId: string,
    dedupeCalls = false,
    /** Where the trail continues: a resumed iteration's events follow those already stored. */
    firstSeq = 0,
    /**
     * Held for the iteration's journal (a Store serving the audit slot): events are numbered and
     * kept until drain() hands them to the unit of work that commits them with their phase.
     */
    private hold = false,
  ) {
    if (dedupeCalls) this.transitions = new Set();
    this.seq = firstSeq;
  }

  private held: AuditEvent[] = [];

  /** From now on appends go to the audit substrate as they come (the iteration's units are all committed). */
  release(): void {
    this.hold = false;
  }

  /** The events held since the last drain, once every append queued before has been made. */
  async drain(): Promise<AuditEvent[]> {
    if (this.tail) await this.tail.catch(() => undefined);
    const held = this.held;
    this.held = [];
    return held;
  }

  /**
   * Events drained for a unit the store refused: never stored, so their numbers go to the events
   * after them (those still held are renumbered), and the trace's seq keeps no gap.
   */
  refused(events: readonly AuditEvent[]): void {
    const n = events.length;
    if (n === 0) return;
    this.seq -= n;
    for (const e of this.held) {
      e.seq -= n;
      e.event_id = `${this.traceId}-${e.seq}`;
    }
  }

  get count(): number {
    return this.seq;
  }

  /** The last append queued, while any is in flight; later appends chain behind it. */
  private tail: Promise<unknown> | undefined;
  private queued = 0;

  /**
   * Appends one event. Appends are numbered in the order they are called, one after another:
   * a signal acknowledged later may append to a trail while its iteration is still appending.
   */
  append(eventType: string, phaseId: string | null, signature: string, data?: Record<string, unknown>): Promise<AuditEvent> {
    this.queued++;
    let next: Promise<AuditEvent>;
    if (this.tail === undefined) {
      next = this.write(eventType, phaseId, signature, data);
    } else {
      const write = () => this.write(eventType, phaseId, signature, data);
      next = this.tail.then(write, write);
    }
    this.tail = next;
    return next;
  }

  private async write(eventType: string, phaseId: string | null, signature: string, data?: Record<string, unknown>): Promise<AuditEvent> {
    try {
      const event: AuditEvent = {
        event_id: `${this.traceId}-${this.seq}`,
        event_type: eventType,
        trace_id: this.traceId,
        loop_id: this.loopId,
        phase_id: phaseId,
        workspace_id: this.workspaceId,
        timestamp: timestamp(this.clock.now()),
        signature,
        seq: this.seq,
      };
      if (data) event.data = data;
      if (this.hold) {
        this.held.push(event);
        this.seq++;
        return event;
      }
      // The number is taken only once the substrate has the event: a failed append leaves no gap.
      await guarded(this.breaker, () => this.audit.append_event({ event }, { trace_id: this.traceId, workspace_id: this.workspaceId }));
      this.seq++;
      return event;
    } finally {
      // The last append in flight ends the chain, so the next one starts without waiting a turn.
      if (--this.queued === 0) this.tail = undefined;
    }
  }

  /** Appends a phase transition (on a direct-invocation trail, unless the same call was audited). */
  async transition(eventType: string, phaseId: string, signature: string, data?: Record<string, unknown>): Promise<boolean> {
    if (!this.transitions) {
      await this.append(eventType, phaseId, signature, data);
      return true;
    }
    const key = `${eventType} ${phaseId} ${signature}`;
    if (this.transitions.has(key)) return false;
    await this.append(eventType, phaseId, signature, data);
    this.transitions.add(key);
    return true;
  }

  /**
   * Events a handler appended during its phase (its own event types, such as §4's
   * `audit_event: node.created`), renumbered into this iteration's sequence and attributed to the
   * phase and its signature.
   */
  async appendHeld(events: readonly AuditEvent[], phaseId: string, signature: string): Promise<void> {
    for (const e of events) await this.append(e.event_type, phaseId, signature, e.data);
  }
}
