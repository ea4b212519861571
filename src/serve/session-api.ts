/**
 * The session operations `pulse serve` and `pulse session mcp` offer (REST and MCP alike): a
 * started or resumed session runs in this process, in the background; pause and abort reach a
 * session wherever it runs (here directly, elsewhere through the records).
 *
 * Everything that would stop a start before its first iteration is found before the caller is
 * answered (the input, the driver and script, the branch, the repository's lock, the cap on
 * running sessions), and a runner that still fails leaves its session `failed` with the reason:
 * no session is ever `running` without a live runner behind it.
 */
import { realpathSync } from "node:fs";
import { resolve, sep } from "node:path";
import type { SessionEventRecord, SessionRecord } from "../coding/session/records.js";
import type { Notifier, NotifierChannel } from "../coding/notifier.js";
import { parseChannelSpec } from "../coding/notify/channels.js";
import type { SessionRunner } from "../coding/session/runner.js";
import { budgetsOf, startInputOf, SessionInputError, SessionStateError, type SessionDetail, type SessionService } from "../coding/session/service.js";
import type { CreatedBy } from "../coding/session/records.js";
import { lockWorktree, WorktreeError, type WorktreeLock } from "../coding/worktree.js";
import { workdirOf } from "../coding/session/workspace.js";
import { steerSession, steerSessionBySignal, type SignalSteered, type Steered } from "../coding/session/steer.js";
import { readSurprise } from "../coding/guidance/surprise.js";

/** A request the server was told not to honour (a script outside --allow-scripts). */
export class ForbiddenError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = "ForbiddenError";
  }
}

/** More sessions would run than the server allows (--max-sessions): try again later. */
export class BusyError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = "BusyError";
  }
}

/** The repository is already being worked on by another session. */
export class RepoBusyError extends Error {
  readonly field = "repo";
  constructor(message: string) {
    super(message);
    this.name = "RepoBusyError";
  }
}

export interface SessionApiOptions {
  /** Directories scripts of the scripted driver may be read from; none: every script is refused. */
  scriptDirs?: readonly string[];
  /** Sessions this process runs at once (start and resume beyond it are refused, retry later). */
  maxSessions?: number;
  onError?: (id: string, error: Error) => void;
  /** Channels a start may name (its `notify`); without it every named channel is refused. */
  notify?: {
    /** The channel kinds the server's profile allows from requests. */
    allowFromRequests: readonly string[];
    /** Builds channels with the server's environment (a SessionInputError when one cannot be). */
    channelsOf(specs: readonly string[]): NotifierChannel[];
    notifier: Notifier;
  };
}

export class SessionApi {
  private readonly running = new Map<string, Promise<SessionRecord | undefined>>();
  private readonly scriptDirs: string[];
  private readonly maxSessions: number;

  constructor(
    private readonly service: SessionService,
    private readonly runner: SessionRunner,
    private readonly options: SessionApiOptions = {},
  ) {
    this.scriptDirs = (options.scriptDirs ?? []).map((d) => realpathSync(resolve(d)));
    this.maxSessions = options.maxSessions ?? Number.POSITIVE_INFINITY;
  }

  /** Validates the body (errors name the field), records the session and starts it here. */
  async start(body: unknown, by: CreatedBy): Promise<SessionRecord> {
    const input = startInputOf(body);
    if (input.script !== undefined) this.checkScript(input.script);
    const channels = this.requestChannels(input.notify);
    this.checkCapacity();
    let lock: WorktreeLock | undefined;
    let s: SessionRecord;
    try {
      s = await this.service.create(input, by, async (draft) => {
        lock = await this.lockRepo(draft.repo_path, workdirOf(draft), draft.id);
      });
    } catch (e) {
      lock?.release();
      throw e;
    }
    this.options.notify?.notifier.attach(s.id, channels);
    await this.launch(s.id, lock!);
    return (await this.service.records.get(s.id))!;
  }

