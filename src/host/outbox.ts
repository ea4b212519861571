/**
 * Signals a previous run wrote to the store's outbox and never saw acknowledged: a starting host
 * sends them again, as they were built (same event id, so a receiver that did take one answers
 * duplicate), through the channel of their connection. In a fleet, only the holder of the sending
 * loop's lease does, for that loop, once it gained the lease: a starting host leaves the outbox
 * of a loop a live host runs alone.
 */
import type { Clock } from "../runtime/clock.js";
import { newSpanId } from "../runtime/trace.js";
import type { Emission } from "../connections/contracts.js";
import type { PendingSignal, Store } from "../store/contracts.js";
import type { PulseCloudEvent, Token } from "../tokens/types.js";
import type { ConnectionEmitter } from "./signals.js";

/** Outbox entries a starting host sends again at most (the oldest first). */
const OUTBOX_BATCH = 10_000;

/**
 * Asks the store for what its outbox still holds (before anything new is written, so only a
 * previous run's signals; `only`: of one loop and workspace, whose lease this host just gained)
 * and sends it again.
 */
export function sendUnsent(store: Store | undefined, emitterOf: (loopId: string, connectionId: string) => ConnectionEmitter | undefined, clock: Clock, note: (message: string) => void, only?: { loopId: string; workspace: string }): void {
  if (!store) return;
  void store
    .pending(OUTBOX_BATCH)
    .then((pending) => redeliver(only ? pending.filter((p) => p.loop_id === only.loopId && p.workspace_id === only.workspace) : pending, emitterOf, clock))
    .catch((e: Error) => note(`cannot read the store's outbox: ${e.message}`));
}

export function redeliver(pending: readonly PendingSignal[], emitterOf: (loopId: string, connectionId: string) => ConnectionEmitter | undefined, clock: Clock): void {
  for (const p of pending) {
    const emitter = emitterOf(p.loop_id, p.connection_id);
    if (!emitter) continue;
    const envelope = p.envelope as PulseCloudEvent;
    const phaseId = /\/phase:(.+)$/.exec(envelope.source)?.[1] ?? "";
    const signature = (envelope as unknown as { pulsesignature?: string }).pulsesignature ?? "";
    const emission: Emission = { connection: emitter.connection, token: envelope.data as Token, loopId: p.loop_id, phaseId, workspaceId: p.workspace_id, traceId: p.trace_id, spanId: newSpanId(), signature, time: clock.now() };
    void emitter.emit(emission, envelope).catch(() => undefined);
  }
}
