/**
 * The runtime's event stream: what hosts subscribe to (logs, dashboards, `pulse run`'s trace).
 * Emitting with no subscriber costs one length check.
 */
import type { LoopStatus } from "./machine.js";

interface Base {
  loop_id: string;
  workspace_id: string;
  /** Clock time (ms) at which it happened. */
  at: number;
}

export type RuntimeEvent =
  | (Base & { type: "iteration.started"; trace_id: string; iteration: number; entry: string; cause?: Record<string, unknown> })
  | (Base & { type: "iteration.finished"; trace_id: string; iteration: number; status: IterationStatus; closed: boolean; duration_ms: number; error?: { code: string; message: string } })
  /**
   * An iteration reported failed because the store's connection broke while its end was on the
   * wire: once the store answered, what the journal holds of it. `committed`: its end landed
   * after all (counted as `status` now); `resumed`: it did not, and the host resumes it from the
   * journal; `next_holder`: it did not, and the fleet's next holder of the lease resumes it;
   * `lost`: nothing of it reached the journal (it stays failed).
   */
  | (Base & { type: "iteration.resolved"; trace_id: string; iteration: number; outcome: "committed" | "resumed" | "next_holder" | "lost"; status?: string; message: string })
  | (Base & { type: "phase.started"; trace_id: string; phase_id: string; attempt: number })
  | (Base & { type: "phase.completed"; trace_id: string; phase_id: string; signature: string; duration_ms: number; replayed: boolean; routed_to?: string })
  | (Base & { type: "phase.retrying"; trace_id: string; phase_id: string; attempt: number; delay_ms: number; error: { code: string; message: string } })
  | (Base & { type: "phase.failed"; trace_id: string; phase_id: string; directive: string; error: { code: string; message: string } })
  | (Base & { type: "phase.skipped"; trace_id: string; phase_id: string; reason: string })
  | (Base & { type: "invariant.violated"; trace_id: string; phase_id: string | null; invariant: string; section: string; message: string })
  | (Base & { type: "circuit.state_changed"; slot: string; state: CircuitState; previous: CircuitState })
  | (Base & { type: "loop.status_changed"; status: LoopStatus; previous: LoopStatus })
  | (Base & { type: "escalation.requested"; trace_id: string; phase_id: string; reason: string });

export type IterationStatus = "completed" | "failed" | "rolled_back" | "escalated" | "aborted" | "degraded";
export type CircuitState = "closed" | "open" | "half_open";

export type Listener = (event: RuntimeEvent) => void;

export class EventStream {
  private listeners: Listener[] = [];

  /** Events emitted here are also emitted on the parent (a loop's stream feeds the runtime's). */
  constructor(private readonly parent?: EventStream) {}

  subscribe(listener: Listener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  get active(): boolean {
    return this.listeners.length > 0 || (this.parent?.active ?? false);
  }

  emit(event: RuntimeEvent): void {
    this.parent?.emit(event);
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A failing subscriber must not break the loop it observes.
      }
    }
  }
}
