import { describe, expect, it } from "vitest";
import { resolveLimits } from "../../src/coding/limits.js";
import { LoopGuard, type IterationReport } from "../../src/coding/progress-breaker.js";

const ok = (extra: Partial<IterationReport> = {}): IterationReport => ({ status: "ok", signal: "CONTINUE", progress: true, tokens: 100, costUsd: 0.01, ...extra });

describe("limits", () => {
  it("defaults to 10 iterations; unbounded only with allowUnbounded and a cost cap", () => {
    expect(resolveLimits().maxIterations).toBe(10);
    expect(() => resolveLimits({ maxIterations: 0 })).toThrow(/allowUnbounded/);
    expect(() => resolveLimits({ maxIterations: 0, allowUnbounded: true })).toThrow(/cost cap/);
    expect(resolveLimits({ maxIterations: 0, allowUnbounded: true, maxCostUsd: 5 }).maxIterations).toBe(0);
    expect(() => resolveLimits({ maxIterations: -1 })).toThrow(/limits.maxIterations/);
    expect(() => resolveLimits({ maxCostUsd: 0 })).toThrow(/limits.maxCostUsd: must be a number > 0/);
  });
});

describe("loop guard", () => {
  it("max_iterations stops after exactly N iterations", () => {
    const g = new LoopGuard({ maxIterations: 3 });
    const verdicts = [];
    for (let i = 0; i < 3; i++) {
      expect(g.beforeIteration().action).toBe("continue");
      verdicts.push(g.afterIteration(ok()));
    }
    expect(verdicts.map((v) => v.action)).toEqual(["continue", "continue", "stop"]);
    expect(verdicts[2]).toMatchObject({ reason: "max_iterations" });
    expect(g.beforeIteration()).toMatchObject({ action: "stop", reason: "max_iterations" });
  });

  it("COMPLETE and BLOCKED stop with their reasons", () => {
    expect(new LoopGuard().afterIteration(ok({ signal: "COMPLETE" }))).toMatchObject({ action: "stop", reason: "completed" });
    expect(new LoopGuard().afterIteration(ok({ signal: "BLOCKED", signalReason: "need a key" }))).toMatchObject({ action: "stop", reason: "blocked", message: "need a key" });
  });

  it("a cost cap is enforced before the next dispatch, with the overshoot reported", () => {
    const g = new LoopGuard({ maxCostUsd: 0.05, maxIterations: 100 });
    let v = g.afterIteration(ok({ costUsd: 0.04 }));
    expect(v.action).toBe("continue"); // 0.04 < 0.05: one more
    v = g.afterIteration(ok({ costUsd: 0.03 }));
    expect(v).toMatchObject({ action: "stop", reason: "budget_exhausted" });
    expect((v as { message: string }).message).toMatch(/over by \$0\.0200/);
    expect(g.beforeIteration()).toMatchObject({ action: "stop", reason: "budget_exhausted" });
  });

  it("a token cap, a wall-time limit", () => {
    const g = new LoopGuard({ maxTokens: 150 });
    expect(g.afterIteration(ok({ tokens: 100 })).action).toBe("continue");
    expect(g.afterIteration(ok({ tokens: 100 }))).toMatchObject({ reason: "budget_exhausted" });
    let now = 0;
    const t = new LoopGuard({ maxWallMs: 1000 }, () => now);
    expect(t.beforeIteration().action).toBe("continue");
    now = 1000;
    expect(t.beforeIteration()).toMatchObject({ action: "stop", reason: "timeout" });
  });

  it("no progress opens the breaker after 3; progress in between resets the count", () => {
    const g = new LoopGuard();
    expect(g.afterIteration(ok({ progress: false })).action).toBe("continue");
    expect(g.afterIteration(ok({ progress: false })).action).toBe("continue");
    expect(g.afterIteration(ok({ progress: true })).action).toBe("continue");
    expect(g.afterIteration(ok({ progress: false })).action).toBe("continue");
    expect(g.afterIteration(ok({ progress: false })).action).toBe("continue");
    expect(g.afterIteration(ok({ progress: false }))).toMatchObject({ action: "stop", reason: "no_progress" });
    expect(g.state().breaker).toBe("OPEN");
  });

  it("an open breaker survives a restart until its cooldown, then half-opens for one try", () => {
    let now = 0;
    const g = new LoopGuard({ noProgressLimit: 1 }, () => now);
    g.afterIteration(ok({ progress: false }));
    const saved = JSON.parse(JSON.stringify(g.state()));
    now = 10 * 60_000;
    const restarted = new LoopGuard({ noProgressLimit: 1 }, () => now, saved);
    expect(restarted.beforeIteration()).toMatchObject({ action: "stop", reason: "circuit_open" });
    now = 31 * 60_000;
    const later = new LoopGuard({ noProgressLimit: 5 }, () => now, saved);
    expect(later.beforeIteration().action).toBe("continue");
    expect(later.state().breaker).toBe("HALF_OPEN");
    expect(later.afterIteration(ok({ progress: false }))).toMatchObject({ reason: "circuit_open" });
    const healed = new LoopGuard({}, () => now, saved);
    healed.beforeIteration();
    expect(healed.afterIteration(ok({ progress: true })).action).toBe("continue");
    expect(healed.state().breaker).toBe("CLOSED");
  });

  it("rate limits are waits, not failures or iterations", () => {
    const g = new LoopGuard({ maxConsecutiveFailures: 1, maxIterations: 1 });
    for (let i = 0; i < 5; i++) expect(g.afterIteration({ status: "rate_limited", progress: false, tokens: 0, costUsd: 0, retryAfterMs: 5000 })).toEqual({ action: "wait", ms: 5000, message: "rate limited" });
    expect(g.state().iterations).toBe(0);
    expect(g.beforeIteration().action).toBe("continue");
  });

  it("consecutive failures stop as failed; the same error repeated opens the breaker", () => {
    const f = new LoopGuard({ maxConsecutiveFailures: 3, sameErrorLimit: 10 });
    f.afterIteration({ status: "error", progress: false, tokens: 0, costUsd: 0, error: "a" });
    f.afterIteration({ status: "timeout", progress: true, tokens: 0, costUsd: 0, error: "b" });
    expect(f.afterIteration({ status: "error", progress: true, tokens: 0, costUsd: 0, error: "c" })).toMatchObject({ reason: "failed" });
    const s = new LoopGuard({ sameErrorLimit: 2, maxConsecutiveFailures: 10 });
    s.afterIteration({ status: "error", progress: true, tokens: 0, costUsd: 0, error: "build failed at line 12" });
    expect(s.afterIteration({ status: "error", progress: true, tokens: 0, costUsd: 0, error: "build failed at line 40" })).toMatchObject({ reason: "circuit_open" });
  });

  it("permission denials in 2 iterations open the breaker; aborted stops at once", () => {
    const g = new LoopGuard();
    expect(g.afterIteration(ok({ permissionDenials: 1 })).action).toBe("continue");
    expect(g.afterIteration(ok({ permissionDenials: 2 }))).toMatchObject({ reason: "circuit_open" });
    expect(new LoopGuard().afterIteration({ status: "aborted", progress: false, tokens: 0, costUsd: 0 })).toMatchObject({ reason: "aborted" });
  });
});
