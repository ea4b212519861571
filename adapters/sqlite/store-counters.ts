/**
 * The loop counters in a SQLite store file (store schema version 4): `loops` holds them up to the
 * watermark of finished iterations, and the iteration rows after it carry the rest (their
 * numbers, and whether one ended), so an iteration's start does not rewrite its counters row.
 */
import type { LoopCounters } from "../../src/store/contracts.js";
import type { Statement } from "./driver.js";

/**
 * Moves the watermark of finished iterations up to the first still running (a scan that stops
 * there) and folds the counters of the iterations it passed (all ended) into `loops`.
 */
export function moveFinished(s: Record<string, Statement>, now: string): void {
  const from = (s.finishedValue!.get() as { value: number }).value;
  s.finishedUpTo!.run();
  const to = (s.finishedValue!.get() as { value: number }).value;
  if (to > from) s.foldCounters!.run(now, from, to);
}

/** A loop's counters per workspace: `loops`, then what the iterations after the watermark add. */
export function readCounters(s: Record<string, Statement>, loopId: string): Map<string, LoopCounters> {
  type Row = { workspace_id: string; iterations: number; started: number };
  const out = new Map((s.loadCounters!.all(loopId) as Row[]).map((r) => [r.workspace_id, { iterations: r.iterations, started: r.started === 1 }]));
  for (const r of s.countersAfter!.all(loopId) as Row[]) {
    const c = out.get(r.workspace_id);
    out.set(r.workspace_id, { iterations: Math.max(c?.iterations ?? 0, r.iterations), started: (c?.started ?? false) || r.started === 1 });
  }
  return out;
}
