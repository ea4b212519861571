/**
 * What a host does first when it starts on a store a previous run left: the iterations a crash
 * interrupted continue (the journal says where), each said in one note. A host in a fleet does
 * not: the store is shared, and what looks interrupted may be running on a live host right now;
 * it resumes, on gaining a loop's lease, what the journal then shows for it (Host.takeOver).
 */
import type { IterationResult } from "../runtime/iteration-result.js";
import type { Loop } from "../runtime/loop.js";

export function resumeInterrupted(loops: readonly Loop[], note: (loopId: string, message: string) => void, track: (loopId: string, workspace: string, running: Promise<IterationResult>) => void): void {
  for (const loop of loops) {
    for (const r of loop.interrupted()) {
      note(loop.id, `resumed ${loop.id} #${r.iteration} at ${r.phase}`);
      track(loop.id, r.workspace, loop.resumeInterrupted(r.workspace) as Promise<IterationResult>);
    }
  }
}

/** What a takeover resumes: the periodic ticks (ms) of the resumed iteration, and its end. */
export interface TakenOver {
  ticks: number[];
  finished: Promise<unknown>;
}

/**
 * A host gained the fleet lease of `loop` in `workspace`: the journal is read again for it
 * (counters, memory graphs, the iteration the previous holder left interrupted) and that
 * iteration continues here at the phase after its last committed one, same trace, before
 * anything new of the loop and workspace runs (Loop.takeOver). Resolves once the store was read.
 */
export function takeOver(loop: Loop, workspace: string, note: (message: string) => void, track: (running: Promise<IterationResult>) => Promise<IterationResult>): Promise<TakenOver> {
  let found!: (ticks: number[]) => void;
  const read = new Promise<number[]>((r) => (found = r));
  const running = loop.takeOver(workspace, (r) => {
    note(`resumed ${loop.id} #${r.iteration} at ${r.phase}: taken over from the journal`);
    found(tickOf(r.cause));
  });
  running.then(
    () => found([]),
    () => found([]),
  );
  const finished = track(running as Promise<IterationResult>).catch(() => undefined);
  return read.then((ticks) => ({ ticks, finished }));
}

/** The periodic tick (ms) an iteration's recorded cause belongs to, if it does. */
function tickOf(cause: unknown): number[] {
  const at = Date.parse(String((cause as { scheduled_at?: unknown } | undefined)?.scheduled_at));
  return Number.isFinite(at) ? [at] : [];
}

/**
 * An iteration whose end was in doubt turned out not committed once the store answered (the
 * runtime's `iteration.resolved`, outcome `resumed`): it continues here from the journal.
 */
export function resumeNotCommitted(loop: Loop | undefined, workspace: string, note: (message: string) => void, track: (running: Promise<IterationResult>) => Promise<IterationResult>): void {
  if (!loop) return;
  const running = loop.resumeFromJournal(workspace, (r) => note(`resumed ${loop.id} #${r.iteration} at ${r.phase}: its end was not committed`));
  void track(running as Promise<IterationResult>).catch(() => undefined);
}
