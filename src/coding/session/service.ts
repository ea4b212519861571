/**
 * The operations on sessions that every front end offers (CLI, REST, MCP): start (validated
 * input → a pending record), get, list, pause, abort, and whether a session can resume. Running
 * is the runner's; steering a session another process runs goes through the records.
 */
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { basename, resolve } from "node:path";
import { git } from "../git.js";
import { parseDuration } from "../../grammar/duration.js";
import type { Reaper } from "../reaper.js";
import { recoveryCommit } from "../worktree.js";
import { isFinished, SESSION_STATUSES, CONTEXT_STRATEGIES, type ContextStrategy, type CreatedBy, type IterationRecord, type NewSession, type SessionRecord, type SessionRecords, type SessionStatus, EVENTS_PAGE, type SessionEventRecord } from "./records.js";
import { processAlive, repoRoot } from "./repo.js";
import { displayedStatus } from "../run-records.js";
import { planWorkspace, workdirOf, worktreesDir, WorkspaceInputError } from "./workspace.js";

/** Bad input from a person or a client: what is wrong, naming the field. */
export class SessionInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
    this.name = "SessionInputError";
  }
}

export class SessionStateError extends Error {
  constructor(
    readonly code: "NOT_FOUND" | "FINISHED" | "NOT_RUNNING",
    message: string,
  ) {
    super(message);
    this.name = "SessionStateError";
  }
}

export interface StartInput {
  goal: unknown;
  repo?: unknown;
  projectName?: unknown;
  maxIterations?: unknown;
  branch?: unknown;
  anchor?: unknown;
  driver?: unknown;
  script?: unknown;
  model?: unknown;
  contextStrategy?: unknown;
  /** The commit (any ref) its branch starts from; default the user's HEAD. */
  base?: unknown;
  /** Work in the user's checkout (today's behaviour) rather than a worktree of its own. */
  inPlace?: unknown;
  /** With inPlace: accept a checkout with uncommitted or untracked files. */
  allowDirty?: unknown;
  /** A turn's wall-clock and silence limits: a duration (`20m`, `90s`) or milliseconds. */
  turnTimeout?: unknown;
  silenceTimeout?: unknown;
  /** Checks pulse runs itself (CLI and profile only: never from a REST or MCP request). */
  verify?: string[];
  verifyEach?: boolean;
  /** Channels to notify (`telegram:CHAT_ID`, …): checked by the server against its profile. */
  notify?: unknown;
  /** Budgets that pause the session when reached: dollars, tokens, a duration (`8h`). */
  maxCost?: unknown;
  maxTokens?: unknown;
  maxWall?: unknown;
}

const START_FIELDS = new Set(["goal", "repo", "projectPath", "projectName", "maxIterations", "branch", "base", "inPlace", "allowDirty", "anchor", "driver", "script", "model", "contextStrategy", "turnTimeout", "silenceTimeout", "notify", "maxCost", "maxTokens", "maxWall"]);

/** Checks a JSON body of a start request (REST, MCP); `projectPath` is the seed's name for `repo`. */
export function startInputOf(body: unknown): StartInput {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw new SessionInputError("body", "must be a JSON object, e.g. {\"goal\": \"Implement auth\", \"repo\": \"/path/to/repo\"}");
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (!START_FIELDS.has(k)) throw new SessionInputError(/^[A-Za-z_]\w*$/.test(k) ? k : JSON.stringify(k), `is not a field of a start request (fields: ${[...START_FIELDS].join(", ")})`);
  const { projectPath, ...rest } = b;
  return { ...rest, ...(rest.repo === undefined && projectPath !== undefined ? { repo: projectPath } : {}) } as StartInput;
}

/** A turn limit: a duration (`20m`, `90s`, `PT1H`) or whole milliseconds, from 1 s to 24 h. */
export function durationOf(field: string, v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  let ms: number | undefined;
  if (typeof v === "number") ms = v;
  else if (typeof v === "string") {
    const d = parseDuration(v.trim());
    ms = d.ok ? d.value : undefined;
  }
  if (ms === undefined || !Number.isInteger(ms) || ms < 1000 || ms > 86_400_000) throw new SessionInputError(field, `must be a duration from 1s to 24h (e.g. 20m, 90s), got ${JSON.stringify(v)}`);
  return ms;
}

/**
 * A session's budgets, from a start or resume request (strings from flags, numbers from JSON):
 * the fields given, as record columns. `field` names them as the caller spells them.
 */
