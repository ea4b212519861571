/**
 * Runs one agent request on the PULSE runtime: iterations of `coding.plan_decide_act` (the run's
 * id as the workspace), each started from the previous one's evaluate_progress output, until the
 * planner's advisory ends it (terminate: succeeded on goal_achieved, else failed; blocked:
 * blocked), or a guardrail does: the action quota (failed, quota), the wall time (timeout: the
 * action in flight is stopped, SIGTERM then SIGKILL), the iteration cap (failed, exhausted), an
 * abort, or a step that fails (failed, error). The report gets run_started first and
 * run_summary then run_finished last. With records, the run is recorded (its runner's pid while
 * it runs), each iteration as a step when it ends, and the outcome when the run does.
 */
import type { Runtime } from "../../runtime/runtime.js";
import type { Loop } from "../../runtime/loop.js";
import { AGENT_LOOP_ID, AGENT_PHASES, agentHandlers, type Learned } from "./handlers.js";
import { envelope, ReportWriter } from "./report.js";
import { summarize, type RunSummary } from "./summary.js";
import type { AgentRun, AgentRuns, IterationState } from "./run-state.js";
import type { Envelope, RunStatus } from "./types.js";
import { stepRecordOf } from "./step-record.js";

export const AGENT_MANIFEST = "manifests/coding/plan-decide-act.yaml";

export interface RunOutcome {
  runId: string;
  status: RunStatus;
  reason: string;
  message?: string;
  report: string;
  summary: RunSummary;
}

export type NewRun = Omit<AgentRun, "emit" | "actionsUsed" | "tokensUsed" | "deadline" | "controller" | "sleep"> & { sleep?: AgentRun["sleep"] };

const defaultSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

export class AgentRunner {
  private constructor(
    private readonly runs: AgentRuns,
    private readonly loop: Loop,
    private readonly logsDir: string,
    private readonly keepLastRuns: number,
  ) {}

  /** Loads the manifest into the runtime (once) and binds its phases to the handlers. */
  static async create(runtime: Runtime, manifestPath: string, logsDir: string, keepLastRuns = 100): Promise<AgentRunner> {
    const runs: AgentRuns = new Map();
    const handlers = agentHandlers(runs);
    for (const phase of AGENT_PHASES) runtime.handle(`${AGENT_LOOP_ID}/${phase}`, handlers[phase]);
    const loop = runtime.loop(AGENT_LOOP_ID) ?? (await runtime.load(manifestPath));
    return new AgentRunner(runs, loop, logsDir, keepLastRuns);
  }

  /** Stops a run of this process: the action in flight gets SIGTERM, then SIGKILL. */
  abort(runId: string, why = "aborted"): boolean {
    const run = this.runs.get(runId);
    if (!run) return false;
    run.controller.abort(new Error(why));
    return true;
  }

