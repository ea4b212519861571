/**
 * Coding runs as the studio lists them: one contract for every kind (sessions here; workflows
 * and agent runs in record-runs.ts, through the common run view), read through each kind's records and service,
 * never around them. A control is reported done only when the records say the runner acted on
 * it (`acknowledged`); a run whose runner is gone is shown as the records' service shows it
 * (`interrupted`).
 */
import type { SessionApi } from "../serve/session-api.js";
import type { IterationRecord, SessionRecord } from "../coding/session/records.js";

export interface RunSummary {
  kind: string;
  id: string;
  status: string;
  goal: string;
  iteration: number;
  max_iterations: number;
  commits: number;
  cost_usd: number;
  tokens: number;
  budget: { max_cost_usd: number | null; max_tokens: number | null; max_wall_ms: number | null };
  /** A control asked for and not yet acted on by the runner (pause, abort), else null. */
  control: string | null;
  status_reason: string | null;
  updated_at: string;
}

export interface RunIteration {
  number: number;
  status: string;
  signal: string | null;
  summary: string | null;
  files: string[];
  commit: string | null;
  gate: IterationRecord["gate"];
  /** What the turn cost, itemised (model, tokens by kind, where the price came from). */
  receipt: IterationRecord["receipt"];
  cost_usd: number;
  tokens: number;
  error: string | null;
  /** The last 2,000 characters of the agent's output. */
  output_tail: string | null;
  started_at: string;
  finished_at: string | null;
  /** Workflows and agent runs: what the iteration worked on (a pulse's title, the plan step), and the loop's own fields. */
  task?: string;
  payload?: Record<string, unknown>;
}

export interface RunDetail {
  run: RunSummary;
  live: boolean;
  branch: string | null;
  repo: string;
  baseline: { command: string; exit: number; failures: string[] }[] | null;
  iterations: RunIteration[];
  /** Guidance given (steered, or edited in its working directory) that the agent has not yet acknowledged with a replan. */
  pending_replans: { event_id: string | null; at: string; text: string | null; files: string[]; deferred: boolean }[];
  /** Workflows and agent runs: the run's own fields and why it stopped. */
  payload?: Record<string, unknown>;
  stop_reason?: string | null;
}

export type RunAction = "pause" | "resume" | "abort" | "steer";

export interface RunSource {
  readonly kind: string;
  list(): Promise<RunSummary[]>;
  get(id: string): Promise<RunDetail>;
  /** Acts through the kind's service; `body` carries a resume's raised budgets. */
  control(id: string, action: RunAction, body: Record<string, unknown>): Promise<RunSummary>;
}

const TAIL = 2000;
/** A session's event stream read for its pending replans: at most this many pages of 500. */
const MAX_EVENT_PAGES = 40;

export function sessionSummary(s: SessionRecord): RunSummary {
  return {
    kind: "session",
    id: s.id,
    status: s.status,
    goal: s.goal,
    iteration: s.current_iteration,
    max_iterations: s.max_iterations,
    commits: s.total_commits,
    cost_usd: s.total_cost_usd,
    tokens: s.total_tokens_used,
    budget: { max_cost_usd: s.max_cost_usd, max_tokens: s.max_tokens, max_wall_ms: s.max_wall_ms },
    control: s.control,
    status_reason: s.status_reason,
    updated_at: s.updated_at,
  };
}

function iterationOf(i: IterationRecord): RunIteration {
  return {
    number: i.iteration_number,
    status: i.status,
    signal: i.signal,
    summary: i.output_summary,
    files: i.files_changed,
    commit: i.commit_hash,
    gate: i.gate,
    receipt: i.receipt ?? null,
    cost_usd: i.cost_usd,
    tokens: i.tokens_used,
    error: i.error,
    output_tail: i.output_full === null ? null : i.output_full.slice(-TAIL),
    started_at: i.started_at,
    finished_at: i.finished_at,
  };
}

/** Sessions (src/coding/session), through the same SessionApi `pulse serve` uses. */
export class SessionRuns implements RunSource {
  readonly kind = "session";
  constructor(private readonly api: SessionApi) {}

  async list(): Promise<RunSummary[]> {
    return (await this.api.list()).map(sessionSummary);
  }

  async get(id: string): Promise<RunDetail> {
    const d = await this.api.status(id);
    return {
      run: sessionSummary(d.session),
      live: d.live,
      branch: d.session.branch_name,
      repo: d.session.repo_path,
      baseline: d.session.verify?.baseline ?? null,
      iterations: d.iterations.map(iterationOf),
      pending_replans: await this.pendingReplans(d.session.id),
    };
  }

  /**
   * From the session's event stream: steers and holds not followed by an accepted acknowledgement.
   * A steer given while the session's worktree was gone is deferred (no guidance event yet) until
   * the session applies it, which names its event.
   */
  private async pendingReplans(id: string): Promise<RunDetail["pending_replans"]> {
    let pending: (RunDetail["pending_replans"][number] & { seq: number })[] = [];
    let after = 0;
    for (let page = 0; page < MAX_EVENT_PAGES; page++) {
      const { events, next } = await this.api.events(id, after);
      for (const e of events) {
        const d = e.data as { type?: string; event_id?: string | null; text?: string; files?: string[]; deferred?: boolean; steer_seq?: number; ack?: { accepted?: boolean } };
        if (d.type === "guidance.steered" || d.type === "guidance.held") {
          const known = typeof d.event_id === "string" && pending.some((p) => p.event_id === d.event_id);
          if (!known) pending.push({ seq: e.seq, event_id: d.event_id ?? null, at: e.at, text: d.text ?? null, files: d.files ?? [], deferred: d.deferred === true && !d.event_id });
        } else if (d.type === "guidance.steer_applied") {
          const steer = pending.find((p) => p.seq === d.steer_seq);
          if (steer && typeof d.event_id === "string") Object.assign(steer, { event_id: d.event_id, deferred: false });
        } else if (d.type === "guidance.acknowledged" && d.ack?.accepted) pending = [];
      }
      if (events.length === 0 || next === after) break;
      after = next;
    }
    return pending.map(({ seq: _seq, ...p }) => p);
  }

  async control(id: string, action: RunAction, body: Record<string, unknown>): Promise<RunSummary> {
    if (action === "steer") return sessionSummary((await this.api.steer(id, body.text, "api")).session);
    const s = action === "resume" ? await this.api.resume(id, body) : action === "pause" ? await this.api.pause(id) : await this.api.abort(id);
    return sessionSummary(s);
  }
}

/** Every kind's runs together, newest first. */
export class Runs {
  private readonly sources = new Map<string, RunSource>();
  constructor(sources: readonly RunSource[]) {
    for (const s of sources) this.sources.set(s.kind, s);
  }

  get kinds(): string[] {
    return [...this.sources.keys()];
  }

  source(kind: string): RunSource | undefined {
    return this.sources.get(kind);
  }

  async list(): Promise<RunSummary[]> {
    const all = (await Promise.all([...this.sources.values()].map((s) => s.list()))).flat();
    return all.sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0));
  }
}