  /**
   * A start's `notify`: only kinds the server's profile allows, built with the server's secrets
   * (a request can name where to, never with what credentials).
   */
  private requestChannels(notify: unknown): NotifierChannel[] {
    if (notify === undefined || notify === null) return [];
    if (!Array.isArray(notify) || notify.some((v) => typeof v !== "string")) throw new SessionInputError("notify", `must be an array of channels like "telegram:123456789", got ${JSON.stringify(notify)}`);
    const specs = notify as string[];
    if (specs.length === 0) return [];
    if (specs.length > 10) throw new SessionInputError("notify", `names ${specs.length} channels; at most 10`);
    const allowed = this.options.notify?.allowFromRequests ?? [];
    for (const spec of specs) {
      let kind: string;
      try {
        kind = parseChannelSpec(spec).kind;
      } catch (e) {
        throw new SessionInputError("notify", (e as Error).message);
      }
      if (!allowed.includes(kind) || !this.options.notify) {
        throw new ForbiddenError("notify", `${kind} channels are not allowed from requests by this server (its profile's notify.allowFromRequests: ${allowed.length > 0 ? allowed.join(", ") : "none"})`);
      }
    }
    return this.options.notify!.channelsOf(specs);
  }

  status(id: string): Promise<SessionDetail> {
    return this.service.get(id);
  }

  /** A page of the session's event stream after seq `after`, and the seq to ask after next. */
  async events(id: string, after: unknown): Promise<{ events: SessionEventRecord[]; next: number }> {
    const { events, next } = await this.service.events(id, after);
    return { events, next };
  }

  list(status?: string): Promise<SessionRecord[]> {
    return this.service.list(status);
  }

  async pause(id: string): Promise<SessionRecord> {
    await this.settleOrphan(id);
    return (await this.service.pause(id)).session;
  }

  /** Steers a session wherever it runs: its guidance is written and recorded, pending until its agent acknowledges. */
  async steer(id: string, text: unknown, by: CreatedBy): Promise<Steered> {
    return steerSession(this.service.records, id, text, by);
  }

  /** A guidance sidecar's SurpriseSignal (CloudEvents envelope): validated, then the same steer, once per CloudEvents id. */
  async signal(id: string, envelope: unknown): Promise<SignalSteered> {
    return steerSessionBySignal(this.service.records, id, readSurprise(envelope));
  }

  /** `budgets` (maxCost, maxTokens, maxWall) raise the session's caps before it goes on. */
  async resume(id: string, budgets: { maxCost?: unknown; maxTokens?: unknown; maxWall?: unknown } = {}): Promise<SessionRecord> {
    const caps = budgetsOf(budgets);
    await this.settleOrphan(id);
    const { session, live } = await this.service.get(id);
    if (live || this.running.has(session.id)) throw new SessionStateError("NOT_RUNNING", `session ${session.id} is already running`);
    if (session.status === "complete" || session.status === "aborted") throw new SessionStateError("FINISHED", `session ${session.id} is ${session.status}: there is nothing to resume`);
    this.checkCapacity();
    if (Object.keys(caps).length > 0) await this.service.records.update(session.id, caps);
    const lock = await this.lockRepo(session.repo_path, workdirOf(session), session.id);
    await this.launch(session.id, lock);
    return (await this.service.records.get(session.id))!;
  }

  async abort(id: string): Promise<SessionRecord> {
    await this.settleOrphan(id);
    const { session } = await this.service.get(id);
    const run = this.running.get(session.id);
    if (run) {
      await this.service.records.requestControl(session.id, "abort");
      // Launched but maybe still setting up (locking, choosing its branch): the runner hands the run
      // over the moment it takes it (claimed), and it is stopped then; a run that ends first needs nothing.
      if (await Promise.race([this.runner.claimed(session.id), run.then(() => false)])) this.runner.abortHere(session.id);
      await run;
      return (await this.service.records.get(session.id))!;
    }
    if (this.runner.isRunning(session.id)) {
      await this.service.records.requestControl(session.id, "abort");
      this.runner.abortHere(session.id);
      return (await this.service.records.get(session.id))!;
    }
    return (await this.service.abort(session.id)).session;
  }

