/**
 * A run's report turned into one summary (seed 002's `merge_report`): for dashboards and CI.
 * The summary depends on the set of events only, never on their order or on duplicates: events
 * are deduplicated by id and folded in (ts, id) order, so reports merged from several files, or
 * a file read twice, give the same summary.
 */
import type { Envelope, EnvelopeType } from "./types.js";

export interface ActionSummary {
  actionRunId: string;
  name: string;
  status: string;
  ended?: string;
  durationMs?: number;
  feedback?: { score: number; signal: string; submittedBy: string };
}

export interface RunSummary {
  runId: string | null;
  request: string | null;
  mode: string | null;
  status: string | null;
  reason: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  events: number;
  counts: Partial<Record<EnvelopeType, number>>;
  decisions: Record<string, number>;
  actions: ActionSummary[];
  actionsOk: number;
  actionsFailed: number;
  meanFeedbackScore: number | null;
  plan: { steps: number; done: number; blocked: number } | null;
  lastAdvisory: { status: string; reason: string } | null;
  thinkSupported: boolean | null;
  /** Model tokens of the plan and the decisions, input + output. */
  tokens: number;
  dropped: Record<string, number>;
}

function byTime(a: Envelope, b: Envelope): number {
  return a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

export function summarize(events: readonly Envelope[]): RunSummary {
  const unique = new Map<string, Envelope>();
  // The same id twice is the same event: keep the first in (ts, id, content) order so duplicates with different content cannot make order matter.
  for (const e of events) {
    const had = unique.get(e.id);
    if (!had || JSON.stringify(e) < JSON.stringify(had)) unique.set(e.id, e);
  }
  const sorted = [...unique.values()].sort(byTime);
  const s: RunSummary = { runId: null, request: null, mode: null, status: null, reason: null, startedAt: null, finishedAt: null, durationMs: null, events: sorted.length, counts: {}, decisions: {}, actions: [], actionsOk: 0, actionsFailed: 0, meanFeedbackScore: null, plan: null, lastAdvisory: null, thinkSupported: null, tokens: 0, dropped: {} };
  const actions = new Map<string, ActionSummary>();
  const feedback = new Map<string, ActionSummary["feedback"]>();
  for (const e of sorted) {
    const p = e.payload ?? {};
    s.counts[e.type] = (s.counts[e.type] ?? 0) + 1;
    const u = p.usage as { inputTokens?: unknown; outputTokens?: unknown } | undefined;
    if (u && typeof u.inputTokens === "number" && typeof u.outputTokens === "number") s.tokens += u.inputTokens + u.outputTokens;
    switch (e.type) {
      case "run_started":
        s.runId ??= str(p.runId);
        s.startedAt ??= e.ts;
        s.mode ??= str(p.mode);
        break;
      case "user_request":
        s.request ??= str(p.text);
        break;
      case "plan_built":
      case "plan_updated": {
        const steps = (p.plan as { steps?: { status?: string }[] } | undefined)?.steps;
        if (Array.isArray(steps)) s.plan = { steps: steps.length, done: steps.filter((x) => x?.status === "done").length, blocked: steps.filter((x) => x?.status === "blocked" || x?.status === "failed").length };
        break;
      }
      case "decision": {
        const t = str((p.decision as { type?: unknown } | undefined)?.type) ?? "unknown";
        s.decisions[t] = (s.decisions[t] ?? 0) + 1;
        if (typeof p.thinkSupported === "boolean") s.thinkSupported = s.thinkSupported === false ? false : p.thinkSupported;
        break;
      }
      case "action_started": {
        const id = str(p.actionRunId);
        if (id && !actions.has(id)) actions.set(id, { actionRunId: id, name: str(p.name) ?? "?", status: "running" });
        break;
      }
      case "action_result": {
        const id = str(p.actionRunId);
        if (!id) break;
        const a = actions.get(id) ?? { actionRunId: id, name: str(p.name) ?? "?", status: "running" };
        a.status = str(p.status) ?? "?";
        const ended = str(p.ended);
        if (ended) a.ended = ended;
        if (typeof p.durationMs === "number") a.durationMs = p.durationMs;
        actions.set(id, a);
        break;
      }
      case "feedback_received": {
        const f = p.feedback as { actionRunId?: unknown; score?: unknown; signal?: unknown; submittedBy?: unknown } | undefined;
        const id = str(f?.actionRunId);
        if (id && typeof f?.score === "number" && !feedback.has(id)) feedback.set(id, { score: f.score, signal: str(f.signal) ?? "?", submittedBy: str(f.submittedBy) ?? "?" });
        break;
      }
      case "progress_evaluated":
        s.lastAdvisory = { status: str(p.status) ?? "?", reason: str(p.reason) ?? "?" };
        break;
      case "run_finished":
        s.status = str(p.status);
        s.reason = str(p.reason);
        s.finishedAt = e.ts;
        for (const [k, v] of Object.entries((p.dropped as Record<string, unknown>) ?? {})) if (typeof v === "number") s.dropped[k] = (s.dropped[k] ?? 0) + v;
        break;
      default:
        break;
    }
  }
  s.actions = [...actions.values()].sort((a, b) => (a.actionRunId < b.actionRunId ? -1 : 1));
  for (const a of s.actions) {
    const f = feedback.get(a.actionRunId);
    if (f) a.feedback = f;
  }
  s.actionsOk = s.actions.filter((a) => a.status === "ok").length;
  s.actionsFailed = s.actions.filter((a) => a.status === "error").length;
  const scores = [...feedback.values()].map((f) => f!.score);
  s.meanFeedbackScore = scores.length ? Math.round((scores.reduce((x, y) => x + y, 0) / scores.length) * 1000) / 1000 : null;
  if (s.startedAt && s.finishedAt) s.durationMs = Date.parse(s.finishedAt) - Date.parse(s.startedAt);
  return s;
}

/** Several reports (or pieces of one) as one summary: the same whatever the order they come in. */
export function mergeReports(...reports: readonly (readonly Envelope[])[]): RunSummary {
  return summarize(reports.flat());
}
