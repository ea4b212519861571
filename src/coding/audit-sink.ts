/**
 * Where the kit records audit events: through the audit substrate contract, either from inside
 * a phase (the runtime numbers the events and signs them with the phase) or with a substrate and
 * call context of one's own (outside any phase, e.g. a CLI command).
 */
import { randomUUID } from "node:crypto";
// Straight from the modules, not the package entry: that would pull the stores (and a circle) in.
import type { PhaseContext } from "../runtime/handler-context.js";
import { initSignatures, signatureOf } from "../runtime/signature.js";
import type { AuditSubstrate, CallContext } from "../substrates/contracts.js";

export type AuditSink = (eventType: string, data: Record<string, unknown>) => Promise<void>;

/** Appends through the phase's audit substrate; the runtime sets seq and the signature at commit. */
export function phaseAuditSink(ctx: Pick<PhaseContext, "substrates" | "trace_id" | "loop_id" | "workspace_id" | "signature"> & { phase: { id: string } }): AuditSink {
  return async (event_type, data) => {
    await ctx.substrates.audit.append_event({
      event: { event_id: randomUUID(), event_type, trace_id: ctx.trace_id, loop_id: ctx.loop_id, phase_id: ctx.phase.id, workspace_id: ctx.workspace_id, timestamp: new Date().toISOString(), signature: ctx.signature, seq: 0, data },
    });
  };
}

/**
 * Appends straight to an audit substrate, numbering events from `firstSeq`. Without a phase
 * signature each event is signed with the BLAKE3 signature of its own content (§9.3).
 */
export function substrateAuditSink(audit: AuditSubstrate, call: CallContext, ids: { loopId: string; phaseId?: string; signature?: string; firstSeq?: number }): AuditSink {
  let seq = ids.firstSeq ?? 0;
  return async (event_type, data) => {
    const event = { event_id: randomUUID(), event_type, trace_id: call.trace_id, loop_id: ids.loopId, phase_id: ids.phaseId ?? null, workspace_id: call.workspace_id, timestamp: new Date().toISOString(), signature: ids.signature ?? "", seq: seq++, data };
    if (!event.signature) {
      await initSignatures();
      event.signature = signatureOf({ ...event, signature: null });
    }
    await audit.append_event({ event }, call);
  };
}
