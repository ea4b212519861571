/**
 * The session loop end to end in process, with the scripted driver making real edits and
 * commits in temporary git repositories: completes, blocks and resumes, inferred signals, a
 * limit stop, an abort mid-iteration with a recovery commit, and the records of it all.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionService } from "../../src/coding/session/service.js";
import { gitLog, gitRepo, harness, newSession, removeDir } from "./helpers.js";

const repos: string[] = [];
afterEach(() => {
  for (const r of repos.splice(0)) removeDir(r);
});
const repo = () => {
  const r = gitRepo();
  repos.push(r);
  return r;
};

describe("a session", () => {
  it("edits, commits and completes in three iterations, recording the evidence of each", async () => {
    const dir = repo();
    const h = await harness({
      steps: [
        { match: { iteration: 1 }, files: { "src/greet.js": "export const greet = (n) => `hi ${n}`;\n" }, commit: "feat: greet", text: "Created the greet module.\n<anchor_hint><turn_id>turn-1</turn_id><reason>the module</reason></anchor_hint>\n<signal>CONTINUE</signal>", usage: { inputTokens: 1000, outputTokens: 200 }, model: "claude-sonnet-4-5" },
        { match: { iteration: 2 }, files: { "test/greet.test.js": "// test\n" }, commit: "test: greet", text: "Added tests. <signal>CONTINUE</signal>", usage: { inputTokens: 1500, outputTokens: 300 }, costUsd: 0.02 },
        { match: { iteration: 3 }, text: "Everything is in place. <signal>COMPLETE</signal>", usage: { inputTokens: 500, outputTokens: 50 } },
      ],
    });
    const id = await newSession(h.records, dir);
    const final = await h.runner.run(id);
    expect(final).toMatchObject({ status: "complete", current_iteration: 3, last_signal: "COMPLETE", total_commits: 2, stop_reason: "completed", runner_pid: null, branch_name: "main" });
    expect(final.total_tokens_used).toBe(1200 + 1800 + 550);
    expect(final.total_cost_usd).toBeGreaterThan(0.02);
    expect(final.progress_log.map((p) => p.signal)).toEqual(["CONTINUE", "CONTINUE", "COMPLETE"]);
    expect(gitLog(dir)).toEqual(["test: greet", "feat: greet", "initial"]);
    const its = await h.records.iterations(id);
    expect(its.map((i) => [i.iteration_number, i.status, i.signal, i.signal_source])).toEqual([
      [1, "complete", "CONTINUE", "tag"],
      [2, "complete", "CONTINUE", "tag"],
      [3, "complete", "COMPLETE", "tag"],
    ]);
    expect(its[0]).toMatchObject({ files_changed: ["src/greet.js"], anchor_hint_next: "turn-1", anchor_strategy: "none", output_summary: "Created the greet module." });
    expect(its[0]!.commit_hash).toMatch(/^[0-9a-f]{40}$/);
    // Iteration 2 starts from the hint iteration 1 left (chained), iteration 3 from the goal's closest turn.
    expect(its[1]).toMatchObject({ anchor_strategy: "chained", anchor_turn_id: "turn-1", anchor_salience: 1, anchor_depth: 1 });
    // "Everything is in place" has no anchor hint: the goal's closest turn by word overlap is turn 2.
    expect(its[2]).toMatchObject({ anchor_strategy: "semantic", anchor_turn_id: "turn-2", anchor_salience: 0.25, anchor_depth: 2 });
    expect(its[2]!.anchor_resolution_ms).toEqual(expect.any(Number));
    expect(its[2]!.anchor_resolution_ms!).toBeLessThan(5_000);
    expect(its[1]!.task_content).toContain("Progress so far:");
    expect(its[1]!.task_content).toContain("iteration 1 (CONTINUE)");
    expect(its.every((i) => i.context_tokens > 0 && i.finished_at)).toBe(true);
    await h.notifier.flush();
    expect(h.notes.map((n) => n.message)).toEqual(["Iteration 1/10: Created the greet module. Continuing...", "Iteration 2/10: Added tests. Continuing...", "Session complete (3 iterations, 2 commits)"]);
    // The agent was asked for one signal, and saw the goal.
    expect(h.driver.calls[0]!.prompt).toContain("Add a greeting module with tests");
    expect(h.driver.calls[0]!.cwd).toBe(dir);
  });

  it("blocks, then resumes where it stopped and completes", async () => {
    const dir = repo();
    const h = await harness({
      steps: [
        { match: { iteration: 1 }, files: { "pay.js": "// stripe\n" }, commit: "feat: payments skeleton", text: "<signal>BLOCKED: Need API key for Stripe integration</signal>" },
        { match: { iteration: 2 }, files: { "pay.js": "// stripe, keyed\n" }, commit: "feat: payments", text: "Wired the key. <signal>COMPLETE</signal>" },
      ],
    });
    const id = await newSession(h.records, dir);
    const blocked = await h.runner.run(id);
    expect(blocked).toMatchObject({ status: "blocked", last_signal: "BLOCKED", stop_reason: "blocked", status_reason: "Need API key for Stripe integration", current_iteration: 1 });
    await h.notifier.flush();
    expect(h.notes.at(-1)!.message).toBe("Blocked: Need API key for Stripe integration.");
    const done = await h.runner.run(id);
    expect(done).toMatchObject({ status: "complete", current_iteration: 2, total_commits: 2 });
    // The resumed iteration is told why the session had stopped.
    expect(h.driver.calls[1]!.prompt).toContain("resumed by a person after it stopped with: Need API key for Stripe integration");
    await expect(h.runner.run(id)).rejects.toThrow(/is complete: there is nothing to resume/);
  });

  it("infers signals from the agent's words when it gives none, and blocks when nothing is recognisable", async () => {
    const dir = repo();
    const h = await harness({
      steps: [
        { match: { iteration: 1 }, files: { "a.js": "1\n" }, commit: "a", text: "Created file a.js. Next step: b.js." },
        { match: { iteration: 2 }, files: { "b.js": "2\n" }, commit: "b", text: "All tasks are complete." },
      ],
    });
    const id = await newSession(h.records, dir);
    expect(await h.runner.run(id)).toMatchObject({ status: "complete", current_iteration: 2 });
    expect((await h.records.iterations(id)).map((i) => [i.signal, i.signal_source])).toEqual([
      ["CONTINUE", "inferred"],
      ["COMPLETE", "inferred"],
    ]);

    const other = repo();
    const h2 = await harness({ steps: [{ text: "Hmm." }] });
    const id2 = await newSession(h2.records, other);
    expect(await h2.runner.run(id2)).toMatchObject({ status: "blocked", last_signal: "BLOCKED" });
    expect((await h2.records.iterations(id2))[0]).toMatchObject({ signal: "BLOCKED", signal_source: "default", signal_reason: "no recognisable signal in the agent's output" });
  });

  it("stops at its iteration limit, as failed with the reason, and notifies each iteration", async () => {
    const dir = repo();
    const h = await harness({ mode: "repeat-last", steps: [{ shell: ["date +%s%N >> log.txt"], commit: "more", text: "<signal>CONTINUE</signal>" }] });
    const id = await newSession(h.records, dir, { max_iterations: 2 });
    const s = await h.runner.run(id);
    expect(s).toMatchObject({ status: "failed", stop_reason: "max_iterations", current_iteration: 2, total_commits: 2, status_reason: "reached the limit of 2 iterations" });
    await h.notifier.flush();
    expect(h.notes.map((n) => n.kind)).toEqual(["iteration", "iteration", "failed"]);
    expect(h.notes.at(-1)!.message).toBe("Session stopped (max_iterations): reached the limit of 2 iterations");
  });

  it("aborts at once mid-iteration, keeping the unfinished work in a recovery commit", async () => {
    const dir = repo();
    const h = await harness({ steps: [{ outcome: "hang", text: "" }] });
    const id = await newSession(h.records, dir);
    const running = h.runner.run(id);
    await until(async () => (await h.records.iterations(id))[0]?.status === "running");
    writeFileSync(join(dir, "half-done.js"), "// the agent was here\n");
    const t0 = Date.now();
    await h.records.requestControl(id, "abort");
    const s = await running;
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(s).toMatchObject({ status: "aborted", stop_reason: "aborted", control: null });
    expect(s.status_reason).toMatch(/aborted during iteration 1; unfinished work kept in recovery commit [0-9a-f]{8}/);
    expect(gitLog(dir)[0]).toBe(`[RECOVERY] session ${id} aborted during iteration 1`);
    expect((await h.records.iterations(id))[0]).toMatchObject({ status: "failed" });
  });

  it("pauses after the current iteration when asked, and resumes", async () => {
    const dir = repo();
    const h = await harness({
      steps: [
        { match: { iteration: 1 }, delayMs: 300, files: { "x.js": "1\n" }, commit: "x", text: "<signal>CONTINUE</signal>" },
        { match: { iteration: 2 }, text: "<signal>COMPLETE</signal>" },
      ],
    });
    const id = await newSession(h.records, dir);
    const running = h.runner.run(id);
    await until(async () => (await h.records.iterations(id))[0]?.status === "running");
    await h.records.requestControl(id, "pause");
    const paused = await running;
    expect(paused).toMatchObject({ status: "paused", current_iteration: 1, control: null });
    expect((await h.records.iterations(id))[0]).toMatchObject({ status: "complete", signal: "CONTINUE" });
    const done = await h.runner.run(id);
    expect(done.status_reason).toBe("the agent signalled COMPLETE");
    expect(done).toMatchObject({ status: "complete", current_iteration: 2 });
  });

  it("aborted while paused (nothing running it), keeps what its tree holds in a recovery commit; a clean tree gets none", async () => {
    const script = { steps: [{ match: { iteration: 1 }, delayMs: 300, files: { "x.js": "1\n" }, commit: "x", text: "<signal>CONTINUE</signal>" }] };
    const pausedSession = async (dir: string) => {
      const h = await harness(script);
      const id = await newSession(h.records, dir);
      const running = h.runner.run(id);
      await until(async () => (await h.records.iterations(id))[0]?.status === "running");
      await h.records.requestControl(id, "pause");
      expect(await running).toMatchObject({ status: "paused", total_commits: 1 });
      return { h, id, service: new SessionService(h.records, { driver: "scripted", contextStrategy: "none", maxIterations: 10 }) };
    };
    const dirty = repo();
    const { h, id, service } = await pausedSession(dirty);
    writeFileSync(join(dirty, "left-over.js"), "// edited while it was paused\n");
    const aborted = await service.abort(id);
    expect(aborted.immediate).toBe(true);
    expect(aborted.session).toMatchObject({ status: "aborted", stop_reason: "aborted", total_commits: 2, runner_pid: null });
    expect(aborted.session.status_reason).toMatch(/^aborted while paused; unfinished work kept in recovery commit [0-9a-f]{8}$/);
    expect(gitLog(dirty)).toEqual([`[RECOVERY] session ${id} aborted while paused`, "x", "initial"]);
    expect((await h.records.get(id))!.status).toBe("aborted");

    // The near miss: nothing left in the tree, so no recovery commit and no commit counted.
    const clean = repo();
    const other = await pausedSession(clean);
    const plain = await other.service.abort(other.id);
    expect(plain.session).toMatchObject({ status: "aborted", status_reason: "aborted while paused", total_commits: 1 });
    expect(gitLog(clean)).toEqual(["x", "initial"]);
  });
});

describe("a session's iterations", () => {
  it("records an agent timeout as a timeout iteration and goes on", async () => {
    const dir = repo();
    const h = await harness({ steps: [{ match: { iteration: 1 }, outcome: "timeout" }, { match: { iteration: 2 }, files: { "a.js": "1\n" }, commit: "a", text: "<signal>COMPLETE</signal>" }] });
    const id = await newSession(h.records, dir);
    expect(await h.runner.run(id)).toMatchObject({ status: "complete", current_iteration: 2 });
    const its = await h.records.iterations(id);
    // The agent never spoke: no signal (not BLOCKED by default, which would say it needs a person).
    expect(its[0]).toMatchObject({ status: "timeout", signal: null, signal_source: null });
    expect(its[0]!.error).toBeTruthy();
    await h.notifier.flush();
    expect(h.notes[0]!.message).toMatch(/^Iteration 1\/10: the agent's call ended timeout/);
  });

  it.each([
    ["none", false, false],
    ["prefetch", true, false],
    ["mcp", false, true],
    ["hybrid", true, true],
  ] as const)("builds the prompt for the %s context strategy", async (strategy, progress, mcp) => {
    const dir = repo();
    const h = await harness({ steps: [{ match: { iteration: 1 }, files: { "a.js": "1\n" }, commit: "a", text: "Made a.js. <signal>CONTINUE</signal>" }, { match: { iteration: 2 }, text: "<signal>COMPLETE</signal>" }] });
    const id = await newSession(h.records, dir, { context_strategy: strategy });
    await h.runner.run(id);
    const prompt = h.driver.calls[1]!.prompt;
    expect(prompt.includes("Progress so far:\n- iteration 1 (CONTINUE)")).toBe(progress);
    expect(prompt.includes("The MCP servers you were given hold this session's history")).toBe(mcp);
    // Whatever the strategy, the signal grammar is in inline code: an echoed prompt never signals.
    expect(prompt).toContain("`<signal>COMPLETE</signal>`");
  });
});

async function until(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}
