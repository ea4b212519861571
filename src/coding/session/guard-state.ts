/**
 * What a session's guard (src/coding/progress-breaker.ts) starts from: its own budgets, and on a
 * resume what its earlier runs counted (iterations, breaker, the time its turns took).
 */
import { streaksOf, type IterationReport, type Stop, type Streaks } from "../progress-breaker.js";
import type { IterationRecord, SessionRecord } from "./records.js";

/**
 * The guard's state a resumed session starts from: the iterations it ran count against its
 * limit, and a session the breaker stopped (no progress, the same error) is resumed half-open:
 * the person's resume stands for the cool-down, but one more iteration without progress stops it
 * again at once (docs/decisions.md).
 */
export function guardRestored(s: Pick<SessionRecord, "current_iteration" | "stop_reason" | "status_reason" | "status">): { iterations: number; breaker?: "HALF_OPEN"; openReason?: string } {
  const tripped = (s.status === "failed" || s.status === "paused") && (s.stop_reason === "no_progress" || s.stop_reason === "circuit_open");
  return { iterations: s.current_iteration, ...(tripped ? { breaker: "HALF_OPEN" as const, ...(s.status_reason ? { openReason: s.status_reason } : {}) } : {}) };
}

/** The session's own budgets; those it leaves out stay the profile's. */
export function guardBudgets(s: SessionRecord): { maxCostUsd?: number; maxTokens?: number; maxWallMs?: number } {
  return { ...(s.max_cost_usd !== null ? { maxCostUsd: s.max_cost_usd } : {}), ...(s.max_tokens !== null ? { maxTokens: s.max_tokens } : {}), ...(s.max_wall_ms !== null ? { maxWallMs: s.max_wall_ms } : {}) };
}

/** The time the session's turns took in earlier runs: what its wall-time cap is counted from on a resume. */
export function turnTime(iterations: { started_at: string; finished_at: string | null }[]): number {
  let ms = 0;
  for (const i of iterations) if (i.finished_at) ms += Math.max(0, Date.parse(i.finished_at) - Date.parse(i.started_at));
  return ms;
}

/**
 * The breaker's streaks (no progress, failures, the same error in a row) as the session's finished
 * turns left them, so that a resume, after a crash or a pause, goes on counting where the run
 * stood instead of from zero (docs/decisions.md). A turn made progress when it left a commit or
 * changed files; an unfinished or rate-limited turn counts for nothing, as it did not for the guard.
 */
export function guardStreaks(iterations: readonly Pick<IterationRecord, "iteration_number" | "status" | "signal" | "error" | "commit_hash" | "files_changed">[]): Streaks {
  const turns: IterationReport[] = [];
  for (const i of [...iterations].sort((a, b) => a.iteration_number - b.iteration_number)) {
    const base = { tokens: 0, costUsd: 0 };
    if (i.status === "complete" || i.status === "rejected") turns.push({ ...base, status: "ok", progress: i.commit_hash !== null || i.files_changed.length > 0, ...(i.signal && i.status === "complete" ? { signal: i.signal } : {}) });
    else if (i.status === "failed" || i.status === "timeout") turns.push({ ...base, status: i.status === "timeout" ? "timeout" : "error", progress: false, ...(i.error !== null ? { error: i.error } : {}) });
  }
  return streaksOf(turns);
}

/**
 * The stop iteration `number`'s own signal decided, as its record keeps it: a COMPLETE the checks
 * did not refuse ends the session complete (refused for good, blocked with what is unresolved),
 * a BLOCKED ends it blocked. What a runner killed between the iteration's end and the session's
 * record of it would otherwise run another turn after.
 */
export function endedBySignal(iterations: readonly Pick<IterationRecord, "iteration_number" | "status" | "signal" | "signal_reason" | "gate" | "finished_at">[], number: number): Stop | undefined {
  const last = iterations.find((i) => i.iteration_number === number && i.finished_at !== null);
  if (!last || last.status !== "complete") return undefined;
  if (last.signal === "COMPLETE") {
    if (last.gate && !last.gate.passed) return { reason: "blocked", message: last.signal_reason ?? "completed with unresolved issues: the checks still fail" };
    return { reason: "completed", message: last.signal_reason ?? "the agent signalled COMPLETE" };
  }
  if (last.signal === "BLOCKED") return { reason: "blocked", message: last.signal_reason ?? "the agent signalled BLOCKED" };
  return undefined;
}
