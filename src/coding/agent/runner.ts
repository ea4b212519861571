/**
 * Runs one agent request on the PULSE runtime: iterations of `coding.plan_decide_act` (the run's
 * id as the workspace), each started from the previous one's evaluate_progress output, until the
 * planner's advisory ends it (terminate: succeeded on goal_achieved, else failed; blocked:
 * blocked), or a guardrail does: the action quota (failed, quota), the wall time (timeout: the
 * action in flight is stopped, SIGTERM then SIGKILL), the iteration cap (failed, exhausted), an
 * abort, or a step that fails (failed, error). The report gets run_started first and
 * run_summary then run_finished last. With a journal (the home's agent.db), where the run stands
 * and what it spent is recorded as it goes, and a run whose pulse died continues from there. With
 * records, the run is recorded (its runner's pid while it runs), each iteration as a step when it
 * ends, and the outcome when the run does: what `pulse runs` and the studio show.
 */
import { readFileSync, truncateSync } from "node:fs";
import type { Runtime } from "../../runtime/runtime.js";
import type { Loop } from "../../runtime/loop.js";
import type { IterationResult } from "../../runtime/iteration-result.js";
import { failedResult } from "./actions/executor.js";
import { checkpointed } from "./checkpoint.js";
import { AGENT_LOOP_ID, AGENT_PHASES, agentHandlers, type Acted, type Learned } from "./handlers.js";
import { envelope, readReport, ReportWriter } from "./report.js";
import type { AgentRunRecord, RunJournal } from "./run-journal.js";
import { summarize, type RunSummary } from "./summary.js";
import type { AgentRun, AgentRuns, IterationState } from "./run-state.js";
import type { Envelope, RunStatus } from "./types.js";
import { AgentRunRecordsError } from "./run-records.js";
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

export type NewRun = Omit<AgentRun, "emit" | "actionsUsed" | "tokensUsed" | "deadline" | "controller" | "sleep"> & { sleep?: AgentRun["sleep"]; driver?: AgentRunRecord["driver"] };

/** Who runs the run (recorded so a later pulse can tell a dead runner from a live one). */
export interface RunnerIdentity {
  pid: number;
  start?: number;
}

const defaultSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

/** The report's opening: run_started and user_request (`rewritten` when a resume writes them for a pulse that died first). */
function opening(run: AgentRun, rewritten = false): void {
  const again = rewritten ? { rewritten: true } : {};
  run.emit("run_started", { runId: run.runId, mode: run.mode, strategy: run.config.screening.strategy, actions: run.actions.map((a) => a.name), guides: run.guides.length, knowledge: run.knowledge.length, online: !!run.online, limits: { max_actions: run.config.execution.max_actions, max_wall_time_sec: run.config.execution.max_wall_time_sec }, ...again });
  run.emit("user_request", { text: run.request, files: run.files, ...again });
}

/** A report a killed pulse left may end in a torn line: cut it, so that what is appended stays JSONL. */
function cutTornTail(path: string): void {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return;
  }
  if (text.length > 0 && !text.endsWith("\n")) truncateSync(path, Buffer.byteLength(text.slice(0, text.lastIndexOf("\n") + 1)));
}

export class AgentRunner {
  private constructor(
    private readonly runs: AgentRuns,
    private readonly loop: Loop,
    private readonly logsDir: string,
    private readonly keepLastRuns: number,
    private readonly journal: RunJournal | undefined,
    private readonly self: RunnerIdentity,
    /** Per run: a finished action's recorded output, replayed by perform_action on resume. */
    private readonly replays: Map<string, unknown>,
  ) {}

  /** Loads the manifest into the runtime (once) and binds its phases to the handlers (checkpointed in the journal, when there is one). */
  static async create(runtime: Runtime, manifestPath: string, logsDir: string, keepLastRuns = 100, journal?: RunJournal, self: RunnerIdentity = { pid: process.pid }): Promise<AgentRunner> {
    const runs: AgentRuns = new Map();
    const replays = new Map<string, unknown>();
    const handlers = checkpointed(agentHandlers(runs), journal, replays);
    for (const phase of AGENT_PHASES) runtime.handle(`${AGENT_LOOP_ID}/${phase}`, handlers[phase]);
    const loop = runtime.loop(AGENT_LOOP_ID) ?? (await runtime.load(manifestPath));
    return new AgentRunner(runs, loop, logsDir, keepLastRuns, journal, self, replays);
  }

  /** Stops a run of this process: the action in flight gets SIGTERM, then SIGKILL. */
  abort(runId: string, why = "aborted"): boolean {
    const run = this.runs.get(runId);
    if (!run) return false;
    run.controller.abort(new Error(why));
    return true;
  }

