/**
 * The planner (seed 002): builds the plan from the request and the screened guides and
 * knowledge (one structured LLM call), and after each step updates it from the result, a pure
 * function that also gives the advisory (continue | terminate | blocked, with its reason).
 */
import { generateStructured, type Llm } from "./llm.js";
import { quotedOnline } from "./retrieval/online.js";
import type { ActionResult, Advisory, Decision, GuideEntry, KnowledgeEntry, Plan, PlanStep } from "./types.js";

export const PLAN_SCHEMA = {
  type: "object",
  required: ["steps"],
  properties: {
    steps: {
      type: "array",
      minItems: 1,
      maxItems: 20,
      items: { type: "object", required: ["desc"], properties: { id: { type: "string" }, desc: { type: "string", minLength: 1 }, deps: { type: "array", items: { type: "string" } } } },
    },
  },
} as const;

export interface PlanCall {
  request: string;
  files: string[];
  guides: GuideEntry[];
  knowledge: KnowledgeEntry[];
  actions: { name: string; description: string }[];
  temperature?: number;
  think?: boolean;
  timeoutMs?: number;
  maxTokens?: number;
  iteration: number;
  signal?: AbortSignal;
  /** The guidance changed: what changed (quoted as data) and the plan it invalidates. */
  replan?: { changed: string[]; previous: Plan | null };
}

export function planPrompt(c: Pick<PlanCall, "request" | "files" | "guides" | "knowledge" | "actions" | "replan">): string {
  const guides = c.guides.map((g) => `- ${g.name}: ${g.description}\n${g.plan.map((s, i) => `  ${i + 1}. ${s}`).join("\n")}`).join("\n");
  const knowledge = c.knowledge.filter((k) => k.origin !== "online").map((k) => `- ${k.name}: ${k.description}\n  ${k.content}`).join("\n");
  const online = quotedOnline(c.knowledge.filter((k) => k.origin === "online"));
  return [
    "You are the planner of an agent that acts only through the actions listed below.",
    `Request: ${c.request}`,
    c.files.length ? `Files given with the request: ${c.files.join(", ")}` : "",
    guides ? `Guides that may fit:\n${guides}` : "",
    knowledge ? `Knowledge:\n${knowledge}` : "",
    online,
    `Actions available:\n${c.actions.map((a) => `- ${a.name}: ${a.description}`).join("\n") || "(none)"}`,
    ...(c.replan
      ? [
          "The guidance for this request changed while the previous plan ran: plan again under it.",
          ...c.replan.changed,
          c.replan.previous ? `The previous plan (its done steps are done; do not repeat them):\n${c.replan.previous.steps.map((x) => `- [${x.status}] ${x.desc}`).join("\n")}` : "",
          "Write a short plan of what is left to do under the new guidance: the steps in order, each one thing an action can do.",
        ]
      : ["Write a short plan: the steps in order, each one thing an action can do."]),
  ]
    .filter(Boolean)
    .join("\n\n");
}

/** The plan as `.pulse/plan.md` holds it: what the guidance sidecar hashes when the replan is acknowledged. */
export function planMarkdown(plan: Plan): string {
  return `# Plan\n\n${plan.task}\n\n${plan.steps.map((s, i) => `${i + 1}. [${s.status}] ${s.desc}`).join("\n")}\n`;
}

export function planFrom(task: string, steps: { id?: string; desc: string; deps?: string[] }[], now: Date): Plan {
  const ids = steps.map((s, i) => s.id && s.id.trim() ? s.id.trim() : `s${i + 1}`);
  const unique = ids.map((id, i) => (ids.indexOf(id) === i ? id : `s${i + 1}`));
  const known = new Set(unique);
  const at = now.toISOString();
  return { task, steps: steps.map((s, i) => ({ id: unique[i]!, desc: s.desc, status: "pending", deps: (s.deps ?? []).filter((d) => known.has(d) && d !== unique[i]) })), created_at: at, updated_at: at };
}

export async function buildPlan(llm: Llm, c: PlanCall, now = new Date()): Promise<{ plan: Plan; thinkSupported?: boolean; attempts: number; usage: { inputTokens: number; outputTokens: number } }> {
  const r = await generateStructured<{ steps: { id?: string; desc: string; deps?: string[] }[] }>(
    llm,
    { role: "planner", prompt: planPrompt(c), iteration: c.iteration, ...(c.temperature !== undefined ? { temperature: c.temperature } : {}), ...(c.think ? { think: true } : {}), ...(c.timeoutMs ? { timeoutMs: c.timeoutMs } : {}), ...(c.maxTokens ? { maxTokens: c.maxTokens } : {}), ...(c.signal ? { signal: c.signal } : {}) },
    PLAN_SCHEMA,
  );
  return { plan: planFrom(c.request, r.value.steps, now), attempts: r.attempts, usage: r.usage, ...(r.thinkSupported !== undefined ? { thinkSupported: r.thinkSupported } : {}) };
}

const OPEN = new Set(["pending", "running", "failed"]);

/** The step a decision works on: the one it names, else the first open step whose dependencies are done. */
export function currentStep(plan: Plan, named?: string): PlanStep | undefined {
  const byId = new Map(plan.steps.map((s) => [s.id, s]));
  if (named && byId.has(named) && OPEN.has(byId.get(named)!.status)) return byId.get(named);
  return plan.steps.find((s) => OPEN.has(s.status) && s.deps.every((d) => byId.get(d)?.status === "done"));
}

export interface Progress {
  total: number;
  done: number;
  blocked: number;
  open: number;
}

export function progressOf(plan: Plan): Progress {
  const done = plan.steps.filter((s) => s.status === "done").length;
  const blocked = plan.steps.filter((s) => s.status === "blocked").length;
  return { total: plan.steps.length, done, blocked, open: plan.steps.length - done - blocked };
}

/**
 * Seed 002's `updateFromAction`: the step the action worked on becomes done (ok), failed (an
 * error: it may be tried again) or blocked (declined, or its arguments refused); the run goes on
 * while a step is open and reachable, ends `goal_achieved` when the decider says terminate or
 * every step is done, and `impossible` when what is left cannot be reached.
 */
export function updateFromAction(plan: Plan, decision: Decision, result: ActionResult | null, now = new Date()): { advisory: Advisory; updatedPlan: Plan; step?: string } {
  if (decision.type === "terminate") {
    const blocked = decision.hint === "blocked";
    return { advisory: { status: "terminate", reason: blocked ? "impossible" : "goal_achieved" }, updatedPlan: plan };
  }
  let updated = plan;
  let stepId: string | undefined;
  if (decision.type === "execute" && result) {
    const step = currentStep(plan, decision.step);
    if (step) {
      stepId = step.id;
      const status: PlanStep["status"] = result.status === "ok" ? "done" : result.ended === "declined" || result.ended === "invalid" ? "blocked" : "failed";
      updated = { ...plan, steps: plan.steps.map((s) => (s.id === step.id ? { ...s, status } : s)), updated_at: now.toISOString() };
    }
  }
  const p = progressOf(updated);
  if (p.total > 0 && p.done === p.total) return { advisory: { status: "terminate", reason: "goal_achieved" }, updatedPlan: updated, ...(stepId ? { step: stepId } : {}) };
  if (!currentStep(updated)) return { advisory: { status: "blocked", reason: "impossible" }, updatedPlan: updated, ...(stepId ? { step: stepId } : {}) };
  return { advisory: { status: "continue", reason: "in_progress" }, updatedPlan: updated, ...(stepId ? { step: stepId } : {}) };
}
