/**
 * The session runner: runs a session's iterations on the PULSE runtime (one iteration of
 * `coding.pulse_session` per agent turn, the session's id as its workspace) until the agent
 * signals COMPLETE or BLOCKED, a limit stops it, or a person pauses or aborts it. An iteration a
 * dead runner left in flight is resumed through the runtime's journal, under its number: the
 * phases it committed are not run again (their journaled outputs feed the next), and a turn the
 * crash cut short is dispatched again once what its agent left is stopped and kept in a recovery
 * commit (docs/decisions.md). Without a journal (a runtime with no store) such an iteration is
 * marked failed (interrupted) instead. Pause and abort requested by another process arrive
 * through the records, polled while an iteration runs.
 */
import { baselineOf, type CheckRunner } from "../gate.js";
import type { AgentDriver } from "../../agents/contract.js";
import type { Runtime } from "../../runtime/runtime.js";
import type { Loop } from "../../runtime/loop.js";
import type { AgentProcesses } from "../agent-processes.js";
import type { Reaper } from "../reaper.js";
import { CostLedger } from "../cost-ledger.js";
import { messages, type Notifier } from "../notifier.js";
import { LoopGuard, type Stop } from "../progress-breaker.js";
import { lockWorktree, recoveryCommit, type WorktreeLock } from "../worktree.js";
import { recordedProcesses, turnId, SESSION_PHASES, sessionHandlers, type Learned } from "./handlers.js";
import { packageFile, SESSION_LOOP_ID, SESSION_MANIFEST, type SessionProfile } from "./profile.js";
import { isFinished, type SessionPatch, type SessionRecord, type SessionRecords } from "./records.js";
import { excludeFromRepo, processAlive, useBranch } from "./repo.js";
import { SessionEventLog } from "./event-log.js";
import { SessionError } from "./session-error.js";
import { closeWorkspace, openWorkspace, workdirOf } from "./workspace.js";
import type { SessionEvent, SessionRun, SessionRuns } from "./run-state.js";
import { Claims } from "./claims.js";
import { recoverInterrupted, type JournaledIteration, type Recovered } from "./resume.js";
import { endedBySignal, guardBudgets, guardRestored, guardStreaks, turnTime } from "./guard-state.js";

export { guardRestored, turnTime };

export interface SessionRunnerOptions {
  runtime: Runtime;
  records: SessionRecords;
  profile: SessionProfile;
  /** The driver a session's record names, bound where the program is assembled. */
  driverFor(session: SessionRecord): AgentDriver;
  notifier?: Notifier;
  /** pulse's state directory: kept out of the repository's evidence when it lies inside it. */
  stateDir?: string;
  /** Where agent processes are recorded as they start; with `reaper`, what a dead runner left is stopped. */
  processes?: AgentProcesses;
  reaper?: Reaper;
  /** Runs the session's checks (--verify); a session with checks needs it. */
  checks?: CheckRunner;
  /** How long events wait in the buffer before they are written to the records (EVENT_FLUSH_MS). */
  eventFlushMs?: number;
}

export { SessionError };

export class SessionRunner {
  /** Callers waiting for this process to take a session (claimed()). */
  private readonly claims = new Claims();

  private constructor(
    private readonly o: SessionRunnerOptions,
    private readonly runs: SessionRuns,
    private readonly loop: Loop,
  ) {}

  /** Loads the session manifest into the runtime and binds its phases to the kit's handlers. */
  static async create(options: SessionRunnerOptions): Promise<SessionRunner> {
    const runs: SessionRuns = new Map();
    const handlers = sessionHandlers(runs);
    for (const phase of SESSION_PHASES) options.runtime.handle(`${SESSION_LOOP_ID}/${phase}`, handlers[phase]);
    const loop = options.runtime.loop(SESSION_LOOP_ID) ?? (await options.runtime.load(packageFile(SESSION_MANIFEST)));
    return new SessionRunner(options, runs, loop);
  }

  /** Whether this process runs the session now. */
  isRunning(id: string): boolean {
    return this.runs.has(id);
  }

