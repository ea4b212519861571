/**
 * The reaper of what a dead runner left, with real processes: it signals a recorded process
 * only while it is the one recorded (same start time: a pid the kernel reused is left alone),
 * and every process carrying the run's marker even when it left the group. `pulse session
 * abort` and `resume` of a crashed session stop its leftover agent before touching the tree.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ProcessReaper } from "../../adapters/agents/cli/reaper.js";
import { procStart } from "../../src/coding/liveness.js";
import { runProcess } from "../../adapters/agents/cli/run-process.js";
import { MemoryAgentProcesses } from "../../adapters/memory/agent-processes.js";
import { SqliteAgentProcesses } from "../../adapters/sqlite/agent-processes.js";
import { SqliteSessionRecords } from "../../adapters/sqlite/session-records.js";
import { runBin } from "../cli/run-bin.js";
import { gitLog, gitRepo, newSession, removeDir } from "./helpers.js";

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) removeDir(d);
});

/** A process like an agent: its own group, optionally carrying a run marker. */
function agent(marker?: string, cwd?: string): ChildProcess {
  const child = spawn("sleep", ["300"], { detached: true, stdio: "ignore", env: { PATH: process.env.PATH ?? "", ...(marker ? { PULSE_AGENT_RUN: marker } : {}) }, ...(cwd ? { cwd } : {}) });
  children.push(child);
  return child;
}

const exited = (c: ChildProcess) => new Promise<string | null>((r) => (c.exitCode !== null || c.signalCode !== null ? r(c.signalCode) : c.once("exit", (_code, signal) => r(signal))));
const alive = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

describe("the reaper", () => {
  it("kills a recorded process whose start time matches, and never one whose start time differs (a reused pid)", async () => {
    const processes = new MemoryAgentProcesses();
    const reaper = new ProcessReaper(processes, { graceMs: 500 });
    const other = agent();
    const start = procStart(other.pid!)!;
    expect(start).toBeGreaterThan(0);
    // The near miss: the same pid, recorded with another start time, is another process now.
    await processes.record("s1", 1, { pid: other.pid!, pgid: other.pid!, startTime: start + 1, marker: randomUUID() });
    const spared = await reaper.reap("s1");
    expect(spared).toEqual({ killed: [], skipped: [other.pid] });
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(other)).toBe(true);
    expect(await processes.list("s1")).toEqual([]);
    // The same process recorded with its own start time is ours: killed.
    await processes.record("s1", 1, { pid: other.pid!, pgid: other.pid!, startTime: start, marker: randomUUID() });
    const killed = await reaper.reap("s1");
    expect(killed.killed).toEqual([other.pid]);
    expect(await exited(other)).toBe("SIGTERM");
  });

  it("finds a turn's process by the marker recorded before it started (pulse died before its pid was recorded), and spares another marker's", async () => {
    const processes = new MemoryAgentProcesses();
    const reaper = new ProcessReaper(processes, { graceMs: 500 });
    const marker = `pulse-session-s2-1-${randomUUID().slice(0, 8)}`;
    const ours = agent(marker);
    const theirs = agent(`pulse-session-s3-1-${randomUUID().slice(0, 8)}`);
    await processes.record("s2", 1, { pid: 0, pgid: 0, startTime: 0, marker });
    const report = await reaper.reap("s2");
    expect(report).toEqual({ killed: [ours.pid], skipped: [] });
    expect(await exited(ours)).toBe("SIGTERM");
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(theirs)).toBe(true);
  });

  it("kills what carries the run's marker though it left the group, even when the leader is long gone", async () => {
    const processes = new MemoryAgentProcesses();
    const marker = randomUUID();
    const escaped = agent(marker);
    const unrelated = agent(randomUUID());
    const gone = spawnSync("true").pid!; // a pid no process has now
    await processes.record("s2", 3, { pid: gone, pgid: gone, startTime: 12345, marker });
    const r = await new ProcessReaper(processes, { graceMs: 500 }).reap("s2");
    expect(r.killed).toEqual([escaped.pid]);
    expect(await exited(escaped)).toBe("SIGTERM");
    expect(alive(unrelated)).toBe(true);
  });

  it("SIGKILLs what ignores SIGTERM after the grace", async () => {
    const processes = new MemoryAgentProcesses();
    const marker = randomUUID();
    const stubborn = spawn("bash", ["-c", "trap '' TERM; sleep 300 & wait"], { detached: true, stdio: "ignore", env: { PATH: process.env.PATH ?? "", PULSE_AGENT_RUN: marker } });
    children.push(stubborn);
    await new Promise((r) => setTimeout(r, 200));
    await processes.record("s3", 1, { pid: stubborn.pid!, pgid: stubborn.pid!, startTime: procStart(stubborn.pid!)!, marker });
    const t0 = Date.now();
    await new ProcessReaper(processes, { graceMs: 300 }).reap("s3");
    expect(await exited(stubborn)).toBe("SIGKILL");
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it("runProcess reports each process as it starts: its pid leads its group, carries the marker, and has the start time given", async () => {
    const seen: { pid: number; pgid: number; startTime: number; marker: string }[] = [];
    const out = await runProcess({ command: "bash", args: ["-c", "echo $PULSE_AGENT_RUN; cut -d' ' -f5 /proc/$$/stat"], cwd: process.cwd(), env: { PATH: process.env.PATH ?? "" } }, { onSpawn: (i) => seen.push(i) });
    expect(seen).toHaveLength(1);
    const [marker, pgid] = out.stdout.trim().split("\n");
    expect(seen[0]).toMatchObject({ pid: out.pid, pgid: out.pid, marker });
    expect(Number(pgid)).toBe(out.pid);
    expect(seen[0]!.startTime).toBeGreaterThan(0);
  });
});

