/**
 * The CloudEvents 1.0 envelope of a signal (§10.1, decisions.md): type
 * `org.opensentience.pulse.<Token>`, source `loop:<loop_id>/phase:<phase_id>`, subject
 * `trace_id:<trace_id>`, an id derived from the connection and the emitting phase's signature (a
 * redelivery keeps it, so receivers recognise it), the W3C traceparent as the distributed-tracing
 * extension, and the token as data. Routing extensions tell the receiving host where it goes.
 * Built with the cloudevents SDK, validated against schema/tokens before it leaves and again
 * when it arrives.
 */
import { CloudEvent } from "cloudevents";
import { PulseError } from "../runtime/errors.js";
import { blake3Hex } from "../runtime/signature.js";
import { assertToken, describeErrors, isTokenName, validateEnvelope } from "../runtime/tokens.js";
import { formatTraceparent } from "../runtime/trace.js";
import type { PulseCloudEvent } from "../tokens/types.js";
import type { Emission } from "./contracts.js";

/** Extension attributes (CloudEvents allows lowercase letters and digits) routing a signal. */
export const EXTENSIONS = {
  toLoop: "pulsetoloop",
  toPhase: "pulsetophase",
  workspace: "pulseworkspace",
  connection: "pulseconnection",
} as const;

export class EnvelopeInvalidError extends PulseError {
  constructor(message: string) {
    super("ENVELOPE_INVALID", message);
  }
}

export function envelopeId(connectionId: string, signature: string): string {
  return `evt_${blake3Hex(`${connectionId}\n${signature}`).slice(0, 32)}`;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export function buildEnvelope(e: Emission): PulseCloudEvent {
  assertToken(e.token.token, e.token, `connection ${e.connection.id}`);
  const attributes: Record<string, unknown> = {
    specversion: "1.0",
    type: `org.opensentience.pulse.${e.token.token}`,
    source: `loop:${e.loopId}/phase:${e.phaseId}`,
    subject: `trace_id:${e.traceId}`,
    id: envelopeId(e.connection.id, e.signature),
    // Set explicitly: the SDK would otherwise invent an id and a time.
    time: new Date(e.time).toISOString(),
    datacontenttype: "application/json",
    traceparent: formatTraceparent(e.traceId, e.spanId),
    [EXTENSIONS.toLoop]: e.connection.to_loop,
    [EXTENSIONS.workspace]: e.workspaceId,
    [EXTENSIONS.connection]: e.connection.id,
    data: e.token,
  };
  if (e.connection.to_phase) attributes[EXTENSIONS.toPhase] = e.connection.to_phase;
  // toJSON() also lists the SDK's unset optional attributes (data_base64, schemaurl, …) as
  // undefined keys, whose names are not valid CloudEvents attribute names: keep only set ones.
  const json = new CloudEvent(attributes, true).toJSON();
  for (const key of Object.keys(json)) if (json[key] === undefined) delete json[key];
  const envelope = json as unknown as PulseCloudEvent;
  if (!validateEnvelope(envelope)) throw new EnvelopeInvalidError(`connection ${e.connection.id}: the envelope does not match schema/tokens/cloudevents-envelope.v0.1.json: ${describeErrors(validateEnvelope.errors)}`);
  return deepFreeze(envelope);
}

/** Validates an arriving envelope and its token; refuses anything else with a clear message. */
export function readEnvelope(value: unknown): PulseCloudEvent {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new EnvelopeInvalidError("a signal must be a CloudEvents envelope (a JSON object)");
  if (!validateEnvelope(value)) throw new EnvelopeInvalidError(`the envelope does not match schema/tokens/cloudevents-envelope.v0.1.json: ${describeErrors(validateEnvelope.errors)}`);
  const envelope = value as unknown as PulseCloudEvent;
  const name = (envelope.data as { token?: unknown }).token;
  if (!isTokenName(name)) throw new EnvelopeInvalidError(`the envelope's data is not a canonical token`);
  assertToken(name, envelope.data, `envelope ${envelope.id}`);
  return envelope;
}