  /**
   * Resolves true once this process has taken the session (abortHere() then stops it), false
   * when a run of it ended without taking it: a handoff, so a caller that launched a run waits
   * for the exact moment it can act on it, never polls.
   */
  claimed(id: string): Promise<boolean> {
    return this.runs.has(id) ? Promise.resolve(true) : this.claims.wait(id);
  }

  /** Stops a session this process runs at once (the agent's process group with it). */
  abortHere(id: string): boolean {
    const run = this.runs.get(id);
    if (!run) return false;
    run.controller.abort(new Error("aborted"));
    return true;
  }

  /**
   * A signal to this process (SIGTERM, Ctrl-C): the session pauses after the current turn if
   * that turn ends within `graceMs`; when the grace runs out (or at once, on a second call) the
   * turn is stopped: the agent's group gets SIGTERM and what remains SIGKILL half a second later.
   * Either way the session ends `paused`, what the agent left kept in a recovery commit.
   */
  interrupt(id: string, why: string, graceMs: number): boolean {
    const run = this.runs.get(id);
    if (!run) return false;
    const stopNow = (killAfterMs: number) => {
      if (this.runs.get(id) !== run) return;
      run.controller.abort(new Error(why));
      void this.o.reaper?.reap(id, { graceMs: killAfterMs }).catch(() => undefined);
    };
    if (run.interrupted !== undefined) {
      clearTimeout(run.interruptTimer);
      stopNow(0);
      return true;
    }
    run.interrupted = why;
    run.interruptTimer = setTimeout(() => stopNow(500), graceMs);
    run.interruptTimer.unref();
    return true;
  }

