/**
 * Steering a session from anywhere (`pulse session steer`, REST `POST /api/pulse/:id/steer`, MCP
 * `pulse_steer`): the text is written to the guidance of the session's working directory and
 * recorded there as a plan-invalidating change, so it takes the same pending → ack path as an
 * edit of `.pulse/guidance.md`: the session holds before its next iteration until the agent has
 * replanned and acknowledged. The session's event stream records the steer, and later the ack
 * with the plan's hash.
 */
import { existsSync } from "node:fs";
import type { GuidanceEvent } from "../guidance/events.js";
import { GuidanceGate } from "../guidance/gate.js";
import { isFinished, type CreatedBy, type SessionRecord, type SessionRecords } from "./records.js";
import { SessionInputError, SessionStateError } from "./service.js";
import { workdirOf } from "./workspace.js";
import type { SessionEvent } from "./run-state.js";

export const MAX_STEER_CHARS = 20_000;

export interface Steered {
  session: SessionRecord;
  event: GuidanceEvent;
  /** The guidance file the text went into. */
  file: string;
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
  const workdir = workdirOf(s);
  // A worktree is made when the session starts and removed when it blocks: guidance written then would be lost with it.
  if (!existsSync(workdir)) throw new SessionStateError("NOT_RUNNING", `session ${s.id} has no working directory now (${workdir} is made when it runs): steer it once it runs (pulse session resume ${s.id.slice(0, 8)})`);
  const gate = await GuidanceGate.open(workdir);
  const event = await gate.steer(guidance);
  await records.appendEvents(s.id, [{ at: new Date().toISOString(), type: "guidance.steered", data: { type: "guidance.steered", session_id: s.id, event_id: event.id, by, text: guidance, file: event.path, sha256: event.sha256 } satisfies SessionEvent }]);
  return { session: s, event, file: gate.sidecar.paths.file("guidance.md") };
}
