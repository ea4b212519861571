/**
 * An iteration whose end was on the wire when the store's connection broke (StoreError.inDoubt)
 * ends as failed, "which one is known once the server answers again". Here the loop finds out:
 * it asks the store what its journal holds of the iteration until the store answers (backing off
 * from 250 ms to 5 s), then says once what it was and corrects the loop's counts.
 */
import type { Store } from "../store/contracts.js";
import type { Clock } from "./clock.js";

const FIRST_MS = 250;
const MAX_MS = 5_000;

/**
 * What the journal holds of the iteration once the store answers: its status, or undefined when
 * nothing of it is there. Rejects when `stop` aborts or the store fails otherwise than by being
 * unreachable (closed, refused): nothing is said then.
 */
export async function readBack(store: Store, clock: Clock, stop: AbortSignal, at: { loopId: string; workspaceId: string; traceId: string }): Promise<{ status: string } | undefined> {
  if (!store.iteration) throw new Error("the store cannot read an iteration back");
  let delay = FIRST_MS;
  for (;;) {
    try {
      return await store.iteration(at.loopId, at.workspaceId, at.traceId);
    } catch (error) {
      if ((error as { code?: unknown }).code !== "STORE_UNAVAILABLE") throw error;
    }
    await clock.sleep(delay, stop);
    delay = Math.min(delay * 2, MAX_MS);
  }
}

export interface DoubtDeps {
  store: Store;
  clock: Clock;
  stop: AbortSignal;
  loopId: string;
  /** Why the workspace's lease is no longer this host's, if so (its next holder resumes). */
  fenced: (workspaceId: string) => string | undefined;
  recount: (from: string, to: string | undefined, closed: boolean) => void;
  emit: (outcome: "committed" | "resumed" | "next_holder" | "lost", message: string, status?: string) => void;
}

/** Reads the in-doubt iteration back once the store answers, and says once what it was. */
export function resolveInDoubt(d: DoubtDeps, r: { workspace_id: string; trace_id: string; status: string; closed: boolean }): void {
  void readBack(d.store, d.clock, d.stop, { loopId: d.loopId, workspaceId: r.workspace_id, traceId: r.trace_id }).then(
    (found) => {
      if (found && found.status !== "running") {
        d.recount(r.status, found.status, r.closed);
        d.emit("committed", `committed after all: its end reached the store before the connection broke (${found.status})`, found.status);
      } else if (!found) {
        d.emit("lost", "not committed: nothing of it reached the store, it stays failed");
      } else {
        // The journal shows it interrupted: it continues as a resumed run, which counts itself.
        d.recount(r.status, undefined, r.closed);
        const fenced = d.fenced(r.workspace_id);
        if (fenced !== undefined) d.emit("next_holder", `not committed: the loop's next lease holder resumes it from the journal (${fenced})`);
        else d.emit("resumed", "not committed: resumed from the journal");
      }
    },
    () => undefined,
  );
}
