/**
 * Feedback on action runs (seed 002's schema), kept durably (SQLite in the agent's home, or
 * memory) and idempotent by `actionRunId`: the first feedback on a run is stored and reported
 * once (`feedback_received`); a person's feedback later replaces the system's implicit one; any
 * other repeat changes nothing. Recent feedback re-scores the decider's candidates.
 */
import type { ActionResult, Feedback } from "./types.js";

export type FeedbackStored = "inserted" | "replaced" | "unchanged";

export interface StoredFeedback extends Feedback {
  action: string;
  runId: string;
}

export interface FeedbackStore {
  add(feedback: Feedback, about: { action: string; runId: string }): Promise<FeedbackStored>;
  get(actionRunId: string): Promise<StoredFeedback | undefined>;
  /** The latest `limit` feedbacks, newest first. */
  recent(limit: number): Promise<StoredFeedback[]>;
  close(): Promise<void>;
}

export class FeedbackError extends Error {}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Checks feedback against the seed's schema, naming the first wrong field. */
export function validateFeedback(value: unknown): Feedback {
  const f = value as Record<string, unknown>;
  const fail = (field: string, why: string): never => {
    throw new FeedbackError(`feedback.${field}: ${why}`);
  };
  if (!f || typeof f !== "object" || Array.isArray(f)) fail("(top)", "must be an object");
  if (typeof f.actionRunId !== "string" || !/^[0-9a-f-]{36}$/i.test(f.actionRunId)) fail("actionRunId", "must be the action run's UUID");
  if (typeof f.score !== "number" || f.score < 0 || f.score > 5) fail("score", "must be a number from 0 to 5");
  if (f.signal !== "success" && f.signal !== "partial" && f.signal !== "fail") fail("signal", 'must be "success", "partial" or "fail"');
  if (f.submittedBy !== "user" && f.submittedBy !== "system") fail("submittedBy", 'must be "user" or "system"');
  if (typeof f.ts !== "string" || !ISO.test(f.ts) || Number.isNaN(Date.parse(f.ts))) fail("ts", "must be an ISO-8601 time with its zone (Z or ±hh:mm)");
  for (const k of ["comment", "suggestions"]) if (f[k] !== undefined && typeof f[k] !== "string") fail(k, "must be a string");
  if (f.labels !== undefined && (!Array.isArray(f.labels) || f.labels.some((l) => typeof l !== "string"))) fail("labels", "must be a list of strings");
  return f as unknown as Feedback;
}

/** What replaces what: a person's word over the system's; otherwise the first one stands. */
export function storedOutcome(existing: Feedback | undefined, incoming: Feedback): FeedbackStored {
  if (!existing) return "inserted";
  return existing.submittedBy === "system" && incoming.submittedBy === "user" ? "replaced" : "unchanged";
}

/** Seed 002's implicit feedback: auto mode scores an ok run 4/success; a run with no answer in time gets the neutral 3/partial. */
export function implicitFeedback(result: Pick<ActionResult, "actionRunId" | "status">, kind: "auto" | "neutral", now = new Date()): Feedback {
  if (kind === "neutral") return { actionRunId: result.actionRunId, score: 3, signal: "partial", submittedBy: "system", ts: now.toISOString() };
  return result.status === "ok" ? { actionRunId: result.actionRunId, score: 4, signal: "success", submittedBy: "system", ts: now.toISOString() } : { actionRunId: result.actionRunId, score: 1, signal: "fail", submittedBy: "system", ts: now.toISOString(), comment: "implicit: the action failed" };
}

export interface FeedbackStats {
  n: number;
  mean: number;
}

/** Per action: how many recent feedbacks and their mean score. */
export function feedbackStats(recent: readonly StoredFeedback[]): Map<string, FeedbackStats> {
  const sums = new Map<string, { n: number; total: number }>();
  for (const f of recent) {
    const s = sums.get(f.action) ?? { n: 0, total: 0 };
    s.n++;
    s.total += f.score;
    sums.set(f.action, s);
  }
  return new Map([...sums].map(([k, v]) => [k, { n: v.n, mean: v.total / v.n }]));
}

/**
 * A candidate's score for the decider: its screening rank (1 for the best, falling as 1/rank)
 * plus what feedback says, (mean − 3) / 2 weighted by confidence n / (n + 2): an action that kept
 * failing sinks below one that kept working, and one rating moves it less than five.
 */
export function rescore(rank: number, stats: FeedbackStats | undefined): { screen: number; feedback: number; score: number } {
  const screen = 1 / rank;
  const feedback = stats ? ((stats.mean - 3) / 2) * (stats.n / (stats.n + 2)) : 0;
  return { screen: round(screen), feedback: round(feedback), score: round(screen + feedback) };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
