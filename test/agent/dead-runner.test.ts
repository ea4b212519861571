/**
 * Nothing named running that does not run, for the agent too: an action process a killed `pulse
 * agent` left (recorded in the home's agent.db by a runner that is gone) is stopped, and its
 * record dropped, by the next agent that opens the same store; one whose runner still lives is
 * left alone.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteAgentProcesses } from "../../adapters/sqlite/agent-processes.js";
import { openDatabase } from "../../adapters/sqlite/driver.js";
import { pidAlive, procStart } from "../../src/coding/liveness.js";
import { createAgent } from "../../src/coding/agent/api.js";
import { tempHome } from "./helpers.js";
import { runBin } from "../cli/run-bin.js";
import { zombieUnder } from "../helpers/zombie.js";

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});

/** A long-running action process in its own group, carrying its run marker, as the kit starts them. */
function action(marker: string): ChildProcess {
  const c = spawn("sleep", ["60"], { detached: true, stdio: "ignore", env: { PATH: process.env.PATH ?? "", PULSE_AGENT_RUN: marker } });
  children.push(c);
  return c;
}

/** Records it as a runner with this pid would have (runner_pid is the writer's own pid otherwise). */
async function recordAs(store: string, run: string, child: ChildProcess, marker: string, runnerPid: number) {
  (await SqliteAgentProcesses.open(store)).close();
  const db = openDatabase(store);
  db.prepare("INSERT INTO pulse_agent_processes (session_id, iteration, pid, pgid, start_time, marker, runner_pid, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)").run(run, 1, child.pid!, child.pid!, procStart(child.pid!)!, marker, runnerPid, new Date().toISOString());
  db.close();
}

async function gone(pid: number, ms = 5_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const state = spawnSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" }).stdout.trim();
    if (state === "" || state.startsWith("Z")) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describe("an agent opening its store", () => {
  it("stops the action a dead runner left and drops its record; an action whose runner lives goes on", async () => {
    const { home, workdir } = tempHome();
    const store = join(home, "agent.db");
    // A runner that is gone: a process that has exited.
    const dead = spawnSync("true").pid;
    expect(pidAlive(dead)).toBe(false);
    const orphan = action("agent-orphan-run-1-aaaa");
    await recordAs(store, "orphan-run", orphan, "agent-orphan-run-1-aaaa", dead);
    // The near miss: another live pulse's run (its runner is alive) must not be touched.
    const liveRunner = spawn("sleep", ["60"], { stdio: "ignore" });
    children.push(liveRunner);
    const busy = action("agent-busy-run-1-bbbb");
    await recordAs(store, "busy-run", busy, "agent-busy-run-1-bbbb", liveRunner.pid!);

    const notes: string[] = [];
    const agent = await createAgent({ home, workdir, store, driver: "scripted", script: { steps: [] }, onNote: (m) => notes.push(m) });
    try {
      expect(await gone(orphan.pid!)).toBe(true);
      expect(notes).toEqual(["stopped the action processes run orphan-run left when its pulse died"]);
      expect(pidAlive(busy.pid!)).toBe(true);
      const records = SqliteAgentProcesses.open(store);
      expect(await records.runs()).toEqual(["busy-run"]);
      await records.close();
    } finally {
      await agent.close();
    }
  }, 30_000);

  it("the bin says so: `pulse agent action` after a killed run stops what it left before its own action runs", async () => {
    const { home, workdir } = tempHome();
    const store = join(home, "agent.db");
    const dead = spawnSync("true").pid;
    const orphan = action("agent-left-run-1-cccc");
    await recordAs(store, "left-run", orphan, "agent-left-run-1-cccc", dead);
    const r = runBin("pulse", ["agent", "action", "--name", "greet", "--args", '{"who":"Ada"}', "--home", home, "--workdir", workdir], { cwd: workdir, env: { HOME: home } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("pulse agent: stopped the action processes run left-run left when its pulse died");
    expect(await gone(orphan.pid!)).toBe(true);
    const records = SqliteAgentProcesses.open(store);
    expect(await records.runs()).toEqual([]);
    await records.close();
  }, 30_000);

  it("a runner that exited but was never collected (a zombie, as under a container's PID 1) is dead: what it left is stopped", async () => {
    const { home, workdir } = tempHome();
    const store = join(home, "agent.db");
    const { holder, zombie } = await zombieUnder(false);
    children.push(holder);
    const orphan = action("agent-zombie-run-1-dddd");
    await recordAs(store, "zombie-run", orphan, "agent-zombie-run-1-dddd", zombie);
    const agent = await createAgent({ home, workdir, store, driver: "scripted", script: { steps: [] } });
    try {
      expect(await gone(orphan.pid!)).toBe(true);
      const records = SqliteAgentProcesses.open(store);
      expect(await records.runs()).toEqual([]);
      await records.close();
    } finally {
      await agent.close();
    }
  }, 30_000);
});
