/**
 * Steering a loop whose working directory does not exist now (a session blocked in its own
 * worktree, which is removed until it is resumed; a workflow whose worktree is not made yet):
 * the steer is recorded in the loop's event stream as deferred, and applied (written to the
 * guidance of the working directory, so it takes the same pending → ack path) by the loop when
 * it next opens its gate. Each applied steer is recorded too, with the deferred one's seq, so a
 * steer is applied once however often the loop starts.
 */
import { existsSync } from "node:fs";
import type { GuidanceEvent } from "./events.js";
import { GuidanceGate } from "./gate.js";

/** The event stream of a session or a workflow (both records have it). */
export interface SteerLog {
  appendEvents(id: string, events: { at: string; type: string; data: unknown }[]): Promise<number>;
  events(id: string, afterSeq?: number, limit?: number): Promise<{ seq: number; at: string; type: string; data: unknown }[]>;
}

export interface SteerOutcome {
  /** The recorded guidance change; null while the steer is deferred. */
  event: GuidanceEvent | null;
  /** The guidance file the text went into (or will). */
  file: string;
  deferred: boolean;
}

interface SteeredData {
  event_id: string | null;
  text: string;
  deferred?: boolean;
  [key: string]: unknown;
}

/**
 * Writes `text` into the guidance of `workdir` and records `guidance.steered` (with `extra`: who,
 * the loop's id) in `log`; when `workdir` does not exist, records it deferred instead.
 */
export async function steerInto(log: SteerLog, id: string, workdir: string, text: string, extra: Record<string, unknown>): Promise<SteerOutcome> {
  const file = `${workdir}/.pulse/guidance.md`;
  if (!existsSync(workdir)) {
    await log.appendEvents(id, [{ at: new Date().toISOString(), type: "guidance.steered", data: { type: "guidance.steered", ...extra, event_id: null, deferred: true, text, file: ".pulse/guidance.md" } }]);
    return { event: null, file, deferred: true };
  }
  // The loop's own gate keeps `.pulse/` out of its commits (a session through the exclude file, a
  // workflow as an artifact): a steer touches no git configuration.
  const gate = await GuidanceGate.open(workdir, undefined, { gitExclude: false });
  const event = await gate.steer(text);
  await log.appendEvents(id, [{ at: new Date().toISOString(), type: "guidance.steered", data: { type: "guidance.steered", ...extra, event_id: event.id, text, file: event.path, sha256: event.sha256 } }]);
  return { event, file: gate.sidecar.paths.file("guidance.md"), deferred: false };
}

/** Every event of `id` (paged: the stores answer at most a page at a time). */
async function allEvents(log: SteerLog, id: string) {
  const out: Awaited<ReturnType<SteerLog["events"]>> = [];
  for (let after = 0; ; ) {
    const page = await log.events(id, after, 500);
    out.push(...page);
    if (page.length < 500) return out;
    after = page.at(-1)!.seq;
  }
}

/**
 * The deferred steers of `id` not applied yet, applied in the order they were given (each a
 * dated section of guidance.md, dated when it was given) and recorded as `guidance.steer_applied`.
 */
export async function applyDeferredSteers(log: SteerLog, id: string, gate: GuidanceGate, extra: Record<string, unknown>): Promise<GuidanceEvent[]> {
  const events = await allEvents(log, id);
  const applied = new Set(events.filter((e) => e.type === "guidance.steer_applied").map((e) => (e.data as { steer_seq?: number }).steer_seq));
  const waiting = events.filter((e) => e.type === "guidance.steered" && (e.data as SteeredData).deferred === true && !applied.has(e.seq));
  const out: GuidanceEvent[] = [];
  for (const e of waiting) {
    const event = await gate.steer((e.data as SteeredData).text, new Date(e.at));
    out.push(event);
    await log.appendEvents(id, [{ at: new Date().toISOString(), type: "guidance.steer_applied", data: { type: "guidance.steer_applied", ...extra, steer_seq: e.seq, event_id: event.id, sha256: event.sha256 } }]);
  }
  return out;
}
