/**
 * One iteration of an agent run as its step record, folded from the events the iteration
 * emitted (pure): the plan step it worked on, the decision, the action and its result, the
 * feedback, the advisory and the tokens its model calls used.
 */
import type { AgentStepRecord } from "./run-records.js";
import type { Envelope, Plan } from "./types.js";

const RESULT_MAX = 2000;
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

export function stepRecordOf(runId: string, number: number, events: readonly Envelope[], plan: Plan | null, startedAt: string, finishedAt: string): AgentStepRecord {
  const step: AgentStepRecord = { run_id: runId, number, plan_step: null, decision: null, action: null, action_run_id: null, args: null, action_status: null, result: null, feedback: null, advisory_status: null, advisory_reason: null, progress: null, tokens_used: 0, started_at: startedAt, finished_at: finishedAt };
  let stepId: string | null = null;
  for (const e of events) {
    const p = e.payload;
    const u = p.usage as { inputTokens?: unknown; outputTokens?: unknown } | undefined;
    if (u && typeof u.inputTokens === "number" && typeof u.outputTokens === "number") step.tokens_used += u.inputTokens + u.outputTokens;
    if (e.type === "plan_built" || e.type === "plan_updated") plan = (p.plan as Plan | undefined) ?? plan;
    if (e.type === "decision") {
      const d = p.decision as { type?: unknown; reason?: unknown; action?: { name?: unknown; args?: unknown } } | undefined;
      step.decision = { type: str(d?.type) ?? "unknown", reason: str(d?.reason) };
      if (d?.action && typeof d.action.name === "string") step.action = d.action.name;
      if (d?.action?.args && typeof d.action.args === "object") step.args = d.action.args as Record<string, unknown>;
    }
    if (e.type === "action_started") {
      step.action = str(p.name) ?? step.action;
      step.action_run_id = str(p.actionRunId);
      if (p.args && typeof p.args === "object") step.args = p.args as Record<string, unknown>;
    }
    if (e.type === "action_result") {
      step.action = str(p.name) ?? step.action;
      step.action_run_id = str(p.actionRunId) ?? step.action_run_id;
      step.action_status = str(p.status);
      const text = step.action_status === "ok" ? p.result : (p.error ?? p.result);
      step.result = text === undefined || text === null ? null : (typeof text === "string" ? text : JSON.stringify(text)).slice(0, RESULT_MAX);
    }
    if (e.type === "feedback_received") {
      const f = p.feedback as { score?: unknown; signal?: unknown; submittedBy?: unknown } | undefined;
      if (typeof f?.score === "number") step.feedback = { score: f.score, signal: str(f.signal) ?? "?", submittedBy: str(f.submittedBy) ?? "?" };
    }
    if (e.type === "progress_evaluated") {
      step.advisory_status = str(p.status);
      step.advisory_reason = str(p.reason);
      stepId = str(p.step);
      const pr = p.progress as { done?: unknown; total?: unknown } | undefined;
      if (typeof pr?.done === "number" && typeof pr.total === "number") step.progress = { done: pr.done, total: pr.total };
    }
  }
  const planStep = stepId ? plan?.steps.find((s) => s.id === stepId) : undefined;
  step.plan_step = planStep ? `${planStep.id} ${planStep.desc}` : stepId;
  return step;
}
