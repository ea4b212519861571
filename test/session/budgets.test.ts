/**
 * Budgets that pause: a session whose spend (dollars, tokens, turn time) reaches its cap pauses
 * after the turn, says which cap and what was spent, and goes on when resumed with a raised cap;
 * spend counts across resumes. In process (real git repositories, the scripted driver) and
 * through the built bin.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SqliteSessionRecords } from "../../adapters/sqlite/session-records.js";
import { runBin } from "../cli/run-bin.js";
import { harness, newSession, tempRepos, worktreesRoot } from "./helpers.js";

const repo = tempRepos();

const step = (n: number, extra: Record<string, unknown> = {}) => ({ match: { iteration: n }, files: { [`f${n}.txt`]: `${n}\n` }, commit: `feat: step ${n}`, text: `Step ${n}. <signal>CONTINUE</signal>`, ...extra });

describe("budgets", () => {
  it("pauses at the cost cap after the turn that reached it, then goes on when resumed with a raised cap", async () => {
    const dir = repo();
    const h = await harness({ steps: [step(1, { costUsd: 0.02 }), step(2, { costUsd: 0.02 }), step(3, { costUsd: 0.02 }), { match: { iteration: 4 }, text: "<signal>COMPLETE</signal>", costUsd: 0.01 }] });
    const id = await newSession(h.records, dir, { max_cost_usd: 0.03 });
    const paused = await h.runner.run(id);
    expect(paused).toMatchObject({ status: "paused", current_iteration: 2, stop_reason: "budget_exhausted" });
    expect(paused.status_reason).toMatch(/^budget: spent \$0\.0400 of the \$0\.03 cap/);
    expect(paused.status_reason).toContain("--max-cost USD");
    // Resumed without raising it: spent across runs still counts, so it pauses again before any turn.
    const again = await h.runner.run(id);
    expect(again).toMatchObject({ status: "paused", current_iteration: 2 });
    expect(h.driver.calls).toHaveLength(2);
    await h.records.update(id, { max_cost_usd: 1 });
    const done = await h.runner.run(id);
    expect(done).toMatchObject({ status: "complete", current_iteration: 4 });
    expect(done.total_cost_usd).toBeCloseTo(0.07, 5);
  });

  it("pauses at a token cap, counting tokens of earlier runs; a near miss under the cap runs on", async () => {
    const dir = repo();
    const usage = { inputTokens: 400, outputTokens: 100 };
    const h = await harness({ steps: [step(1, { usage }), step(2, { usage }), { match: { iteration: 3 }, text: "<signal>COMPLETE</signal>", usage }] });
    const id = await newSession(h.records, dir, { max_tokens: 1000 });
    const paused = await h.runner.run(id);
    expect(paused).toMatchObject({ status: "paused", current_iteration: 2, total_tokens_used: 1000 });
    expect(paused.status_reason).toMatch(/^budget: used 1000 of the 1000 token cap/);
    await h.records.update(id, { max_tokens: 1501 });
    // 1500 of 1501: under the cap, so the third turn runs and completes.
    expect(await h.runner.run(id)).toMatchObject({ status: "complete", current_iteration: 3, total_tokens_used: 1500 });
  });

  it("pauses at the wall-time cap, counted from the turns' records across resumes", async () => {
    const dir = repo();
    const h = await harness({ steps: [step(1, { delayMs: 500 }), step(2, { delayMs: 500 }), { match: { iteration: 3 }, text: "<signal>COMPLETE</signal>" }] });
    const id = await newSession(h.records, dir, { max_wall_ms: 250 });
    const paused = await h.runner.run(id);
    expect(paused).toMatchObject({ status: "paused", current_iteration: 1, stop_reason: "timeout" });
    expect(paused.status_reason).toMatch(/^budget: ran \d+ m?s of the 250 ms wall-time cap.*--max-wall DURATION/);
    // The first run's time still counts: a cap just above what its turn took (500 ms and more, on a
    // loaded machine) lets the second turn start, and pauses after it.
    const ran = (await h.records.iterations(id)).reduce((t, i) => t + (Date.parse(i.finished_at!) - Date.parse(i.started_at)), 0);
    expect(ran).toBeGreaterThanOrEqual(500);
    await h.records.update(id, { max_wall_ms: ran + 100 });
    expect(await h.runner.run(id)).toMatchObject({ status: "paused", current_iteration: 2 });
    await h.records.update(id, { max_wall_ms: 60_000 });
    expect(await h.runner.run(id)).toMatchObject({ status: "complete", current_iteration: 3 });
  });

  it("takes the profile's caps when the session sets none; the session's own cap wins", async () => {
    const dir = repo();
    const script = { steps: [step(1, { costUsd: 0.02 }), step(2, { costUsd: 0.02 }), { match: { iteration: 3 }, text: "<signal>COMPLETE</signal>" }] };
    const h = await harness(script, { profile: { limits: { maxCostUsd: 0.01 } } });
    expect(await h.runner.run(await newSession(h.records, dir))).toMatchObject({ status: "paused", current_iteration: 1 });
    const own = await harness(script, { profile: { limits: { maxCostUsd: 0.01 } } });
    expect(await own.runner.run(await newSession(own.records, repo(), { max_cost_usd: 1 }))).toMatchObject({ status: "complete", current_iteration: 3 });
  });

  it("keeps the caps in the SQLite records", async () => {
    const dir = repo();
    const records = SqliteSessionRecords.open(join(dir, ".pulse", "pulse.db"));
    const id = await newSession(records, dir, { max_cost_usd: 2.5, max_tokens: 10_000, max_wall_ms: 3_600_000 });
    expect(await records.get(id)).toMatchObject({ max_cost_usd: 2.5, max_tokens: 10_000, max_wall_ms: 3_600_000 });
    expect(await records.update(id, { max_cost_usd: 5 })).toMatchObject({ max_cost_usd: 5, max_tokens: 10_000 });
    const plain = await newSession(records, dir);
    expect(await records.get(plain)).toMatchObject({ max_cost_usd: null, max_tokens: null, max_wall_ms: null });
    await records.close();
  });
});

describe("pulse session start/resume --max-cost (the bin)", () => {
  function setup(steps: unknown[]) {
    const dir = repo();
    const script = join(dir, ".pulse-script.json");
    writeFileSync(script, JSON.stringify({ steps }));
    writeFileSync(join(dir, ".git", "info", "exclude"), ".pulse-script.json\n");
    const store = join(dir, ".pulse", "pulse.db");
    return { script, pulse: (...args: string[]) => runBin("pulse", ["session", ...args, "--store", store], { cwd: dir, env: { HOME: dir, PULSE_WORKTREES: worktreesRoot() } }) };
  }

  it("pauses with the budget named, and resume --max-cost raises it and goes on", () => {
    const { script, pulse } = setup([step(1, { costUsd: 0.5 }), step(2, { costUsd: 0.5 }), { match: { iteration: 3 }, text: "<signal>COMPLETE</signal>" }]);
    const r = pulse("start", "--goal", "Steps", "--driver", "scripted", "--script", script, "--max-cost", "0.75");
    expect(r.code, r.stderr).toBe(0);
    const [s] = JSON.parse(pulse("list", "--json").stdout);
    expect(s).toMatchObject({ status: "paused", max_cost_usd: 0.75, current_iteration: 2 });
    expect(s.status_reason).toContain("budget: spent $1.0000 of the $0.75 cap");
    const bad = pulse("resume", s.id, "--max-cost", "lots");
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('pulse session: --max-cost: must be an amount of US dollars above 0, e.g. 5 or 0.50, got "lots"');
    const ok = pulse("resume", s.id, "--max-cost", "5");
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(pulse("status", s.id, "--json").stdout).session).toMatchObject({ status: "complete", max_cost_usd: 5 });
  });

  it("refuses a bad --max-tokens or --max-wall before recording anything; the near misses are accepted", () => {
    const { script, pulse } = setup([{ text: "<signal>COMPLETE</signal>" }]);
    const tokens = pulse("start", "--goal", "x", "--driver", "scripted", "--script", script, "--max-tokens", "1.5");
    expect(tokens.code).toBe(2);
    expect(tokens.stderr).toContain("--max-tokens: must be a whole number of tokens above 0");
    const wall = pulse("start", "--goal", "x", "--driver", "scripted", "--script", script, "--max-wall", "forever");
    expect(wall.code).toBe(2);
    expect(wall.stderr).toContain("--max-wall: must be a duration from 1s to 30d");
    expect(JSON.parse(pulse("list", "--json").stdout)).toEqual([]);
    const ok = pulse("start", "--goal", "x", "--driver", "scripted", "--script", script, "--max-tokens", "2000000", "--max-wall", "8h");
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(pulse("list", "--json").stdout)[0]).toMatchObject({ status: "complete", max_tokens: 2_000_000, max_wall_ms: 8 * 3_600_000 });
  });
});