  async run(input: NewRun): Promise<RunOutcome> {
    const writer = new ReportWriter(this.logsDir, input.runId, { keepLastRuns: this.keepLastRuns });
    const events: Envelope[] = [];
    /** Where the current iteration's events begin. */
    let mark = 0;
    const controller = new AbortController();
    const started = Date.now();
    const run: AgentRun = {
      ...input,
      actionsUsed: 0,
      tokensUsed: 0,
      deadline: started + input.config.execution.max_wall_time_sec * 1000,
      controller,
      sleep: input.sleep ?? defaultSleep,
      emit: (type, payload) => {
        const e = envelope(type, payload);
        events.push(e);
        writer.write(e);
        input.hooks.onEvent?.(e);
        return e;
      },
    };
    this.runs.set(run.runId, run);
    let timedOut = false;
    const wall = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`the run's wall time (${input.config.execution.max_wall_time_sec} s) ran out`));
    }, run.deadline - started);
    wall.unref();
    let iterations = 0;
    const records = input.records;
    const finish = async (status: RunStatus, reason: string, message?: string): Promise<RunOutcome> => {
      const summary = summarize(events);
      run.emit("run_summary", { ...summary });
      const done = run.emit("run_finished", { runId: run.runId, status, reason, ...(message ? { message } : {}), actionsUsed: run.actionsUsed, tokensUsed: run.tokensUsed, durationMs: Date.now() - started, dropped: writer.dropped });
      await writer.close();
      // The outcome recorded even when recording a step failed: the record never stays `running` behind a run that ended.
      await records?.update(run.runId, { status, reason, message: message ?? null, iteration: iterations, actions_used: run.actionsUsed, tokens_used: run.tokensUsed, runner_pid: null, finished_at: done.ts }).catch((e: Error) => input.hooks.onRecordError?.(e));
      return { runId: run.runId, status, reason, ...(message ? { message } : {}), report: writer.path, summary: summarize(events) };
    };
    try {
      await records?.create({ id: run.runId, request: run.request, mode: run.mode, workdir: run.workdir, max_iterations: run.config.execution.max_iterations, max_actions: run.config.execution.max_actions, runner_pid: process.pid, report_path: writer.path });
      run.emit("run_started", { runId: run.runId, mode: run.mode, strategy: run.config.screening.strategy, actions: run.actions.map((a) => a.name), guides: run.guides.length, knowledge: run.knowledge.length, limits: { max_actions: run.config.execution.max_actions, max_wall_time_sec: run.config.execution.max_wall_time_sec } });
      run.emit("user_request", { text: run.request, files: run.files });
      let state: IterationState = { runId: run.runId, plan: null, observations: [], waits: 0 };
      for (let i = 0; ; i++) {
        if (timedOut) return await finish("timeout", "timeout", `the run's wall time (${run.config.execution.max_wall_time_sec} s) ran out`);
        if (controller.signal.aborted) return await finish("aborted", "aborted");
        if (i >= run.config.execution.max_iterations) return await finish("failed", "exhausted", `${i} iterations without the planner ending the run (execution.max_iterations)`);
        mark = events.length;
        const iterationStarted = new Date().toISOString();
        const result = await this.loop.runIteration({ workspace: run.runId, input: state });
        iterations = i + 1;
        if (records) {
          const step = stepRecordOf(run.runId, iterations, events.slice(mark), state.plan, iterationStarted, new Date().toISOString());
          await records.addStep(step);
          await records.update(run.runId, { iteration: iterations, actions_used: run.actionsUsed, tokens_used: run.tokensUsed, last_signal: step.advisory_status });
        }
        if (timedOut) {
          run.emit("task_interrupted", { reason: "timeout", iteration: result.iteration });
          return await finish("timeout", "timeout", `the run's wall time (${run.config.execution.max_wall_time_sec} s) ran out`);
        }
        const out = result.status === "completed" ? (result.output as Learned | undefined) : undefined;
        if (!out?.advisory) {
          if (controller.signal.aborted) {
            run.emit("task_interrupted", { reason: "aborted", iteration: result.iteration });
            return await finish("aborted", "aborted");
          }
          const failedPhase = result.phases.find((p) => p.status === "failed");
          return await finish("failed", "error", `${failedPhase ? `${failedPhase.phase_id}: ` : ""}${result.error?.message ?? failedPhase?.error?.message ?? `the iteration ended ${result.status}`}`);
        }
        state = { runId: run.runId, plan: out.plan, observations: out.observations, advisory: out.advisory, waits: out.waits };
        if (out.quota) return await finish("failed", "quota", `the run's action quota (${run.config.execution.max_actions}) is spent`);
        const maxTokens = run.config.execution.max_tokens;
        if (out.advisory.status === "continue" && maxTokens !== undefined && run.tokensUsed >= maxTokens) return await finish("failed", "budget", `the run's token budget (${maxTokens}) is spent: ${run.tokensUsed} used`);
        if (out.advisory.status === "terminate") return await finish(out.advisory.reason === "goal_achieved" ? "succeeded" : "failed", out.advisory.reason);
        if (out.advisory.status === "blocked") return await finish("blocked", out.advisory.reason, out.observations.at(-1));
      }
    } catch (e) {
      return await finish("failed", "error", (e as Error).message);
    } finally {
      clearTimeout(wall);
      this.runs.delete(run.runId);
    }
  }
}