  /** Sessions this process runs, to wait for at shutdown. */
  async settled(): Promise<void> {
    await Promise.all(this.running.values());
  }

  /** Pauses what this process runs (at shutdown): each stops after its current iteration. */
  async pauseAll(): Promise<void> {
    for (const id of this.running.keys()) await this.service.records.requestControl(id, "pause");
  }

  /** At shutdown: each session run here pauses, its turn stopped if still going after `graceMs` (SessionRunner.interrupt). */
  async interruptAll(why: string, graceMs: number): Promise<void> {
    for (const id of this.running.keys()) {
      // One still setting up is paused through the records as soon as it runs.
      if (!this.runner.interrupt(id, why, graceMs)) await this.service.records.requestControl(id, "pause");
    }
  }

  /** A script is read only from a directory the server was told to allow: any client may name any path. */
  private checkScript(script: unknown): void {
    if (typeof script !== "string" || script.trim() === "") return; // the service names the field
    if (this.scriptDirs.length === 0) throw new ForbiddenError("script", "this server runs no scripts (start it with --allow-scripts DIR to allow the scripted driver's scripts from DIR)");
    let real: string;
    try {
      real = realpathSync(resolve(script.trim()));
    } catch {
      throw new SessionInputError("script", `${script.trim()}: no such file`);
    }
    if (!this.scriptDirs.some((d) => real.startsWith(d + sep))) throw new ForbiddenError("script", `${script.trim()} is outside the directories this server allows scripts from (${this.scriptDirs.join(", ")})`);
  }

  private checkCapacity(): void {
    if (this.running.size >= this.maxSessions) {
      throw new BusyError(`${this.running.size} sessions are running here, the most this server runs at once (--max-sessions ${this.maxSessions}): try again when one finishes`, 30);
    }
  }

  /** The session's worktree (so sessions in their own worktrees of one repository run side by side), or the checkout of an in-place one. */
  private async lockRepo(repo: string, workdir: string, id: string): Promise<WorktreeLock> {
    try {
      return await lockWorktree(repo, workdir, `pulse session ${id}`);
    } catch (e) {
      if (e instanceof WorktreeError && e.code === "LOCKED") throw new RepoBusyError(`another session is working in ${workdir}: ${e.message}`);
      throw e;
    }
  }

  /**
   * A session recorded as run by this process that nothing here runs (a runner that died
   * before it could say so): failed, so pause, abort and resume act on the truth.
   */
  private async settleOrphan(id: string): Promise<void> {
    const s = await this.service.records.get(id);
    if (!s || s.status !== "running" || s.runner_pid !== process.pid || this.running.has(s.id) || this.runner.isRunning(s.id)) return;
    await this.service.records.update(s.id, { status: "failed", stop_reason: "failed", status_reason: "its runner stopped without recording why", runner_pid: null, control: null });
  }

  private async launch(id: string, lock: WorktreeLock): Promise<void> {
    // Claimed before the runner takes it, so a status, pause or abort right after sees it running.
    await this.service.records.update(id, { status: "running", runner_pid: process.pid });
    const p = this.runner.run(id, { lock }).catch(async (e: Error) => {
      lock.release();
      this.options.onError?.(id, e);
      const s = await this.service.records.get(id).catch(() => undefined);
      if (s && s.status === "running" && (s.runner_pid === process.pid || s.runner_pid === null)) {
        await this.service.records.update(id, { status: "failed", stop_reason: "failed", status_reason: `the session could not run: ${e.message}`, runner_pid: null, control: null }).catch(() => undefined);
      }
      return undefined;
    });
    this.running.set(id, p);
    void p.finally(() => this.running.delete(id));
  }
}
