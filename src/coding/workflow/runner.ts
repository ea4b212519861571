/**
 * The workflow runner: runs a workflow's iterations on the PULSE runtime (one iteration of
 * `coding.pulsing_workflow` per agent turn, the workflow's id as its workspace) until the plan
 * is done, a pulse halts it for a person, it is stopped, or the preflight fails. It owns the
 * worktree's lock while it runs; before anything touches the worktree it stops what a dead
 * runner left (the reaper) and keeps what that runner's pulse left in a recovery commit.
 */
import type { AgentDriver } from "../../agents/contract.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { Loop } from "../../runtime/loop.js";
import type { AgentProcesses } from "../agent-processes.js";
import type { Reaper } from "../reaper.js";
import type { CheckRunner } from "../gate.js";
import { CostLedger } from "../cost-ledger.js";
import { git } from "../git.js";
import { createWorktree, recoveryCommit, type Worktree } from "../worktree.js";
import { packageFile } from "../session/profile.js";
import { processAlive } from "../session/repo.js";
import { workflowHandlers, WORKFLOW_PHASES, type Outcome, type WorkflowDecision } from "./handlers.js";
import { WORKFLOW_LOOP_ID, WORKFLOW_MANIFEST, type WorkflowProfile } from "./profile.js";
import { isFinished, type PulseRecord, type WorkflowRecord, type WorkflowRecords } from "./records.js";
import type { WorkflowEvent, WorkflowRun, WorkflowRuns } from "./run-state.js";
import { closeWorktree } from "./workspace.js";
import { mergeWorkflow } from "./merge.js";

export interface WorkflowRunnerOptions {
  runtime: Runtime;
  records: WorkflowRecords;
  profile: WorkflowProfile;
  driverFor(workflow: WorkflowRecord, phase: "preflight" | "run_pulse"): AgentDriver;
  checks: CheckRunner;
  processes?: AgentProcesses;
  reaper?: Reaper;
}

export class WorkflowError extends Error {
  constructor(
    readonly code: "NOT_FOUND" | "FINISHED" | "RUNNING",
    message: string,
  ) {
    super(message);
    this.name = "WorkflowError";
  }
}

export class WorkflowRunner {
  private constructor(
    private readonly o: WorkflowRunnerOptions,
    private readonly runs: WorkflowRuns,
    private readonly loop: Loop,
  ) {}

  static async create(options: WorkflowRunnerOptions): Promise<WorkflowRunner> {
    const runs: WorkflowRuns = new Map();
    const handlers = workflowHandlers(runs);
    for (const phase of WORKFLOW_PHASES) options.runtime.handle(`${WORKFLOW_LOOP_ID}/${phase}`, handlers[phase]);
    const loop = options.runtime.loop(WORKFLOW_LOOP_ID) ?? (await options.runtime.load(packageFile(WORKFLOW_MANIFEST)));
    return new WorkflowRunner(options, runs, loop);
  }

  /** A signal to this process: the current turn is stopped, its work kept in a recovery commit, the workflow ends `stopped`. */
  stopHere(id: string, why: string): boolean {
    const run = this.runs.get(id);
    if (!run) return false;
    run.stopping ??= why;
    run.controller.abort(new Error(why));
    void this.o.reaper?.reap(id, { graceMs: 500 }).catch(() => undefined);
    return true;
  }

