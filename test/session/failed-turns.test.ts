/**
 * Failures named: a rate-limited turn is no iteration (its number is taken again, it never counts
 * against the limit, the wait is shown, a pause or abort during it acts at once, a wait beyond the
 * profile's cap pauses the session); a failed, timed-out or crashed turn has no signal, leaves the
 * agent's last real one in last_signal, and never counts as "changed nothing".
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import type { SessionEvent } from "../../src/coding/session/run-state.js";
import { harness, newSession, tempRepos } from "./helpers.js";

const repo = tempRepos();

const limited = (n: number, retryAfterMs = 50) => ({ match: { iteration: n }, outcome: "rate_limit" as const, retryAfterMs });
const work = (n: number, signal = "CONTINUE") => ({ match: { iteration: n }, files: { [`f${n}.txt`]: `${n}\n` }, commit: `feat: ${n}`, text: `Did ${n}. <signal>${signal}</signal>` });

async function until<T>(check: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("rate limits", () => {
  it("three rate limits with --max-iterations 3 do not end the session: their numbers are taken again", async () => {
    const dir = repo();
    const h = await harness({ steps: [limited(1), work(1), limited(2), limited(2), work(2), work(3, "COMPLETE")] });
    const id = await newSession(h.records, dir, { max_iterations: 3 });
    const events: SessionEvent[] = [];
    const final = await h.runner.run(id, { onEvent: (e) => events.push(e) });
    expect(final).toMatchObject({ status: "complete", current_iteration: 3, last_signal: "COMPLETE", status_reason: "the agent signalled COMPLETE" });
    expect(h.driver.calls.map((c) => c.iteration)).toEqual([1, 1, 2, 2, 2, 3]);
    const its = await h.records.iterations(id);
    expect(its.map((i) => [i.iteration_number, i.status, i.signal])).toEqual([
      [1, "complete", "CONTINUE"],
      [2, "complete", "CONTINUE"],
      [3, "complete", "COMPLETE"],
    ]);
    expect(final.progress_log.map((p) => p.iteration)).toEqual([1, 2, 3]);
    const waits = events.filter((e) => e.type === "session.waiting");
    expect(waits).toHaveLength(3);
    expect((waits[0] as { message: string }).message).toMatch(/^⏳ rate limited until \d\d:\d\d UTC, 1 s: pause or abort to stop$/);
    await h.notifier.flush();
    expect(h.notes.filter((n) => n.kind === "waiting").map((n) => n.message)).toHaveLength(3);
    // No "Iteration 1/3: the agent's call ended rate_limited … Continuing...".
    expect(h.notes.filter((n) => n.kind === "iteration").map((n) => n.message)).toEqual(["Iteration 1/3: Did 1. Continuing...", "Iteration 2/3: Did 2. Continuing..."]);
  });

  it("a wait longer than the profile's cap pauses with the reset time; resumed, the same number is tried again", async () => {
    const dir = repo();
    const h = await harness({ steps: [limited(1, 2 * 3_600_000), work(1, "COMPLETE")] });
    const id = await newSession(h.records, dir);
    const paused = await h.runner.run(id);
    expect(paused).toMatchObject({ status: "paused", current_iteration: 0 });
    expect(paused.status_reason).toMatch(/^rate limited until \d\d:\d\d UTC \(2 h, longer than the 30 min the profile waits/);
    expect((await h.records.iterations(id)).map((i) => [i.iteration_number, i.status, i.signal])).toEqual([[1, "rate_limited", null]]);
    const done = await h.runner.run(id);
    expect(done.status_reason).toBe("the agent signalled COMPLETE");
    expect(done).toMatchObject({ status: "complete", current_iteration: 1 });
    expect((await h.records.iterations(id)).map((i) => [i.iteration_number, i.status])).toEqual([[1, "complete"]]);
  });

  it("a wait just within the profile's cap is sat out", async () => {
    const dir = repo();
    const h = await harness({ steps: [limited(1, 150), work(1, "COMPLETE")] }, { profile: { limits: { maxRateLimitWaitMs: 150 } } });
    const id = await newSession(h.records, dir);
    expect(await h.runner.run(id)).toMatchObject({ status: "complete", current_iteration: 1 });
  });

  for (const control of ["pause", "abort"] as const) {
    it(`${control} during a wait acts at once, and status says what it waits for meanwhile`, async () => {
      const dir = repo();
      const h = await harness({ steps: [work(1), limited(2, 20 * 60_000), work(2, "COMPLETE")] });
      const id = await newSession(h.records, dir);
      const started = Date.now();
      const running = h.runner.run(id);
      const waiting = await until(async () => {
        const s = await h.records.get(id);
        return s?.status_reason?.startsWith("waiting until") ? s : undefined;
      });
      expect(waiting.status_reason).toMatch(/^waiting until \d\d:\d\d UTC: /);
      expect(waiting).toMatchObject({ status: "running", current_iteration: 1, last_signal: "CONTINUE" });
      await h.records.requestControl(id, control);
      const final = await running;
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(final).toMatchObject({ status: control === "pause" ? "paused" : "aborted", current_iteration: 1 });
      if (control === "pause") {
        expect(await h.runner.run(id)).toMatchObject({ status: "complete", current_iteration: 2 });
      }
    });
  }
});

describe("failed turns", () => {
  it("a crashed or timed-out turn has no signal; last_signal keeps the agent's previous one", async () => {
    const dir = repo();
    const h = await harness({ steps: [work(1), { match: { iteration: 2 }, outcome: "crash" as const, error: "ENOENT" }, { match: { iteration: 3 }, outcome: "timeout" as const }] });
    const id = await newSession(h.records, dir, { max_iterations: 3 });
    const final = await h.runner.run(id);
    expect(final).toMatchObject({ status: "failed", stop_reason: "max_iterations", last_signal: "CONTINUE" });
    const its = await h.records.iterations(id);
    expect(its.map((i) => [i.status, i.signal, i.signal_source])).toEqual([
      ["complete", "CONTINUE", "tag"],
      ["failed", null, null],
      ["timeout", null, null],
    ]);
    expect(final.progress_log.map((p) => p.signal)).toEqual(["CONTINUE", "NONE", "NONE"]);
    expect(h.driver.calls[2]!.prompt).toContain("iteration 2 (NONE)");
  });

  it("no_progress counts only turns where the agent ran and changed nothing", async () => {
    const dir = repo();
    const idle = (n: number) => ({ match: { iteration: n }, text: "Looked around. <signal>CONTINUE</signal>" });
    const crash = (n: number) => ({ match: { iteration: n }, outcome: "crash" as const });
    const h = await harness({ steps: [idle(1), crash(2), idle(3), crash(4), idle(5)] });
    const id = await newSession(h.records, dir);
    const final = await h.runner.run(id);
    // Two idle turns and two crashes are not "3 iterations changed nothing"; the third idle turn is.
    expect(final).toMatchObject({ status: "failed", stop_reason: "no_progress", current_iteration: 5 });
    expect(final.status_reason).toContain("3 iterations");
  });
});

describe("the guard's stops, at loop level", () => {
  const crash = (n: number, error?: string) => ({ match: { iteration: n }, outcome: "crash" as const, ...(error ? { error } : {}) });

  it("consecutive failed turns stop the session failed, naming the last error; a turn that works in between resets the count", async () => {
    const limits = { maxConsecutiveFailures: 3, sameErrorLimit: 0 };
    const h = await harness({ steps: [crash(1, "e1"), crash(2, "e2"), crash(3, "e3"), work(4, "COMPLETE")] }, { profile: { limits } });
    const id = await newSession(h.records, repo());
    const final = await h.runner.run(id);
    expect(final).toMatchObject({ status: "failed", stop_reason: "failed", current_iteration: 3 });
    expect(final.status_reason).toBe("3 agent calls in a row failed; the last: e3");

    const near = await harness({ steps: [crash(1, "e1"), crash(2, "e2"), work(3), crash(4, "e4"), crash(5, "e5"), work(6, "COMPLETE")] }, { profile: { limits } });
    const id2 = await newSession(near.records, repo());
    expect(await near.runner.run(id2)).toMatchObject({ status: "complete", stop_reason: "completed", current_iteration: 6 });
  });

  it("the same error again and again opens the breaker (circuit_open); different errors do not", async () => {
    const limits = { maxConsecutiveFailures: 0, sameErrorLimit: 3 };
    const h = await harness({ steps: [crash(1, "ENOSPC: no space left"), crash(2, "ENOSPC: no space left"), crash(3, "ENOSPC: no space left"), work(4, "COMPLETE")] }, { profile: { limits } });
    const id = await newSession(h.records, repo());
    const final = await h.runner.run(id);
    expect(final).toMatchObject({ stop_reason: "circuit_open", current_iteration: 3 });
    expect(final.status).not.toBe("complete");
    expect(final.status_reason).toContain("the same error 3 times in a row: ENOSPC: no space left");
    const renumbered = await harness({ steps: [crash(1, "exit 137 at pid 4121"), crash(2, "exit 137 at pid 5230"), crash(3, "exit 137 at pid 6001")] }, { profile: { limits } });
    expect(await renumbered.runner.run(await newSession(renumbered.records, repo()))).toMatchObject({ stop_reason: "circuit_open", current_iteration: 3 });

    // Numbers and ids are normalised away ("e1", "e2" are one error); different words are not.
    const near = await harness({ steps: [crash(1, "disk full"), crash(2, "network unreachable"), crash(3, "model overloaded"), work(4, "COMPLETE")] }, { profile: { limits } });
    const id2 = await newSession(near.records, repo());
    expect(await near.runner.run(id2)).toMatchObject({ status: "complete", current_iteration: 4 });
  });
});

describe("the guard's streaks across a pause and resume", () => {
  const idle = (n: number) => ({ match: { iteration: n }, text: "Looked around. <signal>CONTINUE</signal>" });
  const crash = (n: number, error: string) => ({ match: { iteration: n }, outcome: "crash" as const, error });
  /** Runs until the turn after `last` is rate limited for 20 min, pauses there, and returns the paused session. */
  async function pausedAfter(h: Awaited<ReturnType<typeof harness>>, id: string, last: number) {
    const running = h.runner.run(id);
    await until(async () => {
      const s = await h.records.get(id);
      return s?.status_reason?.startsWith("waiting until") && s.current_iteration === last ? s : undefined;
    });
    await h.records.requestControl(id, "pause");
    const paused = await running;
    expect(paused).toMatchObject({ status: "paused", current_iteration: last });
    return paused;
  }

  it("two idle turns, a pause, then one more idle turn: stopped no_progress at the third, counted across the resume", async () => {
    const dir = repo();
    const h = await harness({ steps: [idle(1), idle(2), limited(3, 20 * 60_000), idle(3), idle(4), work(5, "COMPLETE")] }, { profile: { limits: { noProgressLimit: 3 } } });
    const id = await newSession(h.records, dir);
    await pausedAfter(h, id, 2);
    const final = await h.runner.run(id);
    expect(final).toMatchObject({ status: "failed", stop_reason: "no_progress", current_iteration: 3 });
    expect(final.status_reason).toContain("3 iterations in a row changed nothing");
  });

  it("near miss: a turn with work before the pause resets the count; the resumed session goes on to complete", async () => {
    const dir = repo();
    const h = await harness({ steps: [idle(1), work(2), limited(3, 20 * 60_000), idle(3), idle(4), work(5, "COMPLETE")] }, { profile: { limits: { noProgressLimit: 3 } } });
    const id = await newSession(h.records, dir);
    await pausedAfter(h, id, 2);
    expect(await h.runner.run(id)).toMatchObject({ status: "complete", current_iteration: 5 });
  });

  it("the same error twice, a pause, then once more: the breaker opens at the third (numbers in the message do not make it another error)", async () => {
    const dir = repo();
    const h = await harness({ steps: [crash(1, "ECONNRESET after 120 ms"), crash(2, "ECONNRESET after 450 ms"), limited(3, 20 * 60_000), crash(3, "ECONNRESET after 80 ms"), work(4, "COMPLETE")] }, { profile: { limits: { sameErrorLimit: 3, maxConsecutiveFailures: 10 } } });
    const id = await newSession(h.records, dir);
    await pausedAfter(h, id, 2);
    const final = await h.runner.run(id);
    expect(final).toMatchObject({ stop_reason: "circuit_open", current_iteration: 3 });
    expect(final.status_reason).toContain("the same error 3 times in a row");
  });
});