export function budgetsOf(input: { maxCost?: unknown; maxTokens?: unknown; maxWall?: unknown }, names: { maxCost: string; maxTokens: string; maxWall: string } = { maxCost: "maxCost", maxTokens: "maxTokens", maxWall: "maxWall" }): { max_cost_usd?: number; max_tokens?: number; max_wall_ms?: number } {
  const out: { max_cost_usd?: number; max_tokens?: number; max_wall_ms?: number } = {};
  const num = (v: unknown) => (typeof v === "string" && /^\s*\$?\d+(\.\d+)?\s*$/.test(v) ? Number(v.trim().replace(/^\$/, "")) : v);
  if (input.maxCost !== undefined && input.maxCost !== null) {
    const v = num(input.maxCost);
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0 || v > 1_000_000) throw new SessionInputError(names.maxCost, `must be an amount of US dollars above 0, e.g. 5 or 0.50, got ${JSON.stringify(input.maxCost)}`);
    out.max_cost_usd = v;
  }
  if (input.maxTokens !== undefined && input.maxTokens !== null) {
    const v = num(input.maxTokens);
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1) throw new SessionInputError(names.maxTokens, `must be a whole number of tokens above 0, e.g. 2000000, got ${JSON.stringify(input.maxTokens)}`);
    out.max_tokens = v;
  }
  if (input.maxWall !== undefined && input.maxWall !== null) {
    let ms: number | undefined;
    if (typeof input.maxWall === "number") ms = input.maxWall;
    else if (typeof input.maxWall === "string") {
      const d = parseDuration(input.maxWall.trim());
      ms = d.ok ? d.value : undefined;
    }
    if (ms === undefined || !Number.isInteger(ms) || ms < 1000 || ms > 30 * 86_400_000) throw new SessionInputError(names.maxWall, `must be a duration from 1s to 30d (e.g. 8h, 90m), got ${JSON.stringify(input.maxWall)}`);
    out.max_wall_ms = ms;
  }
  return out;
}

/** A `running` record whose runner process is gone, shown as what it is: `interrupted`, with how to go on. */
export function shown(s: SessionRecord): SessionRecord {
  if (displayedStatus(s.status, s.runner_pid) !== "interrupted") return s;
  return { ...s, status: "interrupted", status_reason: `its runner (process ${s.runner_pid ?? "unknown"}) stopped while it ran: pulse session resume ${s.id.slice(0, 8)} continues it, abort ends it` };
}

function verifyOf(input: StartInput, defaults: { checks: string[]; each: boolean } | undefined): { verify?: { checks: string[]; each: boolean } } {
  const given = (input.verify ?? []).map((c) => c.trim());
  if (given.some((c) => c === "")) throw new SessionInputError("verify", "a check is a shell command, e.g. --verify 'npm test', not an empty string");
  const checks = [...new Set([...(defaults?.checks ?? []), ...given])];
  if (checks.length === 0) {
    if (input.verifyEach) throw new SessionInputError("verifyEach", "runs the checks after every iteration: give them with --verify CMD (or in the profile)");
    return {};
  }
  return { verify: { checks, each: input.verifyEach ?? defaults?.each ?? false } };
}

export interface SessionDefaults {
  driver: string;
  contextStrategy: ContextStrategy;
  maxIterations: number;
  /** The profile's checks, which every session runs (--verify adds to them). */
  verify?: { checks: string[]; each: boolean };
  /** Where session worktrees go (default worktreesDir() of the process's environment). */
  worktreesDir?: string;
  /** pulse's state directory: its files in a checkout never make it dirty. */
  stateDir?: string;
}

export interface SessionDetail {
  session: SessionRecord;
  iterations: IterationRecord[];
  /** Whether a live process runs it now. */
  live: boolean;
}

/** A session about to be recorded: checked (driver, script, branch) before anyone is told it started. */
export type SessionDraft = NewSession;

export class SessionService {
  constructor(
    readonly records: SessionRecords,
    private readonly defaults: SessionDefaults,
    /** Throws a SessionInputError naming the field when the session could not run as asked. */
    private readonly check: (draft: SessionDraft) => Promise<void> = async () => undefined,
    /** Stops what a dead runner left before an abort touches the tree. */
    private readonly reaper?: Reaper,
  ) {}

