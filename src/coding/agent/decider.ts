/**
 * The decider (seed 002): chooses the next step (execute | ask | wait | terminate) consistent
 * with the plan and its progress, among candidate actions ranked by screening and re-scored by
 * recent feedback. One structured LLM call; an action it names must be one of the candidates
 * (the schema says so, so a wrong name is retried once with the error, then the step fails).
 */
import { generateStructured, type Llm } from "./llm.js";
import { currentStep, progressOf } from "./planner.js";
import type { Advisory, Decision, Plan } from "./types.js";

export interface Candidate {
  name: string;
  description: string;
  tags: string[];
  arguments: { name: string; type: string; required?: boolean; description?: string }[];
  /** 1/rank of screening, the feedback adjustment, and their sum (what the candidates are ordered by). */
  screen: number;
  feedback: number;
  score: number;
  recent?: { n: number; mean: number };
}

export function decisionSchema(names: readonly string[]) {
  return {
    type: "object",
    required: ["type", "reason"],
    properties: {
      type: { enum: ["execute", "ask", "wait", "terminate"] },
      action: { type: "object", required: ["name", "args"], properties: { name: names.length ? { enum: [...names] } : { type: "string" }, args: { type: "object" } } },
      reason: { type: "string" },
      hint: { enum: ["continue", "terminate", "blocked"] },
      step: { type: "string" },
      question: { type: "string" },
    },
    if: { properties: { type: { const: "execute" } } },
    then: { required: ["action"] },
  } as const;
}

export function decidePrompt(plan: Plan, candidates: readonly Candidate[], advisory: Advisory | undefined, observations: readonly string[]): string {
  const p = progressOf(plan);
  const next = currentStep(plan);
  return [
    "You are the decider of an agent. Choose the next step: execute one action, ask the user, wait, or terminate.",
    `Task: ${plan.task}`,
    `Plan (${p.done}/${p.total} done):\n${plan.steps.map((s) => `- [${s.status}] ${s.id}: ${s.desc}${s.deps.length ? ` (after ${s.deps.join(", ")})` : ""}`).join("\n")}`,
    next ? `Next open step: ${next.id}` : "No open step is reachable.",
    advisory ? `Planner advisory: ${advisory.status} (${advisory.reason})` : "",
    observations.length ? `What happened so far:\n${observations.slice(-8).map((o) => `- ${o}`).join("\n")}` : "",
    `Candidate actions, best first (score = screening + recent feedback):\n${candidates.map((c) => `- ${c.name} [score ${c.score}${c.recent ? `, feedback ${c.recent.mean.toFixed(1)}/5 over ${c.recent.n}` : ""}${c.tags.length ? `, tags ${c.tags.join(",")}` : ""}]: ${c.description}; args: ${c.arguments.map((a) => `${a.name}:${a.type}${a.required ? "" : "?"}`).join(", ") || "none"}`).join("\n") || "(none)"}`,
    'Set "step" to the plan step the action works on. Terminate when the task is done (hint "terminate") or cannot be done (hint "blocked").',
  ]
    .filter(Boolean)
    .join("\n\n");
}

export async function decide(
  llm: Llm,
  c: { plan: Plan; candidates: Candidate[]; advisory?: Advisory; observations: string[]; iteration: number; temperature?: number; think?: boolean; timeoutMs?: number; maxTokens?: number; signal?: AbortSignal },
): Promise<{ decision: Decision & { question?: string }; thinkSupported?: boolean; attempts: number; usage: { inputTokens: number; outputTokens: number } }> {
  const r = await generateStructured<Decision & { question?: string }>(
    llm,
    { role: "decider", prompt: decidePrompt(c.plan, c.candidates, c.advisory, c.observations), iteration: c.iteration, ...(c.temperature !== undefined ? { temperature: c.temperature } : {}), ...(c.think ? { think: true } : {}), ...(c.timeoutMs ? { timeoutMs: c.timeoutMs } : {}), ...(c.maxTokens ? { maxTokens: c.maxTokens } : {}), ...(c.signal ? { signal: c.signal } : {}) },
    decisionSchema(c.candidates.map((x) => x.name)),
  );
  const d = r.value;
  const decision: Decision & { question?: string } = { type: d.type, reason: d.reason, ...(d.action ? { action: { name: d.action.name, args: d.action.args ?? {} } } : {}), ...(d.hint ? { hint: d.hint } : {}), ...(d.step ? { step: d.step } : {}), ...(d.question ? { question: d.question } : {}) };
  return { decision, attempts: r.attempts, usage: r.usage, ...(r.thinkSupported !== undefined ? { thinkSupported: r.thinkSupported } : {}) };
}
