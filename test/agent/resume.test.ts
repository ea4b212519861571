/**
 * `kill -9` of `pulse agent run` mid-run, then `pulse agent resume RUN_ID`: the run continues
 * from its last recorded step in the same JSONL report; the dead run's action processes are
 * stopped; completed steps are not redone; feedback stays once per actionRunId; the quota and the
 * wall time count what was spent before; `pulse agent runs` shows the dead run as interrupted
 * until it is resumed. The kill points are random (fast-check), the actions real directories.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { pidAlive } from "../../src/coding/liveness.js";
import { SqliteAgentFeedback } from "../../adapters/sqlite/agent-feedback.js";
import { SqliteAgentJournal } from "../../adapters/sqlite/agent-journal.js";
import { createAgent } from "../../src/coding/agent/api.js";
import { readReport } from "../../src/coding/agent/report.js";
import type { Envelope } from "../../src/coding/agent/types.js";
import { crashHome, pulse, startPlanningMock, type ChatMock, type Proc } from "./support/crash-home.js";

const STEPS = 4;
const TICK_MS = 350;
let mock: ChatMock;
const procs: Proc[] = [];
beforeAll(async () => {
  mock = await startPlanningMock(STEPS, TICK_MS);
});
const mocks: ChatMock[] = [];
afterAll(async () => {
  await mock.close();
  for (const m of mocks) await m.close();
});
afterEach(() => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function start(args: string[], home: string, workdir: string): Proc {
  const p = pulse(args, home, workdir);
  procs.push(p);
  return p;
}

async function runIdOf(p: Proc, ms = 20_000): Promise<string> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const m = /run ([0-9a-f-]{36}) started/.exec(p.stderr);
    if (m) return m[1]!;
    if (p.child.exitCode !== null) throw new Error(`pulse ended before starting a run: ${p.stderr}`);
    await sleep(20);
  }
  throw new Error(`no run started: ${p.stderr}`);
}

async function record(home: string, runId: string) {
  const runs = SqliteAgentJournal.open(join(home, "agent.db"));
  try {
    return await runs.get(runId);
  } finally {
    await runs.close();
  }
}

async function until(check: () => Promise<boolean> | boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(25);
  }
  throw new Error("timed out waiting");
}

const lines = (path: string) => (existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : []);

async function listed(home: string, workdir: string): Promise<{ runId: string; status: string }[]> {
  const p = start(["runs", "--json"], home, workdir);
  const r = await p.done;
  expect(r.code, p.stderr).toBe(0);
  return JSON.parse(p.stdout);
}

/** What every resumed run must show, whatever the kill points were. */
function checkReport(report: Envelope[], workdir: string, kills: number) {
  const types = report.map((e) => e.type);
  expect(types.filter((t) => t === "run_started")).toHaveLength(1);
  expect(types.filter((t) => t === "run_finished")).toHaveLength(1);
  expect(types.at(-1)).toBe("run_finished");
  // One task_interrupted per resume of a run that was still going (a kill after the end resumes nothing).
  expect(types.filter((t) => t === "task_interrupted").length).toBeLessThanOrEqual(kills);
  const stepOf = new Map<string, number>();
  for (const e of report) if (e.type === "action_started") stepOf.set(String(e.payload.actionRunId), Number((e.payload.args as { n: number }).n));
  const ok = report.filter((e) => e.type === "action_result" && e.payload.status === "ok").map((e) => String(e.payload.actionRunId));
  // Completed steps are not redone: exactly one completed action per step.
  expect(ok.map((id) => stepOf.get(id)).sort()).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1));
  const ticks = lines(join(workdir, "ticks.log")).map((l) => l.split(" "));
  // Every completed action wrote its tick; a tick written by an action whose result never came (its pulse died in between) is the only repeat.
  for (const id of ok) expect(ticks.filter(([, a]) => a === id)).toHaveLength(1);
  const interrupted = new Set(report.filter((e) => e.type === "action_result" && e.payload.ended === "aborted").map((e) => String(e.payload.actionRunId)));
  for (const [, a] of ticks) if (!ok.includes(a!)) expect(interrupted.has(a!) || !stepOf.has(a!)).toBe(true);
  // Feedback once per action run, for every completed one.
  const fb = report.filter((e) => e.type === "feedback_received").map((e) => (e.payload.feedback as { actionRunId: string }).actionRunId);
  expect(new Set(fb).size).toBe(fb.length);
  expect([...fb].sort()).toEqual([...ok].sort());
  // The quota counted every action started, across the pulses.
  const started = new Set([...stepOf.keys(), ...interrupted]);
  const finished = report.at(-1)!.payload;
  expect(finished).toMatchObject({ status: "succeeded", actionsUsed: started.size });
  return { ok, finished };
}