  /**
   * Runs (or resumes) a session until it finishes, blocks, fails or is paused, and returns its
   * record then. `onEvent` sees everything a live view shows.
   */
  async run(id: string, options: { onEvent?: (e: SessionEvent) => void; lock?: WorktreeLock } = {}): Promise<SessionRecord> {
    const { records } = this.o;
    let s = await records.get(id);
    if (!s) throw new SessionError("NOT_FOUND", `no session ${id}`);
    id = s.id;
    if (isFinished(s.status)) {
      this.claims.settle(id, false);
      throw new SessionError("FINISHED", `session ${id} is ${s.status}: there is nothing to resume`);
    }
    if (this.runs.has(id) || (s.status === "running" && s.runner_pid !== process.pid && processAlive(s.runner_pid))) {
      if (!this.runs.has(id)) this.claims.settle(id, false);
      throw new SessionError("RUNNING", `session ${id} is already running (process ${s.runner_pid}); pause or abort it first`);
    }
    let lock: WorktreeLock;
    try {
      // A caller that took the lock already (to refuse a busy workspace before answering) hands it over.
      // The lock is the session's worktree (sessions in their own worktrees run side by side), or the checkout in place.
      lock = options.lock ?? (await lockWorktree(s.repo_path, workdirOf(s), `pulse session ${id}`));
    } catch (e) {
      this.claims.settle(id, false);
      throw new SessionError("LOCKED", `${workdirOf(s)}: ${(e as Error).message}`);
    }
    // Every event goes to the records too, for whoever follows the session from elsewhere.
    const log = new SessionEventLog(records, id, this.o.eventFlushMs);
    const emit = (e: SessionEvent) => {
      log.push(e);
      options.onEvent?.(e);
    };
    try {
      // What a dead runner of this session left is stopped before anything touches the tree.
      await this.o.reaper?.reap(id);
      const driver = this.o.driverFor(s);
      // pulse's store inside the repository stays out of `git status` (and an in-place session's evidence).
      if (this.o.stateDir) await excludeFromRepo(s.repo_path, this.o.stateDir);
      const resumed = s.current_iteration > 0;
      let branch: string | null;
      let found: Recovered;
      let opened: string | undefined;
      if (s.worktree_path) {
        // The user's checkout is never touched: the worktree (re)opens on the session's branch, and what a dead runner left there is kept.
        const how = await openWorkspace(s);
        if (how === "recreated") opened = `its worktree ${s.worktree_path} was recreated from branch ${s.branch_name}`;
        found = await recoverInterrupted(s, this.o.records, this.o.runtime.store);
        branch = s.branch_name;
      } else {
        found = await recoverInterrupted(s, this.o.records, this.o.runtime.store);
        branch = await useBranch(s.repo_path, s.branch_name);
      }
      const recovered = opened && found.note ? `${opened}; ${found.note}` : (opened ?? found.note);
      const { journaled } = found;
      // The iteration resumed (or run again from its start) is not counted as run yet.
      const unfinished = journaled?.number ?? found.rerun;
      if (found.rerun !== undefined) s = await records.update(id, { current_iteration: found.rerun - 1 });
      const resumedFrom = unfinished === undefined ? s : { ...s, current_iteration: unfinished - 1 };
      const resumedAfter = resumed && (s.status === "blocked" || s.status === "failed" || s.status === "paused") ? (s.status_reason ?? s.status) : undefined;
      // A stale pause is dropped, but an abort asked for while this runner was starting (a detached
      // session aborted at once) is kept: the loop acts on it before the first turn.
      const asked = (await records.get(id))?.control;
      const diedRunning = s.status === "running";
      s = await records.update(id, { status: "running", runner_pid: process.pid, control: asked === "abort" ? "abort" : null, stop_reason: null, status_reason: null, branch_name: branch });
      const previous = await records.iterations(id);
      const restored = guardRestored(resumedFrom);
      const run: SessionRun = {
        session: s,
        records,
        driver,
        profile: this.o.profile,
        guard: new LoopGuard(
          { ...this.o.profile.limits, maxIterations: s.max_iterations, ...guardBudgets(s) },
          Date.now,
          // Spend counts across resumes: what the session's earlier runs used, from its records.
          // A session the breaker stopped resumes half-open (that rule decides its next turn); any other goes on counting its streaks.
          { ...restored, tokens: s.total_tokens_used, costUsd: s.total_cost_usd, elapsedMs: turnTime(previous), ...(restored.breaker ? {} : { streaks: guardStreaks(previous.filter((i) => i.iteration_number !== journaled?.number)) }) },
        ),
        ledger: new CostLedger(),
        controller: new AbortController(),
        // The iteration the journal resumes is not a prior turn, though its record may be written: its learn phase remembers it.
        priorTurns: previous.filter((i) => i.finished_at && i.status !== "rate_limited" && i.iteration_number !== journaled?.number).map((i) => ({ id: turnId(i.iteration_number), iteration: i.iteration_number, summary: i.output_summary ?? "", signal: i.signal ?? "NONE", commit: i.commit_hash, files: i.files_changed, depth: i.anchor_depth ?? 0 })),
        priorStored: false,
        ...(resumedAfter ? { resumedAfter } : {}),
        ...(found.journaled?.phase === "dispatch_agent" ? { redispatch: { iteration: found.journaled.number, commit: found.commit ?? null, runnerPid: resumedFrom.runner_pid } } : {}),
        ...(this.o.processes ? { processes: this.o.processes } : {}),
        ...(this.o.checks ? { checks: this.o.checks } : {}),
        emit,
      };
      this.runs.set(id, run);
      this.claims.settle(id, true);
      emit({ type: "session.started", session: s, resumed, ...(recovered ? { recovered } : {}) });
      // Its runner died after an iteration's COMPLETE or BLOCKED ended the session, before the session's record said so: it ends so now, without another turn.
      const ended = diedRunning && unfinished === undefined ? endedBySignal(previous, s.current_iteration) : undefined;
      if (ended) return await this.stop(run, ended);
      await this.takeBaseline(run);
      return await this.iterate(run, journaled);
    } catch (e) {
      // Whatever stopped it, the records say so: a session is never left "running" with no runner.
      const now = await records.get(id).catch(() => undefined);
      if (now && (now.status === "running" || now.status === "pending")) {
        await records.update(id, { status: "failed", stop_reason: "failed", status_reason: `the session could not run: ${(e as Error).message}`, runner_pid: null, control: null }).catch(() => undefined);
      }
      throw e;
    } finally {
      await log.flush();
      clearTimeout(this.runs.get(id)?.interruptTimer);
      this.runs.delete(id);
      this.claims.settle(id, false);
      lock.release();
    }
  }

