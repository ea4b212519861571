/**
 * The progress circuit breaker and the loop guard: what decides, before and after each
 * iteration, whether a coding loop goes on, waits or stops, and why. Its state is plain JSON,
 * persisted by the loop, so a restart neither forgets an open breaker nor carries stale
 * counters into a new run (counters reset at start; the breaker's state survives).
 */
import { resolveLimits, type Limits, type StopReason } from "./limits.js";

export type BreakerState = "CLOSED" | "HALF_OPEN" | "OPEN";

export interface GuardState {
  breaker: BreakerState;
  /** When the breaker opened (ms since epoch). */
  openedAt?: number;
  openReason?: string;
  iterations: number;
  tokens: number;
  costUsd: number;
  startedAt: number;
  consecutiveFailures: number;
  noProgress: number;
  sameError: number;
  lastError?: string;
  permissionDenials: number;
}

export interface Stop {
  reason: StopReason;
  message: string;
  /** Set when a budget (cost, tokens, wall time) stopped it: a session pauses then, to be resumed with a raised cap. */
  cap?: "cost" | "tokens" | "wall";
}

export type Verdict = { action: "continue" } | { action: "wait"; ms: number; message: string } | ({ action: "stop" } & Stop);

export interface IterationReport {
  /** The agent call's status (AgentResult.status). */
  status: "ok" | "rate_limited" | "max_turns" | "budget" | "timeout" | "error" | "aborted";
  signal?: "CONTINUE" | "COMPLETE" | "BLOCKED";
  signalReason?: string;
  /** Git evidence: a commit or changed files. */
  progress: boolean;
  tokens: number;
  costUsd: number;
  error?: string;
  permissionDenials?: number;
  retryAfterMs?: number;
}

const DEFAULT_RATE_LIMIT_WAIT_MS = 60_000;

/** The runs the breaker counts: no progress, failures and the same error in a row. */
export type Streaks = Pick<GuardState, "consecutiveFailures" | "noProgress" | "sameError" | "lastError">;

/**
 * The streaks a loop's earlier turns left, counted by the guard's own rules (every limit off, so
 * nothing stops the count): what a resumed loop goes on from, as if it had never stopped.
 */
export function streaksOf(turns: Iterable<IterationReport>): Streaks {
  const g = new LoopGuard({ maxIterations: Number.MAX_SAFE_INTEGER, noProgressLimit: 0, sameErrorLimit: 0, permissionDenialLimit: 0, maxConsecutiveFailures: 0 });
  for (const t of turns) g.afterIteration(t);
  const { consecutiveFailures, noProgress, sameError, lastError } = g.state();
  return { consecutiveFailures, noProgress, sameError, ...(lastError !== undefined ? { lastError } : {}) };
}

export class LoopGuard {
  readonly limits: Limits;
  private s: GuardState;

  /**
   * `restored.iterations`: those a resumed loop ran before, counted against maxIterations; its
   * tokens, cost and `elapsedMs` (wall time of earlier runs) count against the budgets.
   */
  constructor(limits: Partial<Limits> = {}, private readonly now: () => number = Date.now, restored?: Partial<Pick<GuardState, "breaker" | "openedAt" | "openReason" | "iterations" | "tokens" | "costUsd">> & { elapsedMs?: number; streaks?: Streaks }) {
    this.limits = resolveLimits(limits);
    this.s = { breaker: restored?.breaker ?? "CLOSED", iterations: restored?.iterations ?? 0, tokens: restored?.tokens ?? 0, costUsd: restored?.costUsd ?? 0, startedAt: now() - (restored?.elapsedMs ?? 0), consecutiveFailures: 0, noProgress: 0, sameError: 0, permissionDenials: 0, ...restored?.streaks };
    if (restored?.openedAt !== undefined) this.s.openedAt = restored.openedAt;
    if (restored?.openReason !== undefined) this.s.openReason = restored.openReason;
  }

  state(): GuardState {
    return { ...this.s };
  }