  /** Runs (or resumes) a workflow until it completes, halts, stops, fails or is abandoned; returns its record then. */
  async run(id: string, options: { onEvent?: (e: WorkflowEvent) => void } = {}): Promise<WorkflowRecord> {
    const { records } = this.o;
    let w = await records.get(id);
    if (!w) throw new WorkflowError("NOT_FOUND", `no workflow ${id}`);
    id = w.id;
    if (isFinished(w.status)) throw new WorkflowError("FINISHED", `workflow ${id} is ${w.status}: there is nothing to resume`);
    if (this.runs.has(id) || (w.status === "running" && w.runner_pid !== process.pid && processAlive(w.runner_pid))) throw new WorkflowError("RUNNING", `workflow ${id} is already running (process ${w.runner_pid}); stop it first`);
    // What a dead runner of this workflow left is stopped before anything touches the worktree.
    await this.o.reaper?.reap(id);
    let worktree: Worktree;
    try {
      const exists = (await git(w.repo_path, ["rev-parse", "--verify", "-q", `refs/heads/${w.branch_name}`], { allowFail: true })).code === 0;
      await git(w.repo_path, ["worktree", "prune"]);
      worktree = await createWorktree({ repo: w.repo_path, path: w.worktree_path, branch: w.branch_name, ...(exists ? {} : { base: w.base_sha }), owner: `pulse workflow ${id}` });
    } catch (e) {
      if ((e as Error).name === "WorktreeError" && (e as { code?: string }).code === "LOCKED") throw new WorkflowError("RUNNING", (e as Error).message);
      throw e;
    }
    // Events are appended in order, one write after another; the run waits for the last before it returns.
    let written: Promise<unknown> = Promise.resolve();
    const emit = (e: WorkflowEvent) => {
      const at = new Date().toISOString();
      written = written.then(() => records.appendEvents(id, [{ at, type: e.type, data: e }])).catch(() => undefined);
      options.onEvent?.(e);
    };
    try {
      const recovered = await this.restartPulses(w);
      // One driver per phase for the whole run (a scripted driver's steps are used up in order).
      const drivers = new Map<"preflight" | "run_pulse", AgentDriver>();
      w = await records.update(id, { status: "running", runner_pid: process.pid, control: null, status_reason: null, finished_at: null });
      const run: WorkflowRun = { workflow: w, records, profile: this.o.profile, driverFor: (phase) => drivers.get(phase) ?? drivers.set(phase, this.o.driverFor(w!, phase)).get(phase)!, ledger: new CostLedger(), controller: new AbortController(), checks: this.o.checks, ...(this.o.processes ? { processes: this.o.processes } : {}), emit };
      this.runs.set(id, run);
      emit({ type: "workflow.started", workflow_id: id, workflow: w, ...(recovered ? { recovered } : {}) });
      return await this.iterate(run, worktree);
    } catch (e) {
      const now = await records.get(id).catch(() => undefined);
      if (now?.status === "running") await records.update(id, { status: "failed", status_reason: `the workflow could not run: ${(e as Error).message}`, runner_pid: null }).catch(() => undefined);
      throw e;
    } finally {
      await written;
      this.runs.delete(id);
      worktree.lock.release();
    }
  }

  /**
   * A pulse a dead runner left running keeps what it did in a recovery commit and is continued;
   * a failed or stopped pulse that halted the workflow is restarted on its kept branch.
   */
  private async restartPulses(w: WorkflowRecord): Promise<string | undefined> {
    const notes: string[] = [];
    for (const p of await this.o.records.pulses(w.id)) {
      if (p.status === "running" && w.status === "running" && (await this.landedBeforeCrash(w, p))) {
        notes.push(`pulse ${p.number} had landed on ${w.branch_name} when its runner stopped: recorded as succeeded`);
        continue;
      }
      if (p.status === "running" && w.status === "running") {
        const sha = await recoveryCommit(w.worktree_path, `pulse ${p.number} interrupted: its runner (process ${w.runner_pid ?? "?"}) stopped\n\nPulse-Workflow: ${w.id}\nPulse: ${p.number}`, { exclude: w.artifacts });
        await this.o.records.updatePulse(p.id, { is_recovery_checkpoint: sha !== null, ...(sha ? { checkpoint_commit_sha: sha } : {}), feedback: `Your previous turn on this pulse was interrupted (pulse's runner stopped)${sha ? "; what it left is in the tree, committed as a recovery checkpoint" : ""}. Check the state of the work and finish the pulse.` });
        notes.push(`pulse ${p.number} was interrupted when its runner stopped${sha ? `; what it left is in recovery commit ${sha.slice(0, 8)}` : ""}`);
      }
      if (p.status === "failed" || p.status === "stopped") {
        await this.o.records.updatePulse(p.id, { status: "running", turns: 0, nudges: 0, rejections: 0, ended_at: null, feedback: `This pulse was restarted after it ${p.status === "failed" ? "failed" : "was stopped"} (${p.failure_reason ?? "no reason recorded"}). Its earlier work is on this branch. Finish the pulse.` });
        notes.push(`pulse ${p.number} (${p.status}) restarted on its branch ${p.pulse_branch}`);
      }
    }
    return notes.length > 0 ? notes.join("; ") : undefined;
  }