describe("a run whose pulse was killed", () => {
  it("is listed interrupted, resumes where it stood, and ends with one report, each step done once (random kill points, fast-check)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: STEPS * TICK_MS + 400 }), { minLength: 1, maxLength: 2 }), async (killsAfter) => {
        const { home, workdir } = crashHome(mock.url);
        let p = start(["run", "--request", "tick four times", "--auto"], home, workdir);
        const runId = await runIdOf(p);
        let kills = 0;
        for (const delay of killsAfter) {
          await sleep(delay);
          if (p.child.exitCode !== null) break;
          p.child.kill("SIGKILL");
          await p.done;
          kills++;
          const r = await record(home, runId);
          if (r?.status !== "running") break;
          // The dead pulse's run shows interrupted until it is resumed.
          expect((await listed(home, workdir)).find((x) => x.runId === runId)?.status).toBe("interrupted");
          p = start(["resume", runId], home, workdir);
        }
        const end = await p.done;
        expect(end.code, `${p.stdout}\n${p.stderr}`).toBe(0);
        const report = readReport(join(home, "logs", `${runId}.jsonl`));
        const { ok } = checkReport(report, workdir, kills);
        // No action process of any pulse is left.
        for (const pid of lines(join(workdir, "pids.log")).map(Number)) expect(pidAlive(pid)).toBe(false);
        // The feedback store holds one row per completed action.
        const store = SqliteAgentFeedback.open(join(home, "agent.db"));
        for (const id of ok) expect(await store.get(id)).toMatchObject({ runId, action: "tick" });
        await store.close();
        expect((await listed(home, workdir)).find((x) => x.runId === runId)?.status).toBe("succeeded");
      }),
      { numRuns: 5, endOnFailure: true },
    );
  }, 240_000);

  it("killed mid-action: the action's process is stopped, the action recorded as interrupted and its step run again; refusals before and after", async () => {
    // Ticks slow enough for a listing and a refused resume while the second one sleeps.
    const slowTicks = await startPlanningMock(STEPS, 3_000);
    mocks.push(slowTicks);
    const { home, workdir } = crashHome(slowTicks.url);
    const p = start(["run", "--request", "tick four times", "--auto"], home, workdir);
    const runId = await runIdOf(p);
    // In the second tick's sleep: one step done, one action in flight.
    await until(() => lines(join(workdir, "ticks.log")).length === 1 && lines(join(workdir, "pids.log")).length === 2);
    // The near miss: a run whose pulse lives is running, and is not resumed from elsewhere.
    expect((await listed(home, workdir)).find((x) => x.runId === runId)?.status).toBe("running");
    const busy = start(["resume", runId], home, workdir);
    expect((await busy.done).code).toBe(2);
    expect(busy.stderr).toContain(`resume: run ${runId} is running in pulse process ${p.child.pid}: nothing to resume`);
    // Killed while an action sleeps (whichever tick the checks above took us to).
    const pids = () => lines(join(workdir, "pids.log"));
    await until(() => pids().length === lines(join(workdir, "ticks.log")).length + 1);
    p.child.kill("SIGKILL");
    await p.done;
    const started = pids().length;
    const inFlight = Number(pids().at(-1));
    const before = (await record(home, runId))!;
    expect(before).toMatchObject({ status: "running", iteration: started - 1, actionsUsed: started, inFlight: { name: "tick" } });
    const r = start(["resume", runId], home, workdir);
    expect((await r.done).code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`run ${runId} succeeded \\(goal_achieved\\)`));
    expect(pidAlive(inFlight)).toBe(false);
    const report = readReport(join(home, "logs", `${runId}.jsonl`));
    const cut = report.find((e) => e.type === "task_interrupted")!.payload;
    expect(cut).toMatchObject({ reason: "runner_died", resumed: true, iteration: started - 1, continuesAt: "screen", actionsUsed: started, inFlight: before.inFlight });
    expect(report.find((e) => e.type === "action_result" && e.payload.actionRunId === before.inFlight!.actionRunId)!.payload).toMatchObject({ status: "error", ended: "aborted" });
    checkReport(report, workdir, 1);
    expect(report.at(-1)!.payload.actionsUsed).toBe(STEPS + 1);
    // Finished: nothing to resume; an id that is no run: refused.
    const again = start(["resume", runId], home, workdir);
    expect((await again.done).code).toBe(2);
    expect(again.stderr).toContain(`resume: run ${runId} ended succeeded (goal_achieved): there is nothing to resume`);
    const bad = start(["resume", "not-a-run"], home, workdir);
    expect((await bad.done).code).toBe(2);
    expect(bad.stderr).toMatch(/resume: "not-a-run" is not a run id/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  }, 120_000);

  it("the quota counts the actions of the pulse that died", async () => {
    const { home, workdir } = crashHome(mock.url, { max_actions: 3 });
    const p = start(["run", "--request", "tick four times", "--auto"], home, workdir);
    const runId = await runIdOf(p);
    await until(() => lines(join(workdir, "ticks.log")).length === 2);
    p.child.kill("SIGKILL");
    await p.done;
    const r = start(["resume", runId, "--json"], home, workdir);
    expect((await r.done).code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ status: "failed", reason: "quota" });
    const report = readReport(join(home, "logs", `${runId}.jsonl`));
    expect(report.at(-1)!.payload.actionsUsed).toBe(3);
    // Three actions in all (the in-flight one among them), never a fresh quota of three more.
    expect(report.filter((e) => e.type === "action_started")).toHaveLength(3);
  }, 120_000);

  it("the wall time counts the time the dead pulse ran, not the time it was dead", async () => {
    const slow = await startPlanningMock(20, 800);
    try {
      const h = crashHome(slow.url, { max_wall_time_sec: 10 });
      const p = start(["run", "--request", "tick many times", "--auto"], h.home, h.workdir);
      const runId = await runIdOf(p);
      await until(async () => ((await record(h.home, runId))?.elapsedMs ?? 0) >= 6_000).catch(async (e) => {
        throw new Error(`${e.message}: ${JSON.stringify(await record(h.home, runId))} ${p.stdout} ${p.stderr}`);
      });
      p.child.kill("SIGKILL");
      await p.done;
      await sleep(1_000); // dead time: not counted
      const t0 = Date.now();
      const r = start(["resume", runId, "--json"], h.home, h.workdir);
      expect((await r.done).code).toBe(1);
      const took = Date.now() - t0;
      expect(JSON.parse(r.stdout)).toMatchObject({ status: "timeout", reason: "timeout" });
      const finished = readReport(join(h.home, "logs", `${runId}.jsonl`)).at(-1)!.payload;
      expect(finished.durationMs as number).toBeGreaterThanOrEqual(10_000);
      // The resumed pulse had what was left (≤ 4 s, plus its start-up), never a fresh 10 s.
      expect(took).toBeLessThan(9_500);
    } finally {
      await slow.close();
    }
  }, 120_000);
});

