/**
 * Whole runs of `coding.plan_decide_act` on the runtime, the scripted driver answering as planner
 * and decider, real action subprocesses, the report and the SQLite feedback store in a temp home:
 * success, confirmation by tags (declined and accepted), the quota, the wall time, structured
 * output retried once then failing, interactive feedback, re-scoring, and report rotation.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createAgent, type AgentOptions } from "../../src/coding/agent/api.js";
import { readReport } from "../../src/coding/agent/report.js";
import type { Envelope } from "../../src/coding/agent/types.js";
import { decideStep, execute, planStep, rawDecider, script, tempHome } from "./helpers.js";
import type { Script } from "../../adapters/agents/scripted/script.js";
import { ScriptedDriver } from "../../adapters/agents/scripted/scripted-driver.js";
import { DriverLlm } from "../../adapters/agents/llm/driver-llm.js";

const TWO_STEPS = planStep([
  { id: "s1", desc: "write a greeting for Ada" },
  { id: "s2", desc: "count the words of the greeting", deps: ["s1"] },
]);

async function runOnce(s: Script, config: Record<string, unknown> = {}, ask: Parameters<Awaited<ReturnType<typeof createAgent>>["ask"]>[2] = {}, extra: Partial<AgentOptions> = {}, request = "Welcome Ada and count the words of her greeting") {
  const { home, workdir } = tempHome(config);
  const agent = await createAgent({ home, workdir, driver: "scripted", script: s, env: { PATH: process.env.PATH, HOME: process.env.HOME }, ...extra });
  const events: Envelope[] = [];
  const { runId, finished } = await agent.ask(request, [], { executionMode: "auto", ...ask, onEvent: (e) => events.push(e) });
  const outcome = await finished;
  const report = readReport(outcome.report);
  return { agent, home, workdir, runId, outcome, events, report, types: report.map((e) => e.type) };
}

describe("an auto run", () => {
  it("plans, decides, runs real actions, records feedback once each, and succeeds with every envelope type in its report", async () => {
    const r = await runOnce(script(TWO_STEPS, execute("greet", { who: "Ada" }, "s1"), execute("word-count", { file: "greeting.txt" }, "s2")));
    expect(r.outcome).toMatchObject({ status: "succeeded", reason: "goal_achieved" });
    expect(r.outcome.report).toBe(join(r.home, "logs", `${r.runId}.jsonl`));
    expect(readFileSync(join(r.workdir, "greeting.txt"), "utf8")).toBe("Hello, Ada!\n");
    expect(r.types).toEqual([
      "run_started", "user_request", "plan_built",
      "decision", "action_started", "action_result", "feedback_received", "plan_updated", "progress_evaluated",
      "decision", "action_started", "action_result", "feedback_received", "plan_updated", "progress_evaluated",
      "run_summary", "run_finished",
    ]);
    expect(r.report.every((e) => /^[0-9a-f-]{36}$/.test(e.id) && /Z$/.test(e.ts))).toBe(true);
    const results = r.report.filter((e) => e.type === "action_result").map((e) => e.payload);
    expect(results.map((p) => [p.name, p.status, p.result])).toEqual([["greet", "ok", "Hello, Ada!"], ["word-count", "ok", "2 words in greeting.txt"]]);
    expect(results[0]!.stdout).toContain("greet: done");
    expect(results[0]!.logs).toEqual(['wrote the greeting {"who":"Ada","apiKey":null}']);
    const fb = r.report.filter((e) => e.type === "feedback_received").map((e) => e.payload.feedback as { score: number; signal: string; submittedBy: string; actionRunId: string });
    expect(fb.map((f) => [f.score, f.signal, f.submittedBy])).toEqual([[4, "success", "system"], [4, "success", "system"]]);
    expect(fb[0]!.actionRunId).toBe(results[0]!.actionRunId);
    // The advisories, one per step, and the one-line progress a CLI prints from them.
    expect(r.report.filter((e) => e.type === "progress_evaluated").map((e) => [e.payload.status, e.payload.reason, e.payload.step])).toEqual([["continue", "in_progress", "s1"], ["terminate", "goal_achieved", "s2"]]);
    // The summary from the report, and the feedback kept in the home's SQLite store.
    const summary = await r.agent.getReport(r.runId);
    expect(summary).toMatchObject({ runId: r.runId, status: "succeeded", reason: "goal_achieved", actionsOk: 2, actionsFailed: 0, meanFeedbackScore: 4, decisions: { execute: 2 }, plan: { steps: 2, done: 2, blocked: 0 } });
    expect(existsSync(join(r.home, "agent.db"))).toBe(true);
    await r.agent.close();
    const again = await createAgent({ home: r.home, driver: "scripted", script: script(TWO_STEPS) });
    // A person's word replaces the system's implicit feedback; repeating anything changes nothing.
    const ts = new Date().toISOString();
    expect(await again.submitFeedback(fb[0]!.actionRunId, { score: 1, signal: "fail", submittedBy: "user", ts, comment: "wrong name" })).toBe("replaced");
    expect(await again.submitFeedback(fb[0]!.actionRunId, { score: 5, signal: "success", submittedBy: "user", ts })).toBe("unchanged");
    await expect(again.submitFeedback(fb[0]!.actionRunId, { score: 9, signal: "success", submittedBy: "user", ts })).rejects.toThrow("feedback.score: must be a number from 0 to 5");
    await again.close();
  });

  it("declines an action tagged destructive with nobody to confirm it (the step blocks), and runs it when confirmed", async () => {
    const wipePlan = planStep([{ id: "s1", desc: "delete greeting.txt" }]);
    const declined = await runOnce(script(wipePlan, execute("wipe", {}, "s1")));
    expect(declined.outcome).toMatchObject({ status: "blocked", reason: "impossible" });
    const result = declined.report.find((e) => e.type === "action_result")!.payload;
    expect(result).toMatchObject({ name: "wipe", status: "error", ended: "declined" });
    expect(result.error).toMatch(/not confirmed \(tagged write, destructive\)/);
    expect(declined.types).not.toContain("action_started");
    expect(declined.types).not.toContain("feedback_received");

    const asked: string[] = [];
    const confirmed = await runOnce(script(wipePlan, execute("wipe", {}, "s1")), {}, { confirm: async (a, _args, why) => (asked.push(`${a.name}: ${why}`), true) });
    expect(asked).toEqual(["wipe: tagged write, destructive"]);
    expect(confirmed.outcome).toMatchObject({ status: "succeeded" });
    // Auto mode confirms only require_for_tags: greet (no tags) never asks.
    const untagged: string[] = [];
    await runOnce(script(TWO_STEPS, execute("greet", { who: "Ada" }, "s1"), execute("word-count", { file: "greeting.txt" }, "s2")), {}, { confirm: async (a) => (untagged.push(a.name), true) });
    expect(untagged).toEqual([]);
  });

  it("ends failed (quota) when the action quota is spent before the plan is done", async () => {
    const r = await runOnce(script(TWO_STEPS, execute("greet", { who: "Ada" }, "s1"), execute("word-count", { file: "greeting.txt" }, "s2")), { execution: { max_actions: 1 } });
    expect(r.outcome).toMatchObject({ status: "failed", reason: "quota" });
    expect(r.report.filter((e) => e.type === "action_started")).toHaveLength(1);
    expect(r.report.at(-1)!.payload).toMatchObject({ status: "failed", reason: "quota", actionsUsed: 1 });
  });

  it("ends timeout when the wall time runs out, stopping the action in flight", async () => {
    const r = await runOnce(script(planStep([{ id: "s1", desc: "sleep" }]), execute("slow", {}, "s1")), { execution: { max_wall_time_sec: 1.5 } }, {}, {}, "Sleep for a long while");
    expect(r.outcome).toMatchObject({ status: "timeout", reason: "timeout" });
    expect(r.types).toContain("task_interrupted");
    expect(r.report.find((e) => e.type === "action_result")!.payload).toMatchObject({ ended: "aborted" });
    const pid = Number(readFileSync(join(r.workdir, "slow.pid"), "utf8"));
    await new Promise((res) => setTimeout(res, 300));
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it("asks the decider again once with the schema's errors, then fails the step", async () => {
    const retried = await runOnce(script(TWO_STEPS, rawDecider('{"type": "execute", "action": {"name": "greet-all", "args": {}}, "reason": "x"}'), execute("greet", { who: "Ada" }, "s1"), execute("word-count", { file: "greeting.txt" }, "s2")));
    expect(retried.outcome.status).toBe("succeeded");
    expect(retried.report.filter((e) => e.type === "decision").map((e) => e.payload.attempts)).toEqual([2, 1]);

    const failed = await runOnce(script(TWO_STEPS, rawDecider("I think we should greet Ada."), rawDecider('{"type": "dance", "reason": "x"}')));
    expect(failed.outcome).toMatchObject({ status: "failed", reason: "error" });
    expect(failed.outcome.message).toMatch(/^decide: .*the decider's answer did not match its schema after a retry: \/type must be equal to one of the allowed values/);
    expect(failed.types.slice(-2)).toEqual(["run_summary", "run_finished"]);
  });
});

describe("an interactive run", () => {
  it("asks to confirm every action, takes the person's feedback, and records the neutral stub when none comes", async () => {
    const confirmations: string[] = [];
    const r = await runOnce(
      script(TWO_STEPS, execute("greet", { who: "Ada" }, "s1"), execute("word-count", { file: "greeting.txt" }, "s2")),
      { feedback: { handler_timeout_sec: 0.2 } },
      {
        executionMode: "interactive",
        confirm: async (a) => (confirmations.push(a.name), true),
        feedbackHandler: async (result) => (result.name === "greet" ? { actionRunId: "ignored", score: 5, signal: "success", submittedBy: "user", ts: new Date().toISOString(), comment: "lovely" } : new Promise(() => {})),
      },
    );
    expect(r.outcome.status).toBe("succeeded");
    expect(confirmations).toEqual(["greet", "word-count"]);
    const fb = r.report.filter((e) => e.type === "feedback_received").map((e) => e.payload.feedback as Record<string, unknown>);
    expect(fb.map((f) => [f.score, f.signal, f.submittedBy])).toEqual([[5, "success", "user"], [3, "partial", "system"]]);
  });

  it("blocks the step the person declines", async () => {
    const r = await runOnce(script(planStep([{ id: "s1", desc: "greet" }]), execute("greet", { who: "Ada" }, "s1")), {}, { executionMode: "interactive", confirm: async () => false });
    expect(r.outcome).toMatchObject({ status: "blocked" });
    expect(r.report.find((e) => e.type === "plan_updated")!.payload.plan).toMatchObject({ steps: [{ id: "s1", status: "blocked" }] });
  });
});

describe("feedback re-scores candidates", () => {
  it("moves an action that kept failing below the others in the decider's candidates, and the report shows how", async () => {
    const { home, workdir } = tempHome();
    const addPlan = planStep([{ id: "s1", desc: "add two numbers" }]);
    const runAdd = async () => {
      const agent = await createAgent({ home, workdir, driver: "scripted", script: script(addPlan, execute("add", { a: 1, b: 2 }, "s1")) });
      const outcome = await (await agent.ask("add two numbers", [], { executionMode: "auto" })).finished;
      const report = readReport(outcome.report);
      const candidates = report.find((e) => e.type === "decision")!.payload.candidates as { name: string; score: number; feedback: number; recent?: { n: number; mean: number } }[];
      return { agent, candidates, actionRunId: report.find((e) => e.type === "action_result")!.payload.actionRunId as string };
    };
    const first = await runAdd();
    const before = first.candidates.find((c) => c.name === "add")!;
    expect(before).toMatchObject({ feedback: 0, screen: 1 });
    expect(first.candidates[0]!.name).toBe("add");
    // The person says both runs of add failed (replacing the implicit success).
    const ts = new Date().toISOString();
    expect(await first.agent.submitFeedback(first.actionRunId, { score: 0, signal: "fail", submittedBy: "user", ts })).toBe("replaced");
    await first.agent.close();
    const second = await runAdd();
    expect(second.candidates.find((c) => c.name === "add")!.recent).toEqual({ n: 1, mean: 0 });
    expect(await second.agent.submitFeedback(second.actionRunId, { score: 0, signal: "fail", submittedBy: "user", ts })).toBe("replaced");
    await second.agent.close();
    const third = await runAdd();
    const after = third.candidates.find((c) => c.name === "add")!;
    expect(after.recent).toEqual({ n: 2, mean: 0 });
    expect(after.feedback).toBe(-0.75);
    expect(after.score).toBe(0.25);
    // No longer first: the decider sees it below actions that screened worse but never failed.
    expect(third.candidates[0]!.name).not.toBe("add");
    await third.agent.close();
  });
});

describe("reports", () => {
  it("keeps the latest keep_last_runs reports", async () => {
    const { home, workdir } = tempHome({ logging: { keep_last_runs: 2 } });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const agent = await createAgent({ home, workdir, driver: "scripted", script: script(planStep([{ id: "s1", desc: "add" }]), execute("add", { a: i, b: 1 }, "s1")), store: "memory:" });
      const h = await agent.ask("add", [], { executionMode: "auto" });
      await h.finished;
      ids.push(h.runId);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(readdirSync(join(home, "logs")).sort()).toEqual(ids.slice(1).map((id) => `${id}.jsonl`).sort());
  });
});

describe("ask and wait", () => {
  it("asks the person (the answer joins what the decider sees) and continues; nobody answering blocks the run", async () => {
    const plan = planStep([{ id: "s1", desc: "greet someone" }]);
    const asking = decideStep({ type: "ask", question: "Whom should I greet?", reason: "the request names nobody" });
    const questions: string[] = [];
    const { home, workdir } = tempHome();
    const driver = new ScriptedDriver(script(plan, asking, execute("greet", { who: "Ada" }, "s1")));
    const agent = await createAgent({ home, workdir, store: "memory:", llm: new DriverLlm(driver, join(home, "llm"), "coding.plan_decide_act") });
    const outcome = await (await agent.ask("greet someone", [], { executionMode: "auto", askUser: async (q) => (questions.push(q), "Ada") })).finished;
    expect(questions).toEqual(["Whom should I greet?"]);
    expect(outcome.status).toBe("succeeded");
    expect(driver.calls[2]!.prompt).toContain('- asked "Whom should I greet?": answered "Ada"');
    const answered = { outcome, report: readReport(outcome.report) };
    expect(answered.outcome.status).toBe("succeeded");
    expect(answered.report.filter((e) => e.type === "progress_evaluated").map((e) => [e.payload.decision, e.payload.status])).toEqual([["ask", "continue"], ["execute", "terminate"]]);
    const unanswered = await runOnce(script(plan, asking));
    expect(unanswered.outcome).toMatchObject({ status: "blocked", reason: "impossible", message: 'asked "Whom should I greet?": no answer' });
  });

  it("waits with a growing backoff, and three waits in a row end the run blocked (exhausted)", async () => {
    const plan = planStep([{ id: "s1", desc: "greet" }]);
    const wait = decideStep({ type: "wait", reason: "the service is not up yet" });
    const slept: number[] = [];
    const r = await runOnce(script(plan, wait, wait, wait), {}, {}, { sleep: async (ms) => void slept.push(ms) });
    expect(r.outcome).toMatchObject({ status: "blocked", reason: "exhausted" });
    expect(slept).toEqual([1000, 2000, 4000]);
    expect(r.report.filter((e) => e.type === "decision")).toHaveLength(3);
  });
});