  /**
   * A runner killed between landing a pulse (its commit on the workflow branch, its branch gone)
   * and recording it: the workflow branch's head carries the pulse's trailers. The records catch
   * up instead of running the pulse a second time.
   */
  private async landedBeforeCrash(w: WorkflowRecord, p: PulseRecord): Promise<boolean> {
    const branch = p.pulse_branch ?? "";
    if (!branch) return false;
    const head = await git(w.repo_path, ["log", "-1", "--format=%H%x00%B", w.branch_name], { allowFail: true });
    const [sha, body = ""] = head.stdout.split("\0");
    if (head.code !== 0 || !body.includes(`Pulse-Workflow: ${w.id}\n`) || !new RegExp(`^Pulse: ${p.number}( |$)`, "m").test(body)) return false;
    // Killed after the fast-forward but before the branch was deleted: it points at the landed commit.
    const kept = await git(w.repo_path, ["rev-parse", "--verify", "-q", `refs/heads/${branch}`], { allowFail: true });
    if (kept.code === 0) {
      if (kept.stdout.trim() !== sha!.trim()) return false;
      if (await isCheckedOut(w.worktree_path, branch)) await git(w.worktree_path, ["switch", "-q", w.branch_name]);
      // -d in the worktree, on the workflow branch: merged there, so git deletes it (never -D).
      await git(w.worktree_path, ["branch", "-q", "-d", branch]);
    }
    const summary = body.split("\n\nPulse-Workflow:")[0]!.split("\n\nUnresolved issues:")[0]!.trim();
    await this.o.records.updatePulse(p.id, { status: "succeeded", checkpoint_commit_sha: sha!.trim(), summary, ended_at: new Date().toISOString(), feedback: null });
    return true;
  }

  private async iterate(run: WorkflowRun, worktree: Worktree): Promise<WorkflowRecord> {
    const { records } = this.o;
    const id = run.workflow.id;
    const poll = setInterval(() => {
      records.get(id).then((w) => {
        if (w?.control === "stop") this.stopHere(id, "stop requested (pulse workflow stop)");
      }, () => undefined);
    }, this.o.profile.recordOutcome.controlPollMs);
    poll.unref();
    try {
      for (;;) {
        const preflight = await records.preflight(id);
        // The first iteration enters at phases[0] (the preflight), later ones at closure.to_phase: by the records, so a new process resumes right.
        const entry = preflight?.status === "completed" ? "select_pulse" : "preflight";
        if (run.controller.signal.aborted && entry === "preflight") return await this.finish(run, worktree, { action: "stop", status: "abandoned", reason: `stopped before the preflight finished` });
        const result = await this.loop.runIteration({ workspace: id, entry, input: { workflow_id: id, base_sha: run.workflow.base_sha } });
        const out = result.status === "completed" ? (result.output as Outcome | undefined) : undefined;
        if (!out?.workflow) {
          const why = result.error?.message ?? `the iteration ended ${result.status}`;
          return await this.finish(run, worktree, { action: "stop", status: "failed", reason: why });
        }
        if (out.workflow.action === "stop") return await this.finish(run, worktree, out.workflow);
        if (run.stopping !== undefined) return await this.finish(run, worktree, { action: "stop", status: "stopped", reason: `stopped after turn ${run.workflow.turns}: ${run.stopping}` });
      }
    } finally {
      clearInterval(poll);
    }
  }

  private async finish(run: WorkflowRun, worktree: Worktree, d: Extract<WorkflowDecision, { action: "stop" }>): Promise<WorkflowRecord> {
    const w = run.workflow;
    let reason = d.reason;
    // A workflow that ended keeps no worktree: the branch stays for review (completed), or goes with it (abandoned: it holds nothing).
    if (d.status === "completed" && w.merge) {
      const summaries = (await this.o.records.pulses(w.id)).map((p) => p.summary ?? p.title);
      const merged = await mergeWorkflow(w, w.merge, summaries).catch((e: Error) => ({ merged: false, note: `not merged: ${e.message}` }));
      reason += `; ${merged.note}`;
      run.emit({ type: "workflow.merged", workflow_id: w.id, mode: w.merge, ...merged });
    }
    if (d.status === "completed" || d.status === "abandoned") {
      try {
        await closeWorktree(worktree, w, d.status === "abandoned");
      } catch (e) {
        reason += `; its worktree could not be removed (pulse workflow clean retries): ${(e as Error).message}`;
      }
    }
    const done = await this.o.records.update(w.id, { status: d.status, status_reason: reason, runner_pid: null, control: null, finished_at: new Date().toISOString() });
    run.workflow = done;
    run.emit({ type: "workflow.finished", workflow_id: w.id, workflow: done });
    return done;
  }
}

async function isCheckedOut(worktree: string, branch: string): Promise<boolean> {
  const r = await git(worktree, ["symbolic-ref", "--short", "-q", "HEAD"], { allowFail: true }).catch(() => ({ code: 1, stdout: "" }));
  return r.code === 0 && r.stdout.trim() === branch;
}
