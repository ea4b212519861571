/**
 * `pulse audit verify` on a PostgreSQL store beyond the chain (src/store/audit-journal.ts): each
 * trace's seq without a gap, and every step the journal committed with its events, read in the
 * workspace's own transaction (row-level security set to it).
 */
import type pg from "pg";
import { TrailCheck, type JournalIteration, type TraceProblem } from "../../src/store/audit-journal.js";

export async function traceProblems(c: pg.ClientBase, t: (table: string) => string, ws: string): Promise<TraceProblem[]> {
  const trails = new TrailCheck();
  const events = await c.query<{ loop_id: string; trace_id: string; seq: number; event_type: string; phase_id: string | null }>(`SELECT loop_id, trace_id, seq, event_type, phase_id FROM ${t("audit_events")} WHERE workspace_id = $1`, [ws]);
  for (const e of events.rows) trails.add({ ...e, workspace_id: ws, seq: Number(e.seq) });
  const byId = new Map<string, JournalIteration>();
  const iterations = await c.query<{ id: string; loop_id: string; trace_id: string; status: string }>(`SELECT id, loop_id, trace_id, status FROM ${t("iterations")} WHERE workspace_id = $1`, [ws]);
  for (const r of iterations.rows) byId.set(String(r.id), { workspace_id: ws, loop_id: r.loop_id, trace_id: r.trace_id, finished: r.status !== "running", phases: [] });
  const phases = await c.query<{ iteration_id: string; phase_id: string; status: string }>(`SELECT iteration_id, phase_id, status FROM ${t("phases")} WHERE workspace_id = $1 ORDER BY id`, [ws]);
  for (const p of phases.rows) byId.get(String(p.iteration_id))?.phases.push({ phase_id: p.phase_id, status: p.status });
  return trails.problems(byId.values());
}
