/**
 * What a runner starting a session finds a dead runner left in flight, and how the run goes on:
 * an iteration the runtime's journal holds interrupted continues there under its number (a turn
 * the crash cut short is dispatched again, what its agent left kept in a recovery commit first);
 * one that never reached its agent runs again from its start; without a journal, it is failed
 * (interrupted) with its leftovers in a recovery commit (docs/decisions.md).
 */
import type { Store } from "../../store/contracts.js";
import { recoveryCommit } from "../worktree.js";
import { SESSION_PHASES } from "./handlers.js";
import { SESSION_LOOP_ID } from "./profile.js";
import type { SessionRecord, SessionRecords } from "./records.js";
import { workdirOf } from "./workspace.js";

/** An iteration of a session the runtime's journal holds interrupted, and where it goes on. */
export interface JournaledIteration {
  number: number;
  /** The phase it continues at (the one the crash cut short), or null when only its end is missing. */
  phase: string | null;
  /** The phases it committed before the crash, which are not run again. */
  committed: string[];
}

/** What resuming found a dead runner left, and how the run goes on from it. */
export interface Recovered {
  note?: string;
  /** The interrupted iteration the journal resumes. */
  journaled?: JournaledIteration;
  /** The iteration number to run again from its start (it never reached its agent). */
  rerun?: number;
  /** The recovery commit of what the interrupted turn's agent left (null: it left nothing). */
  commit?: string | null;
}

/**
 * The iteration a dead runner left in flight. The journal holds it: it goes on from its phases
 * (a turn the crash cut short is dispatched again, what its agent left kept in a recovery commit
 * first). It never reached its agent (still pending): it runs again from its start under its
 * number. Otherwise (no journal): failed (interrupted), its leftovers in a recovery commit.
 */
export async function recoverInterrupted(s: SessionRecord, records: SessionRecords, store: Store | undefined): Promise<Recovered> {
  const journaled = await journaledIteration(s, store);
  if (journaled) {
    const n = journaled.number;
    if (journaled.phase === "dispatch_agent") {
      const sha = await recoveryCommit(workdirOf(s), `session ${s.id}: work left by iteration ${n}, interrupted; its turn is dispatched again`);
      return { journaled, commit: sha, note: `iteration ${n} was interrupted during its agent's turn when its runner stopped${sha ? `; what the agent left is in recovery commit ${sha.slice(0, 8)}` : ""}; the turn is dispatched again as iteration ${n} (${journaled.committed.join(", ")} not run again)` };
    }
    return { journaled, note: `iteration ${n} was interrupted ${journaled.phase ? `at ${journaled.phase}` : "at its end"} when its runner stopped; it goes on there from the journal (${journaled.committed.join(", ")} not run again)` };
  }
  const open = (await records.iterations(s.id)).filter((i) => i.status === "pending" || i.status === "dispatched" || i.status === "running");
  if (open.length === 0) return {};
  const last = open.at(-1)!;
  if (open.length === 1 && last.status === "pending" && last.iteration_number === s.current_iteration) {
    return { rerun: last.iteration_number, note: `iteration ${last.iteration_number} was interrupted before its agent's turn when its runner stopped; it runs again from its start` };
  }
  const sha = await recoveryCommit(workdirOf(s), `session ${s.id}: work left by iteration ${last.iteration_number}, interrupted`);
  for (const i of open) {
    await records.updateIteration(i.id, { status: "failed", error: `interrupted: the runner (process ${s.runner_pid ?? "?"}) stopped during this iteration`, finished_at: new Date().toISOString(), ...(sha ? { commit_hash: sha } : {}) });
  }
  return { note: `iteration ${last.iteration_number} was interrupted when its runner stopped${sha ? `; what it left is in recovery commit ${sha.slice(0, 8)}` : ""}` };
}

/** The session's iteration the runtime's journal holds interrupted (its current one), if any. */
export async function journaledIteration(s: SessionRecord, store: Store | undefined): Promise<JournaledIteration | undefined> {
  if (!store) return undefined;
  const mine = (await store.interrupted(SESSION_LOOP_ID)).filter((i) => i.workspace_id === s.id);
  for (const it of mine.reverse()) {
    // The session's iteration number, as the iteration's input (and every phase's output) carries it.
    if ((it.input as { iteration?: unknown } | null)?.iteration !== s.current_iteration || s.current_iteration < 1) continue;
    const last = it.phases.at(-1);
    const phase = last ? last.next : it.entry;
    return { number: s.current_iteration, phase: phase && SESSION_PHASES.includes(phase as never) ? phase : null, committed: it.phases.map((p) => p.phase_id) };
  }
  return undefined;
}