describe("an agent's leftovers when it exits normally", () => {
  it("a descendant that left the group and every pipe (setsid … &) is stopped too; the near miss, a process without the marker, is not", async () => {
    const bystander = agent();
    let marker = "";
    const out = await runProcess(
      { command: "bash", args: ["-c", "setsid sleep 300 >/dev/null 2>&1 </dev/null & echo $!"], cwd: process.cwd(), env: { PATH: process.env.PATH ?? "" }, killGraceMs: 300 },
      { onSpawn: (i) => (marker = i.marker) },
    );
    expect(out.reason).toBe("exited");
    const escaped = Number(out.stdout.trim());
    expect(marker).not.toBe("");
    const end = Date.now() + 3_000;
    while (Date.now() < end && existsSync(`/proc/${escaped}`) && !readFileSync(`/proc/${escaped}/stat`, "utf8").includes(") Z ")) await new Promise((r) => setTimeout(r, 50));
    expect(!existsSync(`/proc/${escaped}`) || readFileSync(`/proc/${escaped}/stat`, "utf8").includes(") Z ")).toBe(true);
    expect(alive(bystander)).toBe(true);
  });
});

describe("a crashed session's leftover agent", () => {
  /** A session whose runner died (a pid that is gone) mid-iteration, and its agent, recorded, still running. */
  async function crashed(): Promise<{ repo: string; store: string; id: string; leftover: ChildProcess }> {
    const repo = gitRepo();
    dirs.push(repo);
    const store = join(repo, ".pulse", "pulse.db");
    spawnSync("sh", ["-c", "echo .pulse/ >> .git/info/exclude"], { cwd: repo });
    const records = SqliteSessionRecords.open(store);
    const processes = SqliteAgentProcesses.open(store);
    const id = await newSession(records, repo);
    const dead = spawnSync("true").pid!;
    await records.update(id, { status: "running", runner_pid: dead, current_iteration: 1 });
    await records.addIteration({ id: randomUUID(), session_id: id, iteration_number: 1, task_content: "work", status: "running" });
    const marker = randomUUID();
    const leftover = agent(marker, repo);
    await processes.record(id, 1, { pid: leftover.pid!, pgid: leftover.pid!, startTime: procStart(leftover.pid!)!, marker });
    await processes.close();
    await records.close();
    spawnSync("sh", ["-c", "echo edit > left.txt"], { cwd: repo });
    return { repo, store, id, leftover };
  }

  it("pulse session abort kills it before the recovery commit", async () => {
    const { repo, store, id, leftover } = await crashed();
    const r = runBin("pulse", ["session", "abort", id, "--store", store], { cwd: repo, env: { HOME: repo } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/aborted while interrupted; unfinished work kept in recovery commit [0-9a-f]{8}/);
    expect(await exited(leftover)).toBe("SIGTERM");
    expect(gitLog(repo)[0]).toBe(`[RECOVERY] session ${id} aborted while interrupted`);
  }, 30_000);

  it("pulse session resume kills it before its first turn", async () => {
    const { repo, store, id, leftover } = await crashed();
    const script = join(repo, ".pulse", "script.json");
    spawnSync("sh", ["-c", `echo '{"steps":[{"text":"<signal>COMPLETE</signal>"}]}' > ${script}`], { cwd: repo });
    const records = SqliteSessionRecords.open(store);
    await records.update(id, { driver: { name: "scripted", script } });
    await records.close();
    const r = runBin("pulse", ["session", "resume", id, "--store", store], { cwd: repo, env: { HOME: repo } });
    expect(r.code, r.stderr).toBe(0);
    expect(await exited(leftover)).toBe("SIGTERM");
    expect(r.stdout).toMatch(/iteration 1 was interrupted when its runner stopped/);
  }, 30_000);
});
