/**
 * The workflow operations `pulse serve` offers over REST and MCP: start (the plan's text, a
 * repository on this machine), status (the review summary), list, events, stop, resume and steer.
 * Workflows started or resumed here run in this process; stop goes through the records, so it
 * reaches a workflow run by any process. A client names no command to run: the checks are the
 * preflight's and the profile's (as for sessions, docs/decisions.md), and a script only from a
 * directory the server allows.
 */
import { existsSync, realpathSync } from "node:fs";
import { resolve, sep } from "node:path";
import { startWorkflow, type StartDeps } from "../coding/workflow/service.js";
import { steerWorkflow, steerWorkflowBySignal, workflowSteerText, type WorkflowSteered } from "../coding/workflow/steer.js";
import { readSurprise } from "../coding/guidance/surprise.js";
import type { WorkflowRecord, WorkflowRecords } from "../coding/workflow/records.js";
import type { WorkflowRunner } from "../coding/workflow/runner.js";
import { WorkflowInputError } from "../coding/workflow/workspace.js";
import { shownStatus, summaryOf, type ReviewSummary } from "../cli/workflow-view.js";
import { BusyError, ForbiddenError } from "./session-api.js";

export class WorkflowStateError extends Error {
  constructor(
    readonly code: "NOT_FOUND" | "NOT_RUNNING" | "RUNNING" | "FINISHED",
    message: string,
  ) {
    super(message);
    this.name = "WorkflowStateError";
  }
}

export interface WorkflowApiOptions {
  scriptDirs?: readonly string[];
  maxRunning?: number;
  onError?: (id: string, e: Error) => void;
}

const START_FIELDS = new Set(["plan", "planName", "repo", "base", "branch", "driver", "script", "model", "merge"]);

export class WorkflowApi {
  private readonly running = new Map<string, Promise<unknown>>();
  private readonly scriptDirs: string[];

  constructor(
    private readonly records: WorkflowRecords,
    private readonly runner: WorkflowRunner,
    private readonly deps: Omit<StartDeps, "records">,
    private readonly options: WorkflowApiOptions = {},
  ) {
    this.scriptDirs = (options.scriptDirs ?? []).map((d) => realpathSync(resolve(d)));
  }

  async start(body: unknown): Promise<ReviewSummary> {
    if (!body || typeof body !== "object" || Array.isArray(body)) throw new WorkflowInputError("body", "must be a JSON object: {plan, repo, base?, driver?, …}");
    const b = body as Record<string, unknown>;
    for (const k of Object.keys(b)) if (!START_FIELDS.has(k)) throw new WorkflowInputError(k, `unknown field (the fields are ${[...START_FIELDS].join(", ")}${k === "verify" ? "; checks are named by the profile and the preflight, never by a request" : ""})`);
    for (const k of START_FIELDS) if (b[k] !== undefined && typeof b[k] !== "string") throw new WorkflowInputError(k, "must be a string");
    if (typeof b.plan !== "string" || !b.plan.trim()) throw new WorkflowInputError("plan", "required: the plan's text (Markdown, one pulse per list item, or JSON)");
    if (typeof b.repo !== "string" || !b.repo.trim()) throw new WorkflowInputError("repo", "required: the path of a git repository on the server's machine");
    if (b.script !== undefined) this.checkScript(b.script as string);
    this.checkCapacity();
    const w = await startWorkflow({ plan: b.plan, planName: (b.planName as string | undefined) ?? "plan.md", repo: resolve(b.repo), ...pick(b, ["base", "branch", "driver", "script", "model", "merge"]) }, { ...this.deps, records: this.records });
    this.launch(w.id);
    return this.status(w.id);
  }

  async status(id: string): Promise<ReviewSummary> {
    const w = await this.found(id);
    return summaryOf(w, await this.records.pulses(w.id), await this.records.preflight(w.id), await this.records.baselines(w.id), existsSync(w.worktree_path));
  }

  async list(): Promise<{ id: string; title: string; status: string; branch: string; created_at: string }[]> {
    return (await this.records.list()).map((w) => ({ id: w.id, title: w.title, status: shownStatus(w), branch: w.branch_name, created_at: w.created_at }));
  }