describe("a run whose pulse died between an action's end and its evaluation", () => {
  it("resumes with the action's recorded result (perform_action replays it, evaluate_progress follows): the action is not run again, its feedback recorded once", async () => {
    const { home, workdir } = crashHome(mock.url, { execution_mode: "interactive" });
    const store = join(home, "agent.db");
    const first = await createAgent({ home, workdir, store, env: { PATH: process.env.PATH } });
    let n = 0;
    let hung = false;
    // The second action's feedback never comes: the run stands after perform_action, before the evaluation ends.
    const handle = await first.ask("tick four times", [], { executionMode: "interactive", confirm: async () => true, feedbackHandler: async () => (++n === 2 ? ((hung = true), new Promise<null>(() => undefined)) : null) });
    await until(async () => hung && !!(await record(home, handle.runId))?.pending);
    const runs = SqliteAgentJournal.open(store);
    // As a pulse that died would have left it: its runner gone.
    await runs.update(handle.runId, { runnerPid: spawnSyncPid() });
    await runs.close();
    expect((await first.runs()).find((r) => r.runId === handle.runId)?.status).toBe("interrupted");
    const second = await createAgent({ home, workdir, store, env: { PATH: process.env.PATH } });
    try {
      const resumed = await second.resume(handle.runId, { confirm: async () => true, feedbackHandler: async () => null });
      const out = await resumed.finished;
      expect(out, out.message).toMatchObject({ status: "succeeded", reason: "goal_achieved" });
      const report = readReport(out.report);
      expect(report.find((e) => e.type === "task_interrupted")!.payload).toMatchObject({ reason: "runner_died", continuesAt: "evaluate_progress", iteration: 1, actionsUsed: 2 });
      checkReport(report, workdir, 1);
      // Tick 2 ran once, its result carried over; no action was interrupted.
      expect(lines(join(workdir, "ticks.log")).map((l) => l.split(" ")[0])).toEqual(["1", "2", "3", "4"]);
      expect(report.at(-1)!.payload.actionsUsed).toBe(4);
    } finally {
      await second.close();
    }
  }, 60_000);
});

