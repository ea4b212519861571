/**
 * What becomes of a delivery event of a connection's channel (emitted, delivered, retrying,
 * dropped, overflow): an audit event in the emitting iteration's trail, with its trace id (§7.3),
 * a host event for subscribers, and for an `escalate` overflow an EscalationRequest.
 */
import type { DeliveryEvent, Emission } from "../connections/contracts.js";
import type { AuditTrail } from "../runtime/audit-trail.js";
import type { HostEvent } from "./host-events.js";
import { auditOf } from "./signals.js";

export interface DeliveryDeps {
  /** The trail of the iteration each emission came from. */
  trails: WeakMap<Emission, AuditTrail>;
  emit(event: HostEvent): void;
  now(): number;
  escalate(e: { loopId: string; phaseId: string; traceId: string; signature: string; reason: string }): Promise<void>;
  /** Marks a signal of the store's outbox as settled (with a store), so a restart does not send it again. */
  settle?(connectionId: string, eventId: string, outcome: "delivered" | "dropped", detail?: string): Promise<void>;
}

export async function reportDelivery(event: DeliveryEvent, deps: DeliveryDeps): Promise<void> {
  const trail = deps.trails.get(event.emission);
  const audited = auditOf(event);
  if (trail && audited) {
    try {
      await trail.append(audited.type, event.emission.phaseId, event.emission.signature, audited.data);
    } catch {
      // The audit substrate is unreachable: the loop's own circuit reports it.
    }
  }
  const { emission, envelope } = event;
  // Settled: acknowledged, or refused for good. A signal dropped because the host stopped stays
  // in the outbox, to be sent again when it starts.
  const settle = deps.settle;
  if (settle && event.type === "signal.delivered") {
    // Settled once the receiver's iteration committed (its inbox has the id), not at its "accepted".
    const done = () => settle(emission.connection.id, envelope.id, "delivered").catch(() => undefined);
    if (event.committed) void event.committed.then(done, () => undefined);
    else await done();
  } else if (settle && event.type === "signal.dropped" && event.reason !== "stopped") {
    await settle(emission.connection.id, envelope.id, "dropped", event.reason).catch(() => undefined);
  }
  deps.emit({
    type: event.type,
    loop_id: emission.loopId,
    connection: emission.connection.id,
    to_loop: emission.connection.to_loop,
    event_id: envelope.id,
    trace_id: emission.traceId,
    ...(event.type === "signal.dropped"
      ? { detail: event.reason, ...(event.detail ? { message: event.detail } : {}) }
      : event.type === "signal.delivered"
        ? { detail: event.outcome }
        : event.type === "signal.retrying"
          ? { detail: event.error }
          : event.type === "signal.overflow"
            ? { detail: event.policy }
            : {}),
    at: deps.now(),
  });
  if (event.type === "signal.overflow" && event.policy === "escalate") {
    await deps.escalate({ loopId: emission.loopId, phaseId: emission.phaseId, traceId: emission.traceId, signature: emission.signature, reason: `connection ${emission.connection.id} overflowed max_inflight ${event.inflight}` });
  }
}