  async events(id: string, after = 0): Promise<{ events: unknown[]; next: number }> {
    const w = await this.found(id);
    const events = await this.records.events(w.id, after);
    return { events, next: events.at(-1)?.seq ?? after };
  }

  async stop(id: string): Promise<ReviewSummary> {
    const w = await this.found(id);
    if (shownStatus(w) !== "running") throw new WorkflowStateError("NOT_RUNNING", `workflow ${w.id} is ${shownStatus(w)}, not running`);
    await this.records.update(w.id, { control: "stop" });
    return this.status(w.id);
  }

  /** New guidance for the workflow's next pulse turn (held to replan and acknowledge); deferred while it has no worktree. */
  async steer(id: string, text: unknown, by: "api" | "mcp"): Promise<Pick<WorkflowSteered, "event" | "deferred"> & { workflow: ReviewSummary }> {
    workflowSteerText(text);
    const w = await this.found(id);
    if (w.status === "completed" || w.status === "abandoned") throw new WorkflowStateError("FINISHED", `workflow ${w.id} is ${w.status}: there is nothing left to steer`);
    const r = await steerWorkflow(this.records, w.id, text, by);
    return { workflow: await this.status(w.id), event: r.event, deferred: r.deferred };
  }

  /** A guidance sidecar's SurpriseSignal (CloudEvents envelope): validated, then the same steer, once per CloudEvents id. */
  async signal(id: string, envelope: unknown): Promise<Pick<WorkflowSteered, "event" | "deferred"> & { workflow: ReviewSummary; duplicate: boolean }> {
    const received = readSurprise(envelope);
    const w = await this.found(id);
    const r = await steerWorkflowBySignal(this.records, w.id, received);
    return { workflow: await this.status(w.id), event: r.event, deferred: r.deferred, duplicate: r.duplicate };
  }

  async resume(id: string): Promise<ReviewSummary> {
    const w = await this.found(id);
    const shown = shownStatus(w);
    if (shown === "running" || this.running.has(w.id)) throw new WorkflowStateError("RUNNING", `workflow ${w.id} is running`);
    if (w.status === "completed" || w.status === "abandoned") throw new WorkflowStateError("FINISHED", `workflow ${w.id} is ${w.status}: there is nothing to resume`);
    this.checkCapacity();
    this.launch(w.id);
    return this.status(w.id);
  }

  /** On shutdown: every workflow running here is stopped (its work kept in recovery commits). */
  stopAll(why: string): void {
    for (const id of this.running.keys()) this.runner.stopHere(id, why);
  }

  async settled(): Promise<void> {
    await Promise.all([...this.running.values()]);
  }

  private launch(id: string): void {
    const p = this.runner.run(id).catch((e: Error) => this.options.onError?.(id, e));
    this.running.set(id, p);
    void p.finally(() => this.running.delete(id));
  }

  private async found(id: string): Promise<WorkflowRecord> {
    const w = await this.records.get(id);
    if (!w) throw new WorkflowStateError("NOT_FOUND", `no workflow ${id}`);
    return w;
  }

  private checkCapacity(): void {
    const max = this.options.maxRunning ?? 4;
    if (this.running.size >= max) throw new BusyError(`${this.running.size} workflows are running here, the most this server runs at once: try again when one finishes`, 30);
  }

  private checkScript(script: string): void {
    if (this.scriptDirs.length === 0) throw new ForbiddenError("script", "this server runs no scripts (start it with --allow-scripts DIR to allow the scripted driver's scripts from DIR)");
    let real: string;
    try {
      real = realpathSync(resolve(script));
    } catch {
      throw new WorkflowInputError("script", `${script}: no such file`);
    }
    if (!this.scriptDirs.some((d) => real.startsWith(d + sep))) throw new ForbiddenError("script", `${script} is outside the directories this server allows scripts from (${this.scriptDirs.join(", ")})`);
  }
}

function pick(b: Record<string, unknown>, keys: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of keys) if (typeof b[k] === "string") out[k] = b[k] as string;
  return out;
}