  /** Before the first turn: each check's exit and failures, what a COMPLETE is judged against. */
  private async takeBaseline(run: SessionRun): Promise<void> {
    const s = run.session;
    if (!s.verify || s.verify.baseline) return;
    if (!run.checks) throw new Error("this runner cannot run the session's checks (--verify)");
    const recording = await recordedProcesses(run, s.current_iteration);
    const runs = await run.checks(s.verify.checks, { cwd: workdirOf(s), timeoutMs: this.o.profile.verify.timeoutMs, signal: run.controller.signal, onSpawn: recording.onSpawn, marker: recording.marker }).finally(recording.done);
    const baseline = runs.map(baselineOf);
    run.session = await this.o.records.update(s.id, { verify: { ...s.verify, baseline } });
    run.emit({ type: "verify.baseline", session_id: s.id, checks: baseline });
  }

  private async iterate(run: SessionRun, journaled?: JournaledIteration): Promise<SessionRecord> {
    const { records } = this.o;
    const id = run.session.id;
    const poll = setInterval(() => {
      records.get(id).then(
        (s) => {
          if (s?.control === "abort") run.controller.abort(new Error("aborted"));
        },
        () => undefined,
      );
    }, run.profile.recordBranch.controlPollMs);
    poll.unref();
    try {
      let resuming = journaled;
      for (;;) {
        const s = (await records.get(id))!;
        if (s.control === "abort" || run.controller.signal.aborted || run.interrupted !== undefined) {
          // Stopped before the interrupted iteration went on: its record says so, it is not left in flight.
          const aborted = s.control === "abort" || run.controller.signal.aborted;
          if (resuming) await this.closeUnfinished(id, resuming.number, `${aborted ? "aborted" : run.interrupted} before this interrupted iteration was resumed`);
          return await (aborted ? this.finishAborted(run) : this.finishInterrupted(run));
        }
        if (s.control === "pause" && !resuming) return await this.finish(run, { status: "paused", control: null, status_reason: `paused after iteration ${s.current_iteration}` }, { kind: "info", message: `Session paused after iteration ${s.current_iteration}: resume with pulse session resume ${id}` });
        let number: number;
        let result: Awaited<ReturnType<Loop["runIteration"]>> | undefined;
        if (resuming) {
          // The journal's iteration goes on at the phase the crash cut short, under its number and trace.
          number = resuming.number;
          resuming = undefined;
          result = await this.loop.resumeFromJournal(id, () => undefined);
          if (!result) {
            // Another process resumed (or closed) it between the look and now: it is not run twice.
            await this.closeUnfinished(id, number, "interrupted: the journal no longer held it when it was to be resumed");
            continue;
          }
        } else {
          const before = run.guard.beforeIteration();
          if (before.action === "stop") return await this.stop(run, before);
          number = s.current_iteration + 1;
          result = await this.loop.runIteration({ workspace: id, input: { session_id: id, iteration: number } });
        }
        // The route phase's decision, carried through learn: the iteration's own output says what comes next.
        const out = result.status === "completed" ? (result.output as Learned | undefined) : undefined;
        if (!out?.decision) {
          const why = result.error?.message ?? `the iteration ended ${result.status}`;
          await this.closeUnfinished(id, number, why);
          if (run.controller.signal.aborted) return await this.finishAborted(run);
          return await this.stop(run, { reason: "failed", message: why });
        }
        const v = out.decision;
        run.emit({ type: "iteration.finished", session_id: id, iteration: out.record, verdict: v, warnings: out.warnings, receipt: out.receipt });
        if (v.action === "stop" && v.reason === "aborted") return await this.finishAborted(run);
        // A signal pauses the session next: "Continuing..." would be untrue.
        if (run.interrupted === undefined && out.record.status !== "rate_limited" && (v.action !== "stop" || (v.reason !== "completed" && v.reason !== "blocked"))) {
          const summary = out.record.status === "complete" ? (out.record.output_summary ?? "") : `the agent's call ended ${out.record.status} (${out.record.error ?? "no reason given"})`;
          this.o.notifier?.notify({ kind: "iteration", message: messages.iteration(number, run.session.max_iterations, summary), loopId: SESSION_LOOP_ID, sessionId: id, iteration: number });
        }
        if (v.action === "wait") {
          const paused = await this.waitRateLimit(run, number, v.ms, v.message);
          if (paused) return paused;
          continue;
        }
        if (v.action === "stop") return await this.stop(run, v);
      }
    } finally {
      clearInterval(poll);
    }
  }

