/**
 * The `replan_to_session` connection of `coding.guidance_watch` (manifests/coding/guidance-watch.yaml):
 * a plan-invalidating change recorded by a guidance sidecar, as a SurpriseSignal in its CloudEvents
 * envelope, for a session another process runs (`POST /api/pulse/:id/signal` on `pulse serve`).
 * The CloudEvents id is the ledger event's id, so a retry or a redelivery carries the same id and
 * the receiver steers once. The changed files' text travels as data (`evidence.guidance`): the
 * receiver writes it into the session's guidance, where the next turn reads it quoted as data.
 * Pure functions: building and reading; sending is signal-sender.ts.
 */
import { randomBytes } from "node:crypto";
import { readEnvelope } from "../../connections/envelope.js";
import { TokenInvalidError } from "../../runtime/errors.js";
import { describeErrors, validateEnvelope } from "../../runtime/tokens.js";
import { formatTraceparent, newTraceId } from "../../runtime/trace.js";
import type { PulseCloudEvent, SurpriseSignal } from "../../tokens/types.js";
import { MAX_STEER_CHARS } from "../session/steer.js";
import type { GuidanceEvent } from "./events.js";

export const SIGNAL_CONNECTION = "replan_to_session";
export const SIGNAL_TYPE = "org.opensentience.pulse.SurpriseSignal";
export const SIGNAL_SOURCE = "loop:coding.guidance_watch/phase:track_ack";
/** What the receiver reads as the action that surprised: a guidance change, not a body's action. */
export const GUIDANCE_ACTION = "guidance_change";

export interface ChangedFile {
  path: string;
  kind: GuidanceEvent["kind"];
  sha256: string | null;
  /** The hash the ledger recorded before this change (what the plan was made against). */
  previous_sha256: string | null;
  /** The file's text now (null when deleted). */
  text: string | null;
}

export interface SurpriseInput {
  /** The pending replan event (the latest plan-invalidating one): the envelope's id. */
  event: GuidanceEvent;
  files: ChangedFile[];
  /** The session it is for (the envelope's pulseworkspace). */
  session: string;
  /** The project whose .pulse/ changed, for the audit. */
  root: string;
  now?: Date;
}

const prefixed = (h: string | null) => (h === null ? undefined : `sha256:${h}`);

/** The text the session is steered with: each changed file, labelled; at most MAX_STEER_CHARS. */
export function guidanceText(files: readonly ChangedFile[]): string {
  const text = files.map((f) => (f.text === null ? `${f.path} was deleted.` : `${f.path} now reads:\n\n${f.text.trim()}`)).join("\n\n");
  const note = "\n\n[… cut: the rest is in the guidance sidecar's project]";
  return text.length <= MAX_STEER_CHARS ? text : `${text.slice(0, MAX_STEER_CHARS - note.length)}${note}`;
}

export function surpriseEnvelope(input: SurpriseInput): PulseCloudEvent<SurpriseSignal> {
  const now = input.now ?? new Date();
  const traceId = newTraceId();
  const first = input.files[0];
  const token: SurpriseSignal = {
    token: "SurpriseSignal",
    version: "0.1.1",
    trace_id: traceId,
    action_type: GUIDANCE_ACTION,
    ...(first && prefixed(first.previous_sha256) ? { predicted_state_hash: prefixed(first.previous_sha256)! } : {}),
    ...(first && prefixed(first.sha256) ? { actual_state_hash: prefixed(first.sha256)! } : {}),
    // The plan was made against other guidance: as far from the prediction as it gets.
    surprise_magnitude: 1,
    surprise_kind: "other",
    evidence: {
      guidance_event_id: input.event.id,
      root: input.root,
      files: input.files.map(({ path, kind, sha256, previous_sha256 }) => ({ path, kind, sha256, previous_sha256 })),
      guidance: guidanceText(input.files),
    },
    timestamp: input.event.timestamp,
  };
  const envelope = {
    specversion: "1.0",
    id: input.event.id,
    type: SIGNAL_TYPE,
    source: SIGNAL_SOURCE,
    subject: `trace_id:${traceId}`,
    time: now.toISOString(),
    datacontenttype: "application/json",
    traceparent: formatTraceparent(traceId, randomBytes(8).toString("hex")),
    pulsetoloop: "coding.pulse_session",
    pulsetophase: "build_context",
    pulseworkspace: input.session,
    pulseconnection: SIGNAL_CONNECTION,
    data: token,
  };
  // Built here, checked here: a sender must never put an envelope on the wire that receivers refuse.
  if (!validateEnvelope(envelope)) throw new Error(`the SurpriseSignal envelope is invalid: ${describeErrors(validateEnvelope.errors)}`);
  return envelope as unknown as PulseCloudEvent<SurpriseSignal>;
}

/** What the receiver acts on: the CloudEvents id, the text to steer with and where it came from. */
export interface ReceivedSurprise {
  id: string;
  source: string;
  text: string;
  guidanceEventId: string | null;
  files: unknown;
}

export class SurpriseInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/**
 * Reads an arriving envelope: a valid CloudEvents envelope (schema/tokens/cloudevents-envelope)
 * carrying a valid SurpriseSignal whose evidence quotes the guidance. Throws naming the field.
 */
export function readSurprise(body: unknown): ReceivedSurprise {
  let envelope: PulseCloudEvent;
  try {
    envelope = readEnvelope(body);
  } catch (e) {
    const message = (e as Error).message;
    // describeErrors writes "/surprise_magnitude must be <= 1": the first pointer is the field,
    // relative to the token (data) when the token was refused, else to the envelope.
    const inToken = e instanceof TokenInvalidError;
    const pointer = /json: (\/[^\s;]*) /.exec(message)?.[1] ?? "/";
    const field = [inToken ? "data" : "", ...pointer.split("/").filter(Boolean)].filter(Boolean).join(".");
    throw new SurpriseInputError(field || "envelope", message);
  }
  if (envelope.type !== SIGNAL_TYPE) throw new SurpriseInputError("type", `this endpoint takes ${SIGNAL_TYPE}, not ${JSON.stringify(envelope.type)}`);
  const evidence = (envelope.data as SurpriseSignal).evidence ?? {};
  const text = evidence.guidance;
  if (typeof text !== "string" || text.trim() === "") throw new SurpriseInputError("data.evidence.guidance", "give the changed guidance as text (what the session is steered with)");
  if (text.length > MAX_STEER_CHARS) throw new SurpriseInputError("data.evidence.guidance", `is ${text.length} characters; at most ${MAX_STEER_CHARS}`);
  const gid = evidence.guidance_event_id;
  return { id: envelope.id, source: envelope.source, text, guidanceEventId: typeof gid === "string" ? gid.slice(0, 256) : null, files: evidence.files ?? null };
}
