/**
 * Workflows and agent runs in the studio: a RunSource per kind read through the common run view
 * (src/coding/run-records.ts), so their status is displayed as everywhere else (`interrupted`
 * when the runner is gone). Read-only here: a workflow is stopped and resumed with `pulse
 * workflow` (or its REST/MCP), an agent run is its own process's to abort.
 */
import { HttpError } from "../serve/rest.js";
import type { RunKind, RunRecords, RunStepView, RunView } from "../coding/run-records.js";
import type { RunDetail, RunIteration, RunSource, RunSummary } from "./runs.js";

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

export function viewSummary(r: RunView): RunSummary {
  return {
    kind: r.kind,
    id: r.id,
    status: r.status,
    goal: r.goal,
    iteration: r.iteration,
    max_iterations: r.max_iterations,
    commits: r.commits.length,
    cost_usd: r.cost_usd,
    tokens: r.tokens,
    budget: { max_cost_usd: null, max_tokens: null, max_wall_ms: null },
    control: str(r.payload.control),
    status_reason: r.status_reason,
    updated_at: r.updated_at,
  };
}

function stepIteration(s: RunStepView): RunIteration {
  return {
    number: s.number,
    status: s.status,
    signal: s.signal,
    summary: s.summary,
    files: s.files_changed,
    commit: s.commit,
    gate: s.gate as RunIteration["gate"],
    receipt: null,
    cost_usd: s.cost_usd,
    tokens: s.tokens,
    error: s.error,
    output_tail: null,
    started_at: s.started_at ?? "",
    finished_at: s.finished_at,
    task: s.task,
    payload: s.payload,
  };
}

export class RecordRuns implements RunSource {
  constructor(
    readonly kind: Exclude<RunKind, "session">,
    private readonly records: RunRecords,
  ) {}

  async list(): Promise<RunSummary[]> {
    return (await this.records.list({ kind: this.kind })).map(viewSummary);
  }

  async get(id: string): Promise<RunDetail> {
    const run = await this.records.get(this.kind, id);
    if (!run) throw new HttpError(404, "NOT_FOUND", `no ${this.kind} run ${id}`);
    const steps = await this.records.steps(this.kind, run.id);
    return {
      run: viewSummary(run),
      live: run.status === "running",
      branch: str(run.payload.branch_name),
      repo: str(run.payload.repo_path) ?? str(run.payload.workdir) ?? "",
      baseline: null,
      iterations: steps.map(stepIteration),
      pending_replans: [],
      payload: run.payload,
      stop_reason: run.stop_reason,
    };
  }

  async control(): Promise<RunSummary> {
    throw new HttpError(409, "NOT_HERE", this.kind === "workflow" ? "a workflow is stopped and resumed with pulse workflow stop|resume (or pulse serve's /api/workflows), not from the studio" : "an agent run is aborted by its own process (Ctrl-C on pulse agent run)");
  }
}