  /** The iteration's record, if still in flight, ends failed with `why`. */
  private async closeUnfinished(id: string, number: number, why: string): Promise<void> {
    const open = (await this.o.records.iterations(id)).find((i) => i.iteration_number === number && !i.finished_at);
    if (open) await this.o.records.updateIteration(open.id, { status: "failed", error: why, finished_at: new Date().toISOString() });
  }

  /**
   * A rate-limited turn is no iteration: its number is taken again by the next turn. The wait is
   * shown and notified, and sat out in steps so a pause or abort acts at once; a wait longer
   * than the profile's cap pauses the session with the reset time instead.
   */
  private async waitRateLimit(run: SessionRun, number: number, ms: number, why: string): Promise<SessionRecord | undefined> {
    const { records } = this.o;
    const id = run.session.id;
    const until = new Date(Date.now() + ms);
    const at = `${until.toISOString().slice(11, 16)} UTC`;
    const cap = run.guard.limits.maxRateLimitWaitMs;
    run.session = await records.update(id, { current_iteration: number - 1 });
    if (ms > cap) {
      const reason = `rate limited until ${at} (${span(ms)}, longer than the ${span(cap)} the profile waits: limits.maxRateLimitWaitMs); resume after then with pulse session resume ${id.slice(0, 8)}`;
      return this.finish(run, { status: "paused", status_reason: reason, control: null }, { kind: "info", message: `Session paused: ${reason}` });
    }
    const line = `rate limited until ${at}, ${span(ms)}: pause or abort to stop`;
    run.session = await records.update(id, { status_reason: `waiting until ${at}: ${why}` });
    run.emit({ type: "session.waiting", session_id: id, iteration: number, until: until.toISOString(), message: `⏳ ${line}` });
    this.o.notifier?.notify({ kind: "waiting", message: line, loopId: SESSION_LOOP_ID, sessionId: id, iteration: number });
    const end = until.getTime();
    while (Date.now() < end && !run.controller.signal.aborted && run.interrupted === undefined) {
      if ((await records.get(id))?.control) break;
      await sleep(Math.min(run.profile.recordBranch.controlPollMs, end - Date.now()), run.controller.signal);
    }
    run.session = await records.update(id, { status_reason: null });
    return undefined;
  }

  /** The guard (or a failure) stopped the session: complete, blocked, or failed with the limit's reason. */
  private stop(run: SessionRun, stop: Stop): Promise<SessionRecord> {
    const s = run.session;
    if (stop.cap) {
      // A budget pauses: nothing is lost or killed for money; a resume with a raised cap goes on.
      const reason = `budget: ${stop.message}; raise it with pulse session resume ${s.id.slice(0, 8)} ${CAP_FLAGS[stop.cap]}`;
      return this.finish(run, { status: "paused", stop_reason: stop.reason, status_reason: reason, control: null }, { kind: "info", message: `Session paused after iteration ${s.current_iteration}: ${reason}` });
    }
    if (stop.reason === "completed") {
      return this.finish(run, { status: "complete", stop_reason: "completed", status_reason: stop.message }, { kind: "complete", message: messages.complete(s.current_iteration, s.total_commits) });
    }
    if (stop.reason === "blocked") return this.finish(run, { status: "blocked", stop_reason: "blocked", status_reason: stop.message }, { kind: "blocked", message: messages.blocked(stop.message) });
    return this.finish(run, { status: "failed", stop_reason: stop.reason, status_reason: stop.message }, { kind: "failed", message: `Session stopped (${stop.reason}): ${stop.message}` });
  }

