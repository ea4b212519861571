/**
 * Steering a session from anywhere (`pulse session steer`, REST `POST /api/pulse/:id/steer`, MCP
 * `pulse_steer`): the text is written to the guidance of the session's working directory and
 * recorded there as a plan-invalidating change, so it takes the same pending → ack path as an
 * edit of `.pulse/guidance.md`: the session holds before its next iteration until the agent has
 * replanned and acknowledged. The session's event stream records the steer, and later the ack
 * with the plan's hash.
 */
import type { GuidanceEvent } from "../guidance/events.js";
import { steerInto } from "../guidance/deferred.js";
import { steerBySignal, type SignalSteer } from "../guidance/signal-steer.js";
import { isFinished, type CreatedBy, type SessionRecord, type SessionRecords } from "./records.js";
import { SessionInputError, SessionStateError } from "./service.js";
import { workdirOf } from "./workspace.js";

export const MAX_STEER_CHARS = 20_000;

export interface Steered {
  session: SessionRecord;
  /** The recorded guidance change; null when the steer waits for the session's worktree (deferred). */
  event: GuidanceEvent | null;
  /** The guidance file the text went into (or goes into when the session runs again). */
  file: string;
  /** The session has no working directory now (blocked in its own worktree): the steer is applied when it is resumed. */
  deferred: boolean;
}

export function steerText(text: unknown): string {
  if (typeof text !== "string" || text.trim() === "") throw new SessionInputError("text", "give the guidance to steer the session with, e.g. \"Keep the public API stable\"");
  if (text.length > MAX_STEER_CHARS) throw new SessionInputError("text", `is ${text.length} characters; at most ${MAX_STEER_CHARS}`);
  return text;
}

export async function steerSession(records: SessionRecords, id: string, text: unknown, by: CreatedBy): Promise<Steered> {
  const guidance = steerText(text);
  const s = await records.get(id);
  if (!s) throw new SessionStateError("NOT_FOUND", `no session ${id} (pulse session list shows them)`);
  if (isFinished(s.status)) throw new SessionStateError("FINISHED", `session ${s.id} is ${s.status}: there is nothing left to steer`);
  // A worktree is made when the session starts and removed when it blocks: then the steer waits in
  // the session's events, and the session applies it when it opens its gate again (at resume).
  const r = await steerInto(records, s.id, workdirOf(s), guidance, { session_id: s.id, by });
  return { session: s, ...r };
}

export interface SignalSteered extends Steered {
  /** The signal's id was seen before for this session: nothing was written this time. */
  duplicate: boolean;
}

/** Steers through the same pending → ack path as `steerSession`, once per CloudEvents id (src/coding/guidance/signal-steer.ts). */
export async function steerSessionBySignal(records: SessionRecords, id: string, signal: SignalSteer): Promise<SignalSteered> {
  let session!: SessionRecord;
  const r = await steerBySignal(records, `session:${id}`, signal, steerText(signal.text), async () => {
    const s = await records.get(id);
    if (!s) throw new SessionStateError("NOT_FOUND", `no session ${id} (pulse session list shows them)`);
    session = s;
    return { id: s.id, workdir: workdirOf(s), extra: { session_id: s.id }, ...(isFinished(s.status) ? { refusal: new SessionStateError("FINISHED", `session ${s.id} is ${s.status}: there is nothing left to steer`) } : {}) };
  });
  return { session, ...r };
}
