/**
 * What a host does first when it starts on a store a previous run left: the iterations a crash
 * interrupted continue (the journal says where), each said in one note.
 */
import type { IterationResult } from "../runtime/iteration-result.js";
import type { Loop } from "../runtime/loop.js";

export function resumeInterrupted(loops: readonly Loop[], note: (loopId: string, message: string) => void, track: (loopId: string, workspace: string, running: Promise<IterationResult>) => void, shared = false): void {
  for (const loop of loops) {
    for (const r of loop.interrupted()) {
      // In a fleet the store may be shared: what looks interrupted may be running on a live host
      // right now, so it is left to the fleet's takeover of the loop (which re-runs its tick).
      if (shared) {
        note(loop.id, `not resumed here: ${loop.id} #${r.iteration} at ${r.phase} (in a fleet, the host that holds the loop's lease takes over its unfinished work)`);
        continue;
      }
      note(loop.id, `resumed ${loop.id} #${r.iteration} at ${r.phase}`);
      track(loop.id, r.workspace, loop.resumeInterrupted(r.workspace) as Promise<IterationResult>);
    }
  }
}
