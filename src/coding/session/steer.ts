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

/** A steer that arrived as a SurpriseSignal (the replan_to_session connection of a guidance sidecar). */
export interface SignalSteer {
  /** The CloudEvents id: a redelivery carries it again and steers nothing more. */
  id: string;
  source: string;
  text: string;
  guidanceEventId: string | null;
}

export interface SignalSteered extends Steered {
  /** The signal's id was seen before for this session: nothing was written this time. */
  duplicate: boolean;
}

/** Per session in this process: one signal at a time, so two deliveries of one id cannot both pass the check. */
const signalQueues = new Map<string, Promise<unknown>>();

/**
 * Steers through the same pending → ack path as `steerSession`, once per CloudEvents id: the
 * session's own event stream says which ids it was steered by, so a redelivery (the sender's
 * retry, or after a restart of either side) is answered with the first steer's event.
 */
export async function steerSessionBySignal(records: SessionRecords, id: string, signal: SignalSteer): Promise<SignalSteered> {
  const run = async (): Promise<SignalSteered> => {
    const s = await records.get(id);
    if (!s) throw new SessionStateError("NOT_FOUND", `no session ${id} (pulse session list shows them)`);
    const seen = await steeredBy(records, s.id, signal.id);
    if (seen) return { session: s, event: seen.event, file: `${workdirOf(s)}/.pulse/guidance.md`, deferred: seen.deferred, duplicate: true };
    if (isFinished(s.status)) throw new SessionStateError("FINISHED", `session ${s.id} is ${s.status}: there is nothing left to steer`);
    const r = await steerInto(records, s.id, workdirOf(s), steerText(signal.text), { session_id: s.id, by: "signal", signal_id: signal.id, signal_source: signal.source, guidance_event_id: signal.guidanceEventId });
    return { session: s, ...r, duplicate: false };
  };
  const next = (signalQueues.get(id) ?? Promise.resolve()).then(run, run);
  const tail = next.catch(() => undefined);
  signalQueues.set(id, tail);
  void tail.then(() => {
    if (signalQueues.get(id) === tail) signalQueues.delete(id);
  });
  return next;
}

async function steeredBy(records: SessionRecords, id: string, signalId: string): Promise<{ event: GuidanceEvent | null; deferred: boolean } | undefined> {
  for (let after = 0; ; ) {
    const page = await records.events(id, after, 500);
    for (const e of page) {
      const d = e.data as { signal_id?: unknown; event_id?: string | null; deferred?: boolean; sha256?: string; file?: string };
      if (e.type === "guidance.steered" && d.signal_id === signalId) return { event: d.event_id ? ({ id: d.event_id, path: d.file ?? ".pulse/guidance.md", sha256: d.sha256 ?? null } as GuidanceEvent) : null, deferred: d.deferred === true };
    }
    if (page.length < 500) return undefined;
    after = page.at(-1)!.seq;
  }
}
