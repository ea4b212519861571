/**
 * What a host reports to its subscribers (`host.subscribe`): the runtime's events of every loop
 * it runs, and its own: notes, cadences firing or declining, signals on their way, escalations.
 */
import type { Ack } from "../connections/contracts.js";
import type { RuntimeEvent } from "../runtime/events.js";

export type HostEvent =
  | RuntimeEvent
  | { type: "host.note"; loop_id: string; message: string; at: number }
  | { type: "cadence.fired"; loop_id: string; cadence: string; at: number }
  | { type: "cadence.declined"; loop_id: string; cadence: string; reason: string; at: number }
  | { type: "signal.emitted" | "signal.delivered" | "signal.dropped" | "signal.overflow" | "signal.retrying"; loop_id: string; connection: string; to_loop: string; event_id: string; trace_id: string; detail?: string; /** Why, in words (a dropped signal). */ message?: string; at: number }
  | { type: "signal.received"; loop_id: string; event_id: string; from: string; outcome: Ack["outcome"]; /** Why it was rejected. */ reason?: string; at: number }
  | { type: "store.failed"; loop_id: string; code: string; message: string; /** The loops paused and try again (else they stopped). */ transient: boolean; at: number }
  | { type: "escalation"; loop_id: string; to: string; phase_id: string; reason: string; at: number };

/** The host's event stream: a failing subscriber never breaks the host. */
export class HostEvents {
  private readonly listeners = new Set<(event: HostEvent) => void>();

  subscribe(listener: (event: HostEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: HostEvent): void {
    for (const l of this.listeners) {
      try {
        l(event);
      } catch {
        // A failing subscriber must not break the host.
      }
    }
  }
}
