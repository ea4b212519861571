/**
 * Connections between hosted loops (§3.5, §10). Sending: when a connection's emit_phase
 * completes and its emit_condition holds, the phase's output becomes the connection's token and
 * goes out through the connection's channel; every emission and delivery is audited in the
 * emitting iteration's trail, with its trace id. Receiving: an envelope for a hosted loop is
 * validated, deduplicated by id, and starts an iteration of that loop (§8.5).
 */
import { holds } from "../grammar/expression/index.js";
import type { Connection } from "../manifest/types.js";
import type { AuditTrail } from "../runtime/audit-trail.js";
import type { CompiledConnection } from "../runtime/compiled-loop.js";
import type { IterationContext } from "../runtime/iteration-context.js";
import type { IterationRequest } from "../runtime/iteration-result.js";
import type { Loop } from "../runtime/loop.js";
import { assertToken, claimedToken } from "../runtime/tokens.js";
import { newSpanId } from "../runtime/trace.js";
import type { PulseCloudEvent, Token, TokenName } from "../tokens/types.js";
import type { DeliveryEvent, Emission } from "../connections/contracts.js";
import { buildEnvelope, EXTENSIONS } from "../connections/envelope.js";
import { phaseScope } from "./scope.js";

/**
 * The token a phase's output carries for a connection: the output itself if it is that token,
 * else a field of it that is, else the output's fields completed with token, version and trace_id
 * (so a learn phase returning `{action_id, status}` emits an OutcomeSignal). Validated against
 * schema/tokens either way: a phase cannot emit an invalid token.
 */
export function tokenFor(name: TokenName, output: unknown, traceId: string, where: string): Token {
  if (claimedToken(output) === name) {
    assertToken(name, output, where);
    return output as Token;
  }
  const fields = output !== null && typeof output === "object" && !Array.isArray(output) ? (output as Record<string, unknown>) : {};
  for (const value of Object.values(fields)) {
    if (claimedToken(value) === name) {
      assertToken(name, value, where);
      return value as Token;
    }
  }
  const token = { ...fields, token: name, version: "0.1", trace_id: traceId };
  assertToken(name, token, where);
  return token as Token;
}

export interface ConnectionEmitter {
  connection: Connection;
  /** Sends the emission (as `envelope` when it was built already: a signal from the outbox). */
  emit(emission: Emission, envelope?: PulseCloudEvent): Promise<void>;
}

/** Emits the connections whose emit_phase just completed (the host's afterPhase hook). */
export async function emitConnections(
  loop: Loop,
  phaseId: string,
  input: unknown,
  output: unknown,
  signature: string,
  it: IterationContext,
  trail: AuditTrail,
  emitters: ReadonlyMap<string, ConnectionEmitter>,
  remember: (emission: Emission, trail: AuditTrail) => void,
  now: number,
): Promise<void> {
  for (const compiled of loop.compiled.connections as CompiledConnection[]) {
    const { connection } = compiled;
    if (connection.emit_phase !== phaseId) continue;
    if (compiled.condition && !holds(compiled.condition, phaseScope(input, output, it.tokens.all()))) continue;
    const emitter = emitters.get(connection.id);
    if (!emitter) continue;
    const token = tokenFor(connection.token as TokenName, output, it.traceId, `connection ${connection.id} of ${loop.id}`);
    const emission: Emission = { connection, token, loopId: loop.id, phaseId, workspaceId: it.workspaceId, traceId: it.traceId, spanId: newSpanId(), signature, time: now };
    remember(emission, trail);
    if (it.outbox) {
      // Journaled: the signal is written with the phase and sent once the phase committed.
      const envelope = buildEnvelope(emission);
      it.outbox.entries.push({ event_id: envelope.id, connection_id: connection.id, to_loop: connection.to_loop, envelope: JSON.parse(JSON.stringify(envelope)) as unknown });
      it.outbox.deliver.push(() => emitter.emit(emission, envelope));
    } else await emitter.emit(emission);
  }
}

/** The audit event a delivery event becomes in the emitting iteration's trail. */
export function auditOf(event: DeliveryEvent): { type: string; data: Record<string, unknown> } | undefined {
  const { emission, envelope } = event;
  const base = { connection: emission.connection.id, event_id: envelope.id, to_loop: emission.connection.to_loop, token: emission.token.token };
  switch (event.type) {
    case "signal.emitted":
      return { type: "signal.emitted", data: { ...base, delivery: emission.connection.delivery ?? "at_least_once" } };
    case "signal.delivered":
      return { type: "signal.delivered", data: { ...base, outcome: event.outcome, attempts: event.attempts } };
    case "signal.dropped":
      return { type: "signal.dropped", data: { ...base, reason: event.reason, ...(event.detail ? { detail: event.detail } : {}) } };
    case "signal.overflow":
      return event.policy === "escalate" ? { type: "signal.overflow", data: { ...base, policy: event.policy, inflight: event.inflight } } : undefined;
    default:
      return undefined;
  }
}

/** Where a received signal enters a loop: its cross_loop_signal cadence, else the connection's to_phase. */
export function entryFor(loop: Loop, envelope: PulseCloudEvent): { entry?: string; viaCadence: boolean } {
  const source = /^loop:([^/]+)\/phase:(.+)$/.exec(envelope.source);
  const fromLoop = source?.[1];
  const fromPhase = source?.[2];
  const token = (envelope.data as { token?: string } | undefined)?.token;
  for (let cadence: unknown = loop.compiled.manifest.cadence; cadence; cadence = (cadence as { fallback?: unknown }).fallback) {
    const c = cadence as { type?: string; params?: { from_loop?: string; from_phase?: string; token?: string } };
    if (c.type !== "cross_loop_signal") continue;
    const p = c.params ?? {};
    if (p.from_loop === fromLoop && (p.from_phase === undefined || p.from_phase === fromPhase) && (p.token === undefined || p.token === token)) return { viaCadence: true };
  }
  const toPhase = (envelope as unknown as Record<string, unknown>)[EXTENSIONS.toPhase];
  if (typeof toPhase === "string" && loop.compiled.byId.has(toPhase)) return { entry: toPhase, viaCadence: false };
  return { viaCadence: false };
}

/**
 * The iteration a received signal starts: in the workspace the envelope names (else the host's),
 * at the entry entryFor() chooses, with the token as input and the signal recorded as its cause.
 */
export function signalRequest(loop: Loop, envelope: PulseCloudEvent, defaultWorkspace: string): IterationRequest {
  const route = entryFor(loop, envelope);
  const workspace = (envelope as unknown as Record<string, unknown>)[EXTENSIONS.workspace];
  const request: IterationRequest = {
    workspace: typeof workspace === "string" ? workspace : defaultWorkspace,
    input: envelope.data,
    tokens: [envelope.data as never],
    cause: { signal: envelope.id, source: envelope.source, trace_id: envelope.subject.replace(/^trace_id:/, "") },
  };
  if (route.entry) request.entry = route.entry;
  return request;
}