  /** Before dispatching the next iteration: caps are checked here, so a spend cap is enforced, not just shown. */
  beforeIteration(): Verdict {
    const l = this.limits;
    const s = this.s;
    if (s.breaker === "OPEN") {
      const left = (s.openedAt ?? 0) + l.cooldownMs - this.now();
      if (left > 0) return { action: "stop", reason: "circuit_open", message: `the circuit breaker is open (${s.openReason ?? "no progress"}); it half-opens in ${Math.ceil(left / 60_000)} min` };
      s.breaker = "HALF_OPEN";
    }
    if (l.maxIterations > 0 && s.iterations >= l.maxIterations) return { action: "stop", reason: "max_iterations", message: `reached the limit of ${l.maxIterations} iterations` };
    if (l.maxWallMs !== undefined && this.now() - s.startedAt >= l.maxWallMs) return { action: "stop", reason: "timeout", cap: "wall", message: `ran ${seconds(this.now() - s.startedAt)} of the ${seconds(l.maxWallMs)} wall-time cap` };
    if (l.maxCostUsd !== undefined && s.costUsd >= l.maxCostUsd) return { action: "stop", reason: "budget_exhausted", cap: "cost", message: `spent $${s.costUsd.toFixed(4)} of the $${l.maxCostUsd} cap${overshoot(s.costUsd, l.maxCostUsd, "$")}` };
    if (l.maxTokens !== undefined && s.tokens >= l.maxTokens) return { action: "stop", reason: "budget_exhausted", cap: "tokens", message: `used ${s.tokens} of the ${l.maxTokens} token cap${overshoot(s.tokens, l.maxTokens, "")}` };
    return { action: "continue" };
  }

  /** After an iteration: counts it, then continue, wait (rate limit) or stop with a reason. */
  afterIteration(r: IterationReport): Verdict {
    const l = this.limits;
    const s = this.s;
    s.tokens += r.tokens;
    s.costUsd += r.costUsd;
    if (r.status === "aborted") return { action: "stop", reason: "aborted", message: "aborted" };
    // A rate limit is a wait: it counts neither as an iteration nor as a failure.
    if (r.status === "rate_limited") return { action: "wait", ms: r.retryAfterMs ?? DEFAULT_RATE_LIMIT_WAIT_MS, message: r.error ?? "rate limited" };
    s.iterations++;

    const failed = r.status !== "ok";
    if (failed) {
      s.consecutiveFailures++;
      const key = normaliseError(r.error ?? r.status);
      s.sameError = key === s.lastError ? s.sameError + 1 : 1;
      s.lastError = key;
    } else {
      s.consecutiveFailures = 0;
      s.sameError = 0;
      delete s.lastError;
    }
    if (r.permissionDenials) s.permissionDenials++;

    if (!failed && r.signal === "COMPLETE") return this.close({ action: "stop", reason: "completed", message: r.signalReason ?? "the agent signalled COMPLETE" });
    if (!failed && r.signal === "BLOCKED") return { action: "stop", reason: "blocked", message: r.signalReason ?? "the agent signalled BLOCKED" };

    // "Changed nothing" is said only of turns where the agent ran: a failed call is counted as a failure, not as no progress.
    if (r.progress) s.noProgress = 0;
    else if (!failed) s.noProgress++;
    if (r.progress && s.breaker === "HALF_OPEN") s.breaker = "CLOSED";
    if (s.noProgress >= l.noProgressLimit && l.noProgressLimit > 0) return this.open("no_progress", `${s.noProgress} iterations in a row changed nothing in git`);
    if (s.sameError >= l.sameErrorLimit && l.sameErrorLimit > 0) return this.open("circuit_open", `the same error ${s.sameError} times in a row: ${r.error ?? r.status}`);
    if (s.permissionDenials >= l.permissionDenialLimit && l.permissionDenialLimit > 0) return this.open("circuit_open", `tool calls were denied in ${s.permissionDenials} iterations: the agent needs permissions it does not have`);
    if (s.consecutiveFailures >= l.maxConsecutiveFailures && l.maxConsecutiveFailures > 0) return { action: "stop", reason: "failed", message: `${s.consecutiveFailures} agent calls in a row failed; the last: ${r.error ?? r.status}` };
    if (s.breaker === "HALF_OPEN" && !r.progress) return this.open("circuit_open", "no progress on the half-open try");
    // The caps, checked now too, so the caller learns at once that the next dispatch would be refused.
    return this.beforeIteration();
  }

  private open(reason: StopReason, message: string): Verdict {
    this.s.breaker = "OPEN";
    this.s.openedAt = this.now();
    this.s.openReason = message;
    return { action: "stop", reason, message };
  }

  private close(v: Verdict): Verdict {
    this.s.breaker = "CLOSED";
    delete this.s.openedAt;
    delete this.s.openReason;
    return v;
  }
}

function seconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  return s >= 3600 ? `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min` : s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}

function overshoot(spent: number, cap: number, unit: string): string {
  return spent > cap ? ` (over by ${unit}${unit === "$" ? (spent - cap).toFixed(4) : spent - cap}, the last iteration's share)` : "";
}

/** Numbers, ids and paths vary between retries of the same failure. */
function normaliseError(message: string): string {
  return message.replace(/\b[0-9a-f]{7,}\b/gi, "#").replace(/\d+(\.\d+)?/g, "N").trim().slice(0, 300);
}
