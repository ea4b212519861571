/**
 * The CloudEvents 1.0 envelope of a signal (§10.1, decisions.md): type
 * `org.opensentience.pulse.<Token>`, source `loop:<loop_id>/phase:<phase_id>`, subject
 * `trace_id:<trace_id>`, an id derived from the connection, the emitting phase's signature and the
 * emitting trace (a redelivery keeps it, so receivers recognise it; another emission gets another),
 * the W3C traceparent as the distributed-tracing extension, and the token as data. Routing
 * extensions tell the receiving host where it goes.
 *
 * Built as a plain object and validated against schema/tokens/cloudevents-envelope (the same
 * rules the cloudevents SDK applies, and more; the SDK's constructor cost a third of an
 * in-process signal). The envelope and a copy of its token are frozen, so no transport or
 * receiver can alter what was audited, and the emitting phase's own output is left as it was.
 * Arriving envelopes are validated again, except the frozen ones built in this process.
 */
import { PulseError } from "../runtime/errors.js";
import { blake3Hex } from "../runtime/signature.js";
import { assertToken, describeErrors, isTokenName, validateEnvelope } from "../runtime/tokens.js";
import { formatTraceparent } from "../runtime/trace.js";
import type { Connection } from "../manifest/types.js";
import type { PulseCloudEvent } from "../tokens/types.js";
import type { Emission } from "./contracts.js";

/** Extension attributes (CloudEvents allows lowercase letters and digits) routing a signal. */
export const EXTENSIONS = {
  toLoop: "pulsetoloop",
  toPhase: "pulsetophase",
  workspace: "pulseworkspace",
  connection: "pulseconnection",
  /** The emitting phase's signature, on exactly_once connections only. */
  signature: "pulsesignature",
} as const;

export class EnvelopeInvalidError extends PulseError {
  constructor(message: string) {
    super("ENVELOPE_INVALID", message);
  }
}

/**
 * The id of one emission: its connection, the emitting phase's signature and the emitting
 * iteration's trace. A redelivery is the same envelope and keeps it; the same phase run again in
 * another iteration (same signature, other trace) is another event and gets another id, as
 * CloudEvents requires ("unique for each distinct event" per source).
 */
export function envelopeId(connectionId: string, signature: string, traceId: string): string {
  return `evt_${blake3Hex(`${connectionId}\n${signature}\n${traceId}`).slice(0, 32)}`;
}

/**
 * The prototype of envelopes built here. An envelope that has it and is frozen was validated when
 * it was built and cannot have changed since, so an in-process receiver need not validate it
 * again; a copy (`{...envelope}`) or anything parsed from JSON is a plain object, read in full.
 */
const BUILT: object = Object.create(Object.prototype);

/**
 * What every envelope of a connection shares (type, source, extensions: its connection, loop,
 * phase and token) is validated with the first envelope; later ones are validated in full only
 * if what varies per emission is not plainly valid (W3C ids, a time within RFC 3339's years).
 */
interface Shape {
  loopId: string;
  phaseId: string;
  token: string;
}
/** Per connection, the (loop, phase, token) triples already validated: compared field by field, no key string built per envelope. */
const validShapes = new WeakMap<Connection, Shape[]>();
const TRACE_ID = /^(?!0{32})[0-9a-f]{32}$/;
const SPAN_ID = /^(?!0{16})[0-9a-f]{16}$/;
const YEAR_10000 = 253_402_300_800_000;

function knownShape(e: Emission): boolean {
  const shapes = validShapes.get(e.connection);
  if (!shapes) return false;
  for (const s of shapes) if (s.loopId === e.loopId && s.phaseId === e.phaseId && s.token === e.token.token) return true;
  return false;
}

function routine(e: Emission): boolean {
  return knownShape(e) && e.time >= 0 && e.time < YEAR_10000 && TRACE_ID.test(e.traceId) && SPAN_ID.test(e.spanId);
}

const MAX_DEPTH = 64;

/**
 * A frozen deep copy of a token with JSON's semantics (what an HTTP receiver would see): toJSON
 * is applied, undefined and functions are left out of objects and become null in arrays.
 */
function frozenCopy(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== "object") return value;
  if (depth > MAX_DEPTH) throw new EnvelopeInvalidError(`a token nested deeper than ${MAX_DEPTH} levels (or a cycle) cannot be sent`);
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return frozenCopy((value as { toJSON: () => unknown }).toJSON(), depth + 1);
  if (Array.isArray(value)) {
    const out = value.map((v: unknown) => (v === undefined || typeof v === "function" || typeof v === "symbol" ? null : frozenCopy(v, depth + 1)));
    return Object.freeze(out);
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || typeof v === "function" || typeof v === "symbol") continue;
    out[key] = frozenCopy(v, depth + 1);
  }
  return Object.freeze(out);
}