  /** Validates a start request and records the session as pending; the caller runs it. */
  async create(input: StartInput, createdBy: CreatedBy, before?: (draft: SessionDraft) => Promise<void>): Promise<SessionRecord> {
    const textOf = (field: string, v: unknown, required = false): string | undefined => {
      if (v === undefined || v === null) {
        if (required) throw new SessionInputError(field, "is required");
        return undefined;
      }
      if (typeof v !== "string" || v.trim() === "") throw new SessionInputError(field, `must be a non-empty string, got ${JSON.stringify(v)}`);
      return v.trim();
    };
    const goal = textOf("goal", input.goal, true)!;
    if (goal.length > 20_000) throw new SessionInputError("goal", `is ${goal.length} characters; at most 20000`);
    const repo = await repoRoot(resolve(textOf("repo", input.repo) ?? ".")).catch((e: Error) => {
      throw new SessionInputError("repo", e.message.replace(/^--repo /, ""));
    });
    let max = this.defaults.maxIterations;
    if (input.maxIterations !== undefined) {
      const v = typeof input.maxIterations === "string" && /^\d+$/.test(input.maxIterations) ? Number(input.maxIterations) : input.maxIterations;
      if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 1000) throw new SessionInputError("maxIterations", `must be a whole number from 1 to 1000, got ${JSON.stringify(input.maxIterations)}`);
      max = v;
    }
    const strategy = textOf("contextStrategy", input.contextStrategy) ?? this.defaults.contextStrategy;
    if (!CONTEXT_STRATEGIES.includes(strategy as ContextStrategy)) throw new SessionInputError("contextStrategy", `must be one of ${CONTEXT_STRATEGIES.join(", ")}, got ${JSON.stringify(strategy)}`);
    const driver = textOf("driver", input.driver) ?? this.defaults.driver;
    const script = textOf("script", input.script);
    if (driver === "scripted" && !script) throw new SessionInputError("script", "the scripted driver needs a script (a JSON or YAML file of steps)");
    if (script && driver !== "scripted") throw new SessionInputError("script", `only the scripted driver takes a script, not ${driver}`);
    const model = textOf("model", input.model);
    const timeoutMs = durationOf("turnTimeout", input.turnTimeout);
    const silenceTimeoutMs = durationOf("silenceTimeout", input.silenceTimeout);
    const budgets = budgetsOf(input);
    const branch = textOf("branch", input.branch);
    const anchor = textOf("anchor", input.anchor);
    const flag = (field: string, v: unknown): boolean => {
      if (v === undefined || v === null) return false;
      if (typeof v !== "boolean") throw new SessionInputError(field, `must be true or false, got ${JSON.stringify(v)}`);
      return v;
    };
    const inPlace = flag("inPlace", input.inPlace);
    const allowDirty = flag("allowDirty", input.allowDirty);
    if (allowDirty && !inPlace) throw new SessionInputError("allowDirty", "is for an in-place session (inPlace): a session in its own worktree never sees the checkout's uncommitted files");
    const base = textOf("base", input.base);
    const id = randomUUID();
    if (branch) {
      const valid = await git(repo, ["check-ref-format", "--branch", branch], { allowFail: true });
      if (valid.code !== 0) throw new SessionInputError("branch", `${JSON.stringify(branch)} is not a valid git branch name`);
    }
    const workspace = await planWorkspace(repo, id, {
      ...(branch ? { branch } : {}),
      ...(base ? { base } : {}),
      inPlace,
      allowDirty,
      dir: this.defaults.worktreesDir ?? worktreesDir(),
      ...(this.defaults.stateDir ? { stateDir: this.defaults.stateDir } : {}),
    }).catch((e: Error) => {
      throw e instanceof WorkspaceInputError ? new SessionInputError(e.field, e.message) : e;
    });
    const draft: SessionDraft = {
      id,
      project_name: textOf("projectName", input.projectName) ?? basename(repo),
      goal,
      max_iterations: max,
      repo_path: repo,
      driver: { name: driver, ...(script ? { script: resolve(script) } : {}), ...(model ? { model } : {}), ...(timeoutMs ? { timeoutMs } : {}), ...(silenceTimeoutMs ? { silenceTimeoutMs } : {}) },
      context_strategy: strategy as ContextStrategy,
      created_by: createdBy,
      ...workspace,
      ...budgets,
      ...(anchor ? { anchor_turn_id: anchor } : {}),
      ...verifyOf(input, this.defaults.verify),
    };
    await this.check(draft);
    await before?.(draft);
    return this.records.create(draft);
  }

  /** The session as it is: a `running` one whose runner is gone is shown `interrupted`. */
  async get(id: string): Promise<SessionDetail> {
    const session = await this.records.get(id);
    if (!session) throw new SessionStateError("NOT_FOUND", `no session ${id} (pulse session list shows them)`);
    return { session: shown(session), iterations: await this.records.iterations(session.id), live: session.status === "running" && processAlive(session.runner_pid) };
  }

  /**
   * A page of the session's event stream after seq `after` (a whole number; text from a client is
   * checked here), and the seq to ask after next. NOT_FOUND for an unknown session.
   */
  async events(id: string, after: unknown = 0, limit = EVENTS_PAGE): Promise<{ session: SessionRecord; events: SessionEventRecord[]; next: number }> {
    const seq = typeof after === "string" && /^\d{1,15}$/.test(after) ? Number(after) : after;
    if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq < 0) throw new SessionInputError("after", `must be a whole number of events already read (0 or more), got ${JSON.stringify(after)}`);
    const session = await this.records.get(id);
    if (!session) throw new SessionStateError("NOT_FOUND", `no session ${id} (pulse session list shows them)`);
    const events = await this.records.events(session.id, seq, limit);
    return { session: shown(session), events, next: events.at(-1)?.seq ?? seq };
  }

  async list(status?: string): Promise<SessionRecord[]> {
    if (status !== undefined && !SESSION_STATUSES.includes(status as SessionStatus)) throw new SessionInputError("status", `must be one of ${SESSION_STATUSES.join(", ")}, got ${JSON.stringify(status)}`);
    if (status === undefined) return (await this.records.list({})).map(shown);
    const stored = status === "interrupted" ? "running" : (status as SessionStatus);
    return (await this.records.list({ status: stored })).map(shown).filter((s) => s.status === status);
  }

  /**
   * Pauses after the current iteration when a live runner has it (it reads the request from the
   * records); a session nothing runs (pending, or whose runner died) is paused at once.
   */
  async pause(id: string): Promise<{ session: SessionRecord; immediate: boolean }> {
    const { session: s, live } = await this.get(id);
    if (isFinished(s.status)) throw new SessionStateError("FINISHED", `session ${s.id} is ${s.status}: there is nothing to pause`);
    if (live) return { session: await this.records.requestControl(s.id, "pause"), immediate: false };
    if (s.status === "pending" || s.status === "running" || s.status === "interrupted") return { session: await this.records.update(s.id, { status: "paused", status_reason: s.status === "interrupted" ? "paused after its runner stopped" : "paused before it ran on", runner_pid: null }), immediate: true };
    throw new SessionStateError("NOT_RUNNING", `session ${s.id} is ${s.status}, not running: there is nothing to pause (resume it, or abort it)`);
  }

  /**
   * Aborts: a live runner is asked through the records (it stops the agent at once); a session
   * nothing runs is aborted here, its unfinished work kept in a recovery commit.
   */
  async abort(id: string): Promise<{ session: SessionRecord; immediate: boolean }> {
    const { session: s, live } = await this.get(id);
    if (isFinished(s.status)) throw new SessionStateError("FINISHED", `session ${s.id} is already ${s.status}`);
    if (live) return { session: await this.records.requestControl(s.id, "abort"), immediate: false };
    // An agent its dead runner left would go on editing the tree after the recovery commit.
    await this.reaper?.reap(s.id);
    // Its worktree (kept until `pulse session clean`), or the checkout of an in-place session.
    const sha = existsSync(workdirOf(s)) ? await recoveryCommit(workdirOf(s), `session ${s.id} aborted while ${s.status}`).catch(() => null) : null;
    for (const i of await this.records.iterations(s.id)) {
      if (i.status === "pending" || i.status === "dispatched" || i.status === "running") await this.records.updateIteration(i.id, { status: "failed", error: "aborted", finished_at: new Date().toISOString() });
    }
    const reason = `aborted while ${s.status}${sha ? `; unfinished work kept in recovery commit ${sha.slice(0, 8)}` : ""}`;
    return { session: await this.records.update(s.id, { status: "aborted", stop_reason: "aborted", status_reason: reason, control: null, runner_pid: null, ...(sha ? { total_commits: s.total_commits + 1 } : {}) }), immediate: true };
  }

  /** Waits (polling the records) until a live runner has acted on a control request. */
  async settle(id: string, done: (s: SessionRecord) => boolean, timeoutMs: number): Promise<SessionRecord> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const s = (await this.records.get(id))!;
      if (done(s) || Date.now() > end) return s;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