/** A pid that was a process and is no more. */
const spawnSyncPid = (): number => spawnSync("true").pid;

describe("a run started with --driver", () => {
  /** A home with no llm entry: only the run's own driver can answer. The first tick sleeps long enough to be killed in. */
  function scriptedHome() {
    const { home, workdir } = crashHome("http://127.0.0.1:9/v1");
    writeFileSync(join(home, "config.json"), JSON.stringify({ execution: { execution_mode: "auto" } }));
    const answer = (o: unknown) => JSON.stringify(o);
    const script = join(home, "ticks.script.json");
    writeFileSync(
      script,
      JSON.stringify({
        steps: [
          { match: { phase: "planner" }, text: answer({ steps: [{ id: "s1", desc: "tick 1" }, { id: "s2", desc: "tick 2" }] }) },
          { match: { phase: "decider" }, text: answer({ type: "execute", action: { name: "tick", args: { n: 1, ms: 4_000 } }, step: "s1", reason: "first" }) },
          { match: { phase: "decider" }, text: answer({ type: "execute", action: { name: "tick", args: { n: 2, ms: 10 } }, step: "s2", reason: "second" }) },
        ],
      }),
    );
    return { home, workdir, script };
  }

  async function killedInFirstTick(home: string, workdir: string, script: string): Promise<string> {
    const p = start(["run", "--request", "tick twice", "--auto", "--driver", "scripted", "--script", script], home, workdir);
    const runId = await runIdOf(p);
    await until(() => lines(join(workdir, "pids.log")).length === 1);
    p.child.kill("SIGKILL");
    await p.done;
    return runId;
  }

  it("resumes with the driver and script it started with, and says so", async () => {
    const { home, workdir, script } = scriptedHome();
    const runId = await killedInFirstTick(home, workdir, script);
    const r = start(["resume", runId], home, workdir);
    expect((await r.done).code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`pulse agent: run ${runId} goes on with the driver it started with: --driver scripted --script ${script}`);
    expect(r.stdout).toMatch(new RegExp(`run ${runId} succeeded \\(goal_achieved\\)`));
    expect(lines(join(workdir, "ticks.log")).map((l) => l.split(" ")[0])).toEqual(["1", "2"]);
  }, 60_000);

  it("near miss: --driver given on resume is used as asked (here the home's config, which has no model), and the change is said", async () => {
    const { home, workdir, script } = scriptedHome();
    const runId = await killedInFirstTick(home, workdir, script);
    const r = start(["resume", runId, "--driver", "config"], home, workdir);
    expect((await r.done).code).toBe(2);
    expect(r.stderr).toContain(`pulse agent: run ${runId} started with --driver scripted --script ${script}; it goes on with --driver config, as asked`);
    expect(r.stderr).toMatch(/config\.json: no llm entry/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);
});