/** The last emission time formatted: a burst of signals shares its millisecond, and toISOString costs more than the rest of the envelope's strings together. */
let lastTime = Number.NaN;
let lastIso = "";
function isoTime(ms: number): string {
  if (ms !== lastTime) {
    lastIso = new Date(ms).toISOString();
    lastTime = ms;
  }
  return lastIso;
}

export function buildEnvelope(e: Emission): PulseCloudEvent {
  const data = frozenCopy(e.token, 0);
  // The copy is what travels, so the copy is what must be a valid token.
  assertToken(e.token.token, data, `connection ${e.connection.id}`);
  if (!Number.isFinite(e.time)) throw new EnvelopeInvalidError(`connection ${e.connection.id}: the emission time ${e.time} is not a time`);
  const envelope = Object.create(BUILT) as Record<string, unknown>;
  envelope.specversion = "1.0";
  envelope.id = envelopeId(e.connection.id, e.signature, e.traceId);
  envelope.type = `org.opensentience.pulse.${e.token.token}`;
  envelope.source = `loop:${e.loopId}/phase:${e.phaseId}`;
  envelope.subject = `trace_id:${e.traceId}`;
  envelope.time = isoTime(e.time);
  envelope.datacontenttype = "application/json";
  envelope.traceparent = formatTraceparent(e.traceId, e.spanId);
  // The names in EXTENSIONS, written out: one object shape for every envelope.
  envelope.pulsetoloop = e.connection.to_loop;
  envelope.pulseworkspace = e.workspaceId;
  envelope.pulseconnection = e.connection.id;
  if (e.connection.to_phase) envelope.pulsetophase = e.connection.to_phase;
  // exactly_once: both endpoints deduplicate by the emitting phase's signature (§10.2).
  if (e.connection.delivery === "exactly_once") envelope.pulsesignature = e.signature;
  envelope.data = data;
  if (!routine(e)) {
    if (!validateEnvelope(envelope)) throw new EnvelopeInvalidError(`connection ${e.connection.id}: the envelope does not match schema/tokens/cloudevents-envelope.v0.1.json: ${describeErrors(validateEnvelope.errors)}`);
    let shapes = validShapes.get(e.connection);
    if (!shapes) validShapes.set(e.connection, (shapes = []));
    // A connection has one emitting loop and phase; a bound keeps a misuse from growing the list.
    if (!knownShape(e) && shapes.length < 64) shapes.push({ loopId: e.loopId, phaseId: e.phaseId, token: e.token.token });
  }
  return Object.freeze(envelope) as unknown as PulseCloudEvent;
}

/**
 * Longest `id`, `source` and workspace (`pulseworkspace`) a receiver takes, in characters: each is
 * remembered (dedupe windows, workspace state), so a sender must not be able to make them huge.
 */
export const ENVELOPE_LIMITS = { id: 256, source: 512, workspace: 256 } as const;

function checkLengths(e: Record<string, unknown>): void {
  for (const [name, attribute] of [["id", "id"], ["source", "source"], ["workspace", EXTENSIONS.workspace]] as const) {
    const v = e[attribute];
    if (typeof v === "string" && v.length > ENVELOPE_LIMITS[name]) throw new EnvelopeInvalidError(`the envelope's ${attribute} is ${v.length} characters long; a receiver takes at most ${ENVELOPE_LIMITS[name]}`);
  }
}

/** Whether an envelope was built (and validated, and frozen) in this process. */
export function builtHere(value: unknown): boolean {
  return typeof value === "object" && value !== null && Object.getPrototypeOf(value) === BUILT && Object.isFrozen(value);
}

/** Validates an arriving envelope and its token; refuses anything else with a clear message. */
export function readEnvelope(value: unknown): PulseCloudEvent {
  if (builtHere(value)) {
    checkLengths(value as Record<string, unknown>);
    return value as PulseCloudEvent;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new EnvelopeInvalidError("a signal must be a CloudEvents envelope (a JSON object)");
  checkLengths(value as Record<string, unknown>);
  if (!validateEnvelope(value)) throw new EnvelopeInvalidError(`the envelope does not match schema/tokens/cloudevents-envelope.v0.1.json: ${describeErrors(validateEnvelope.errors)}`);
  const envelope = value as unknown as PulseCloudEvent;
  const name = (envelope.data as { token?: unknown }).token;
  if (!isTokenName(name)) throw new EnvelopeInvalidError(`the envelope's data is not a canonical token`);
  assertToken(name, envelope.data, `envelope ${envelope.id}`);
  return envelope;
}
