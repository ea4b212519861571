/**
 * The plan → decide → act agent's data, named as seed 002 names them: plans, decisions, action
 * specs and results, feedback, and the envelope every event of a run's report travels in.
 */

export interface GuideEntry {
  name: string;
  description: string;
  plan: string[];
}

export interface KnowledgeEntry {
  name: string;
  description: string;
  content: string;
  /** Set on what an online search returned (knowledge.online): quoted to the planner as data. */
  origin?: "online";
  url?: string;
}

export type StepStatus = "pending" | "running" | "done" | "blocked" | "failed";

export interface PlanStep {
  id: string;
  desc: string;
  status: StepStatus;
  deps: string[];
}

export interface Plan {
  task: string;
  steps: PlanStep[];
  created_at: string;
  updated_at: string;
}

export type DecisionType = "execute" | "ask" | "wait" | "terminate";

export interface Decision {
  type: DecisionType;
  action?: { name: string; args: Record<string, unknown> };
  reason: string;
  hint?: "continue" | "terminate" | "blocked";
  /** The plan step the decision works on, when it names one. */
  step?: string;
}

export interface ActionArgument {
  name: string;
  type: "string" | "number" | "integer" | "boolean" | "object" | "array";
  description?: string;
  required?: boolean;
}

export interface ActionSpec {
  name: string;
  description: string;
  arguments: ActionArgument[];
  timeout_sec: number;
  tags: string[];
  /** Where it lives and how it runs: a seed action (`perform.js`) or an Agent Skills folder (`SKILL.md` + scripts/). */
  dir: string;
  layout: "perform" | "skill";
  /** For skills: the script run (relative to dir). */
  entry?: string;
}

export type ActionStatus = "ok" | "error";

export interface ActionResult {
  actionRunId: string;
  name: string;
  status: ActionStatus;
  result: string;
  data?: unknown;
  error?: string | null;
  logs: string[];
  stdout: string;
  stderr: string;
  /** How the process ended: exited, timeout (SIGTERM then SIGKILL on its group), invalid (never started), declined. */
  ended: "exited" | "timeout" | "invalid" | "declined" | "aborted" | "spawn_error";
  exit?: { code: number | null; signal: string | null };
  /** How far the network was off: a network namespace, the in-process guard (Node actions), allowed (tagged `network`), unenforced (a non-Node script where namespaces are unavailable), or none (it never started). */
  network: "namespace" | "guard" | "allowed" | "unenforced" | "none";
  durationMs: number;
}

export interface Feedback {
  actionRunId: string;
  score: number;
  signal: "success" | "partial" | "fail";
  comment?: string;
  labels?: string[];
  suggestions?: string;
  submittedBy: "user" | "system";
  ts: string;
}

export interface Advisory {
  status: "continue" | "terminate" | "blocked";
  reason: "goal_achieved" | "impossible" | "exhausted" | "error" | "in_progress" | "timeout" | "quota";
}

export const ENVELOPE_TYPES = [
  "user_request",
  "plan_built",
  "plan_updated",
  "decision",
  "action_started",
  "action_result",
  "feedback_received",
  "progress_evaluated",
  "task_interrupted",
  "run_started",
  "run_summary",
  "run_finished",
] as const;
export type EnvelopeType = (typeof ENVELOPE_TYPES)[number];

/** One event of a run, as the report (JSONL) and the audit trail hold it. */
export interface Envelope {
  type: EnvelopeType;
  id: string;
  ts: string;
  payload: Record<string, unknown>;
}

/** Seed 002's backpressure rule: what may be dropped when the writer is congested, first to last. */
export const DROPPABLE: readonly EnvelopeType[] = ["plan_updated", "run_summary"];
export const NEVER_DROP: readonly EnvelopeType[] = ["decision", "action_result", "feedback_received", "progress_evaluated", "run_finished"];

export type RunStatus = "succeeded" | "failed" | "timeout" | "blocked" | "aborted";