  /**
   * Runs a new run, or continues `from`, the record of a run whose pulse died: its report is
   * appended to, its spent actions, tokens and time alive count against its limits, and it goes
   * on from its last recorded step (the evaluation of an action that finished, else the next
   * iteration; an action the pulse died in is recorded as interrupted and its step decided again).
   */
  async run(input: NewRun, from?: AgentRunRecord): Promise<RunOutcome> {
    const journal = this.journal;
    const logPath = `${this.logsDir}/${input.runId}.jsonl`;
    if (from) cutTornTail(logPath);
    const events: Envelope[] = [];
    /** Where the current iteration's events begin. */
    let mark = 0;
    if (from) {
      try {
        events.push(...readReport(logPath));
      } catch {
        // A report lost (rotated, deleted) is started again: the journal holds the run.
      }
    }
    const writer = new ReportWriter(this.logsDir, input.runId, { keepLastRuns: this.keepLastRuns });
    const controller = new AbortController();
    const segment = Date.now();
    const spentBefore = from?.elapsedMs ?? 0;
    const elapsed = () => spentBefore + (Date.now() - segment);
    const wallMs = input.config.execution.max_wall_time_sec * 1000;
    const note = (patch: Parameters<RunJournal["update"]>[1]) => void journal?.update(run.runId, patch).catch(() => undefined);
    const run: AgentRun = {
      ...input,
      actionsUsed: from?.actionsUsed ?? 0,
      tokensUsed: from?.tokensUsed ?? 0,
      deadline: segment + wallMs - spentBefore,
      controller,
      sleep: input.sleep ?? defaultSleep,
      emit: (type, payload) => {
        const e = envelope(type, payload);
        events.push(e);
        writer.write(e);
        // What is spent is recorded as it is spent: a resumed run counts it.
        if (type === "action_started") note({ actionsUsed: run.actionsUsed, tokensUsed: run.tokensUsed, elapsedMs: elapsed(), inFlight: { actionRunId: String(payload.actionRunId), name: String(payload.name) } });
        else if (type === "plan_built" || type === "decision") note({ tokensUsed: run.tokensUsed, elapsedMs: elapsed() });
        input.hooks.onEvent?.(e);
        return e;
      },
    };
    this.runs.set(run.runId, run);
    let timedOut = false;
    const wallMessage = `the run's wall time (${input.config.execution.max_wall_time_sec} s) ran out`;
    const wall = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(wallMessage));
    }, Math.max(0, run.deadline - segment));
    wall.unref();
    let iterations = from?.iteration ?? 0;
    const records = input.records;
    const finish = async (status: RunStatus, reason: string, message?: string): Promise<RunOutcome> => {
      // The record first: a run that ended is never resumed, even if its pulse dies now.
      await journal?.update(run.runId, { status, reason, actionsUsed: run.actionsUsed, tokensUsed: run.tokensUsed, elapsedMs: elapsed(), pending: null, inFlight: null }).catch(() => undefined);
      const summary = summarize(events);
      run.emit("run_summary", { ...summary });
      const done = run.emit("run_finished", { runId: run.runId, status, reason, ...(message ? { message } : {}), actionsUsed: run.actionsUsed, tokensUsed: run.tokensUsed, durationMs: elapsed(), ...(from ? { resumes: from.resumes + 1 } : {}), dropped: writer.dropped });
      await writer.close();
      // The outcome recorded even when recording a step failed: the record never stays `running` behind a run that ended.
      await records?.update(run.runId, { status, reason, message: message ?? null, iteration: iterations, actions_used: run.actionsUsed, tokens_used: run.tokensUsed, runner_pid: null, finished_at: done.ts }).catch((e: Error) => input.hooks.onRecordError?.(e));
      return { runId: run.runId, status, reason, ...(message ? { message } : {}), report: writer.path, summary: summarize(events) };
    };
    try {
      let state: IterationState;
      let first = 0;
      let pending = from?.pending ?? undefined;
      if (!from) {
        const now = new Date().toISOString();
        state = { runId: run.runId, plan: null, observations: [], waits: 0 };
        await journal?.begin({ runId: run.runId, request: run.request, files: run.files, mode: run.mode, workdir: run.workdir, online: !!run.online, ...(input.driver ? { driver: input.driver } : {}), status: "running", runnerPid: this.self.pid, ...(this.self.start !== undefined ? { runnerStart: this.self.start } : {}), iteration: 0, state, pending: null, inFlight: null, actionsUsed: 0, tokensUsed: 0, elapsedMs: 0, resumes: 0, startedAt: now, updatedAt: now });
        await records?.create({ id: run.runId, request: run.request, mode: run.mode, workdir: run.workdir, max_iterations: run.config.execution.max_iterations, max_actions: run.config.execution.max_actions, runner_pid: process.pid, report_path: writer.path });
        opening(run);
      } else {
        state = from.state;
        first = from.iteration;
        await journal?.update(run.runId, { status: "running", runnerPid: this.self.pid, ...(this.self.start !== undefined ? { runnerStart: this.self.start } : {}), resumes: from.resumes + 1 });
        // Its record (when the run had one) runs again under this pulse.
        await records?.update(run.runId, { status: "running", reason: null, message: null, runner_pid: process.pid, finished_at: null }).catch((e: Error) => input.hooks.onRecordError?.(e));
        run.emit("task_interrupted", { reason: "runner_died", runnerPid: from.runnerPid, resumed: true, iteration: from.iteration, continuesAt: pending ? "evaluate_progress" : "screen", actionsUsed: from.actionsUsed, tokensUsed: from.tokensUsed, elapsedMs: from.elapsedMs, ...(from.inFlight ? { inFlight: from.inFlight } : {}) });
        // What the dead pulse had not yet written of its report (its stream's queue dies with it) is written again where the record holds it.
        if (!events.some((e) => e.type === "run_started")) opening(run, true);
        const acted = pending?.output as Acted | undefined;
        if (acted?.result && !events.some((e) => e.type === "action_result" && e.payload.actionRunId === acted.result!.actionRunId)) {
          if (!events.some((e) => e.type === "action_started" && e.payload.actionRunId === acted.result!.actionRunId)) run.emit("action_started", { actionRunId: acted.result.actionRunId, name: acted.result.name, args: acted.choice.action?.args ?? {}, rewritten: true });
          run.emit("action_result", { ...acted.result, rewritten: true });
        }
        // Feedback stored but not yet written: feedback_received stays once per action run, and present.
        const results = new Set([...events.filter((e) => e.type === "action_result").map((e) => String(e.payload.actionRunId)), ...(acted?.result ? [acted.result.actionRunId] : [])]);
        for (const e of events) if (e.type === "feedback_received") results.delete(String((e.payload.feedback as { actionRunId?: string } | undefined)?.actionRunId));
        for (const id of results) {
          const f = await run.feedback.get(id);
          if (f && f.runId === run.runId) {
            const { action, runId: _r, ...feedback } = f;
            run.emit("feedback_received", { feedback, action, rewritten: true });
          }
        }
        // The action its pulse died in did not finish: recorded as such (its processes were stopped when this pulse opened the store), its step decided again.
        if (from.inFlight && !pending) run.emit("action_result", { ...failedResult({ name: from.inFlight.name }, from.inFlight.actionRunId, "aborted", `interrupted: its pulse (process ${from.runnerPid}) died while it ran; what it left was stopped before the run resumed`) });
      }
      for (let i = first; ; i++) {
        if (timedOut) return await finish("timeout", "timeout", wallMessage);
        if (controller.signal.aborted) return await finish("aborted", "aborted");
        if (i >= run.config.execution.max_iterations) return await finish("failed", "exhausted", `${i} iterations without the planner ending the run (execution.max_iterations)`);
        mark = events.length;
        const iterationStarted = new Date().toISOString();
        if (pending) this.replays.set(run.runId, pending.output);
        const result: IterationResult = pending ? await this.loop.runIteration({ workspace: run.runId, entry: pending.entry, input: pending.input, cause: { trigger: "resumed", at: pending.entry } }) : await this.loop.runIteration({ workspace: run.runId, input: state });
        this.replays.delete(run.runId);
        pending = undefined;
        iterations = i + 1;
        if (records) {
          const step = stepRecordOf(run.runId, iterations, events.slice(mark), state.plan, iterationStarted, new Date().toISOString());
          // A pulse that died between recording this step and journaling it: the step is already recorded.
          await records.addStep(step).catch((e: unknown) => {
            if (!(e instanceof AgentRunRecordsError && e.code === "EXISTS")) throw e;
          });
          await records.update(run.runId, { iteration: iterations, actions_used: run.actionsUsed, tokens_used: run.tokensUsed, last_signal: step.advisory_status });
        }
        if (timedOut) {
          run.emit("task_interrupted", { reason: "timeout", iteration: result.iteration });
          return await finish("timeout", "timeout", wallMessage);
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
        await journal?.update(run.runId, { iteration: i + 1, state, pending: null, inFlight: null, actionsUsed: run.actionsUsed, tokensUsed: run.tokensUsed, elapsedMs: elapsed() }).catch(() => undefined);
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