  /** A signal stopped this process: paused, not aborted, with whatever the turn left in a recovery commit. */
  private async finishInterrupted(run: SessionRun): Promise<SessionRecord> {
    const s = run.session;
    const sha = await recoveryCommit(workdirOf(s), `session ${s.id}: work left by iteration ${s.current_iteration}, ${run.interrupted}`);
    const when = run.controller.signal.aborted ? "during" : "after";
    const reason = `${run.interrupted} ${when} iteration ${s.current_iteration}${sha ? `; what the agent left is in recovery commit ${sha.slice(0, 8)}` : ""}; resume with pulse session resume ${s.id}`;
    return this.finish(run, { status: "paused", control: null, status_reason: reason, ...(sha ? { total_commits: s.total_commits + 1 } : {}) }, { kind: "info", message: `Session paused: ${reason}` });
  }

  private async finishAborted(run: SessionRun): Promise<SessionRecord> {
    const s = run.session;
    if (run.interrupted !== undefined && (await this.o.records.get(s.id))?.control !== "abort") return this.finishInterrupted(run);
    const sha = await recoveryCommit(workdirOf(s), `session ${s.id} aborted during iteration ${s.current_iteration}`);
    const reason = `aborted during iteration ${s.current_iteration}${sha ? `; unfinished work kept in recovery commit ${sha.slice(0, 8)}` : ""}`;
    return this.finish(run, { status: "aborted", stop_reason: "aborted", status_reason: reason, control: null, ...(sha ? { total_commits: s.total_commits + 1 } : {}) }, { kind: "failed", message: `Session aborted: ${reason}` });
  }

  private async finish(run: SessionRun, patch: SessionPatch, note: { kind: "complete" | "blocked" | "failed" | "info"; message: string }): Promise<SessionRecord> {
    const cur = run.session;
    if (cur.worktree_path && (patch.status === "complete" || patch.status === "blocked")) {
      // Its branch stays for review; the worktree goes (a failed, aborted or paused one stays until `pulse session clean`).
      try {
        const sha = await closeWorkspace(cur.repo_path, cur.worktree_path, `session ${cur.id}: left uncommitted when it ended ${patch.status}`);
        if (sha) patch = { ...patch, total_commits: cur.total_commits + 1, status_reason: `${patch.status_reason ?? ""}; uncommitted work kept in recovery commit ${sha.slice(0, 8)}` };
      } catch (e) {
        patch = { ...patch, status_reason: `${patch.status_reason ?? ""}; its worktree could not be removed (pulse session clean retries): ${(e as Error).message}` };
      }
    }
    const s = await this.o.records.update(run.session.id, { ...patch, runner_pid: null });
    run.session = s;
    this.o.notifier?.notify({ ...note, loopId: SESSION_LOOP_ID, sessionId: s.id, data: { status: s.status, iterations: s.current_iteration, commits: s.total_commits } });
    run.emit({ type: "session.finished", session: s });
    return s;
  }
}

const CAP_FLAGS = { cost: "--max-cost USD", tokens: "--max-tokens N", wall: "--max-wall DURATION" } as const;

/** A wait as people say it: 45 s, 12 min, 1 h 55 min. */
function span(ms: number): string {
  if (ms < 60_000) return `${Math.ceil(ms / 1000)} s`;
  const min = Math.ceil(ms / 60_000);
  return min < 60 ? `${min} min` : `${Math.floor(min / 60)} h${min % 60 ? ` ${min % 60} min` : ""}`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