describe("a runner killed after the iteration that ended the session, before the session's record said so", () => {
  const died = async (h: Awaited<ReturnType<typeof harness>>, id: string, last: { signal: "COMPLETE" | "BLOCKED" | "CONTINUE"; reason?: string }) => {
    // What such a kill leaves: the iteration recorded with its signal, the session still "running" under a runner that is gone.
    const [it] = await h.records.iterations(id);
    await h.records.updateIteration(it!.id, { signal: last.signal, signal_reason: last.reason ?? null });
    await h.records.update(id, { status: "running", stop_reason: null, status_reason: null, runner_pid: spawnSync("true").pid ?? 1 });
  };

  it("COMPLETE: resume ends it complete without another turn; BLOCKED: blocked", async () => {
    for (const signal of ["COMPLETE", "BLOCKED"] as const) {
      const dir = repo();
      const h = await harness({ steps: [work(1, "COMPLETE")] });
      const id = await newSession(h.records, dir);
      expect(await h.runner.run(id)).toMatchObject({ status: "complete", current_iteration: 1 });
      await died(h, id, { signal, reason: signal === "BLOCKED" ? "needs the API key" : "all done" });
      const resumed = await h.runner.run(id);
      expect(resumed).toMatchObject({ status: signal === "COMPLETE" ? "complete" : "blocked", current_iteration: 1, status_reason: signal === "COMPLETE" ? "all done" : "needs the API key" });
      expect(h.driver.calls).toHaveLength(1);
      expect((await h.records.iterations(id)).map((i) => i.iteration_number)).toEqual([1]);
    }
  });

  it("near miss: a CONTINUE goes on with the next turn", async () => {
    const dir = repo();
    const h = await harness({ steps: [work(1, "COMPLETE"), work(2, "COMPLETE")] });
    const id = await newSession(h.records, dir);
    await h.runner.run(id);
    await died(h, id, { signal: "CONTINUE" });
    expect(await h.runner.run(id)).toMatchObject({ status: "complete", current_iteration: 2 });
    expect(h.driver.calls.map((c) => c.iteration)).toEqual([1, 2]);
  });
});
