/**
 * A steer that arrived as a SurpriseSignal (the replan_to_session connection of a guidance
 * sidecar, `POST …/:id/signal` on `pulse serve`), for any loop whose records keep an event
 * stream (sessions, workflows): the same pending → ack path as a steer from the CLI, once per
 * CloudEvents id. The loop's own event stream says which ids it was steered by, so a redelivery
 * (the sender's retry, or after a restart of either side) is answered with the first steer's
 * event, whatever store the loop's records are in.
 */
import { steerInto, type SteerLog, type SteerOutcome } from "./deferred.js";
import type { GuidanceEvent } from "./events.js";

/** The signal as the receiver reads it (src/coding/guidance/surprise.ts readSurprise). */
export interface SignalSteer {
  /** The CloudEvents id: a redelivery carries it again and steers nothing more. */
  id: string;
  source: string;
  text: string;
  guidanceEventId: string | null;
}

/** The loop the signal steers, as its records give it now. */
export interface SteerTarget {
  /** Its id in `log`. */
  id: string;
  workdir: string;
  /** Why it cannot be steered (finished): thrown for a new signal; a redelivery is still answered. */
  refusal?: Error;
  /** What the steer's event records beside the signal (the loop's id field). */
  extra: Record<string, unknown>;
}

export interface SignalSteerOutcome extends SteerOutcome {
  /** The signal's id was seen before for this loop: nothing was written this time. */
  duplicate: boolean;
}

/** Per loop in this process: one signal at a time, so two deliveries of one id cannot both pass the check. */
const queues = new Map<string, Promise<unknown>>();

/** `target` reads the loop (throwing its own not-found); `text` is the signal's text as the loop takes it (checked). */
export async function steerBySignal(log: SteerLog, key: string, signal: SignalSteer, text: string, target: () => Promise<SteerTarget>): Promise<SignalSteerOutcome> {
  const run = async (): Promise<SignalSteerOutcome> => {
    const t = await target();
    const file = `${t.workdir}/.pulse/guidance.md`;
    const seen = await steeredBy(log, t.id, signal.id);
    if (seen) return { event: seen.event, file, deferred: seen.deferred, duplicate: true };
    if (t.refusal) throw t.refusal;
    const r = await steerInto(log, t.id, t.workdir, text, { ...t.extra, by: "signal", signal_id: signal.id, signal_source: signal.source, guidance_event_id: signal.guidanceEventId });
    return { ...r, duplicate: false };
  };
  const next = (queues.get(key) ?? Promise.resolve()).then(run, run);
  const tail = next.catch(() => undefined);
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return next;
}

async function steeredBy(log: SteerLog, id: string, signalId: string): Promise<{ event: GuidanceEvent | null; deferred: boolean } | undefined> {
  for (let after = 0; ; ) {
    const page = await log.events(id, after, 500);
    for (const e of page) {
      const d = e.data as { signal_id?: unknown; event_id?: string | null; deferred?: boolean; sha256?: string; file?: string };
      if (e.type === "guidance.steered" && d.signal_id === signalId) return { event: d.event_id ? ({ id: d.event_id, path: d.file ?? ".pulse/guidance.md", sha256: d.sha256 ?? null } as GuidanceEvent) : null, deferred: d.deferred === true };
    }
    if (page.length < 500) return undefined;
    after = page.at(-1)!.seq;
  }
}
