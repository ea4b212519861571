/**
 * EscalationRequest (§5.4) is not a canonical token (decisions.md): it travels as a CloudEvent of
 * type org.opensentience.pulse.EscalationRequest, to the parent loop when the loop declares one,
 * else to the host's human channel. A nested loop's escalation also fails the outer phase that
 * waits for it, so it climbs one level at a time through the outer phases' own directives.
 */
import { blake3Hex } from "../runtime/signature.js";
import { formatTraceparent, newSpanId } from "../runtime/trace.js";

export interface EscalationEnvelope {
  specversion: "1.0";
  type: "org.opensentience.pulse.EscalationRequest";
  source: string;
  subject: string;
  id: string;
  time: string;
  datacontenttype: "application/json";
  traceparent: string;
  data: { loop_id: string; phase_id: string; trace_id: string; signature: string; reason: string; to: string; error?: { code: string; message: string } };
}

export interface Escalation {
  from: string;
  /** The parent loop id, or "human". */
  to: string;
  envelope: EscalationEnvelope;
}

export function escalationEnvelope(e: { loopId: string; phaseId: string; traceId: string; signature: string; reason: string; to: string; time: number; error?: { code: string; message: string } }): EscalationEnvelope {
  const data: EscalationEnvelope["data"] = { loop_id: e.loopId, phase_id: e.phaseId, trace_id: e.traceId, signature: e.signature, reason: e.reason, to: e.to };
  if (e.error) data.error = { code: e.error.code, message: e.error.message };
  return {
    specversion: "1.0",
    type: "org.opensentience.pulse.EscalationRequest",
    source: `loop:${e.loopId}/phase:${e.phaseId}`,
    subject: `trace_id:${e.traceId}`,
    // One escalation of one phase run: its signature and its iteration's trace.
    id: `esc_${blake3Hex(`${e.signature}\n${e.traceId}`).slice(0, 32)}`,
    time: new Date(e.time).toISOString(),
    datacontenttype: "application/json",
    traceparent: formatTraceparent(e.traceId, newSpanId()),
    data,
  };
}
