/**
 * No agent left behind (issue 24): a real `pulse session start` (the built bin) running the
 * scripted driver, whose shell steps are real agent processes, is killed with SIGKILL or sent
 * SIGTERM. What the user relies on: the agent never outlives its pulse for long (the watchdog,
 * before any resume), resume and abort stop what a dead runner left, SIGTERM pauses within the
 * grace with the work kept, and the reaper never signals a process that is not the recorded one.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT, runBin } from "../cli/run-bin.js";
import { SqliteAgentProcesses } from "../../adapters/sqlite/agent-processes.js";
import { SqliteSessionRecords } from "../../adapters/sqlite/session-records.js";
import { gitLog, gitRepo, removeDir } from "./helpers.js";
import { machineSlackMs } from "../helpers/machine-slack.js";

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) {
    for (const pid of agentsIn(d)) process.kill(pid, "SIGKILL");
    removeDir(d);
  }
});

function setup(steps: unknown[], mode?: string) {
  const repo = gitRepo();
  dirs.push(repo);
  const script = join(repo, ".pulse-script.json");
  writeFileSync(script, JSON.stringify({ ...(mode ? { mode } : {}), steps }));
  writeFileSync(join(repo, ".git", "info", "exclude"), ".pulse-script.json\n");
  const store = join(repo, ".pulse", "pulse.db");
  const pulse = (...args: string[]) => runBin("pulse", ["session", ...args, "--store", store], { cwd: repo, env: { HOME: repo } });
  /** `pulse session …` in the background, as a service manager or a terminal runs it. */
  const background = (...args: string[]) => {
    const child = spawn(process.execPath, [resolve(ROOT, "dist/bin/pulse.mjs"), "session", ...args, "--store", store], { cwd: repo, env: { PATH: process.env.PATH ?? "", HOME: repo }, stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    let out = "";
    child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr!.on("data", (c: Buffer) => (out += c.toString()));
    const exited = new Promise<{ code: number | null; at: number }>((r) => child.on("exit", (code) => r({ code, at: Date.now() })));
    return { child, output: () => out, exited };
  };
  return { repo, script, store, pulse, background };
}

/** Live processes carrying an agent run marker working in `repo` or below (zombies have neither). */
function agentsIn(repo: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${e}/environ`).includes("PULSE_AGENT_RUN=")) continue;
      // The session's worktree lies under the repository here (HOME is the repository in these tests).
      if (readlinkSync(`/proc/${e}/cwd`).startsWith(repo)) out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Live processes carrying exactly this marker. */
function marked(marker: string): number[] {
  const needle = Buffer.from(`PULSE_AGENT_RUN=${marker}\0`);
  return readdirSync("/proc").filter((e) => {
    try {
      return /^\d+$/.test(e) && readFileSync(`/proc/${e}/environ`).includes(needle);
    } catch {
      return false;
    }
  }).map(Number);
}

async function until<T>(check: () => T | undefined, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function recorded(store: string): Promise<{ id: string; markers: string[] }> {
  const records = SqliteSessionRecords.open(store);
  const processes = SqliteAgentProcesses.open(store);
  try {
    const [s] = await records.list();
    return { id: s!.id, markers: (await processes.list(s!.id)).map((p) => p.marker) };
  } finally {
    await processes.close();
    await records.close();
  }
}

const json = (r: { stdout: string }) => JSON.parse(r.stdout);

interface AuditLine {
  trace_id: string;
  event_type: string;
  phase_id: string | null;
  loop_id: string;
  data: Record<string, unknown>;
}

/** The session's audit trail as `pulse audit --json` lists it (every event of its workspace). */
function auditOf(repo: string, store: string, id: string): AuditLine[] {
  const r = runBin("pulse", ["audit", "--store", `sqlite:${store}`, "--workspace", id, "--json", "--limit", "1000"], { cwd: repo, env: { HOME: repo } });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as AuditLine);
}

/** How many times each phase of each iteration (trace) completed, and the resumes and re-dispatches it saw. */
function phaseRuns(events: AuditLine[]): Map<string, { completed: Record<string, number>; resumed: number; redispatched: number }> {
  const out = new Map<string, { completed: Record<string, number>; resumed: number; redispatched: number }>();
  for (const e of events.filter((x) => x.loop_id === "coding.pulse_session")) {
    let t = out.get(e.trace_id);
    if (!t) out.set(e.trace_id, (t = { completed: {}, resumed: 0, redispatched: 0 }));
    if ((e.event_type === "phase.completed" || e.event_type === "phase.routed") && e.phase_id) t.completed[e.phase_id] = (t.completed[e.phase_id] ?? 0) + 1;
    if (e.event_type === "iteration.resumed") t.resumed++;
    if (e.event_type === "session.turn_redispatched") t.redispatched++;
  }
  return out;
}

const PHASES = ["build_context", "dispatch_agent", "extract_evidence", "record_branch", "learn"];

function verifyAudit(repo: string, store: string): void {
  const audit = runBin("pulse", ["audit", "verify", "--store", `sqlite:${store}`], { cwd: repo, env: { HOME: repo } });
  expect(audit.code, audit.stdout + audit.stderr).toBe(0);
  expect(audit.stdout).toMatch(/^ok: \d+ chains?, [1-9]\d* events verified/);
}

describe("an agent never outlives its pulse", () => {
  it("SIGKILL of pulse session start: its agent (recorded with its marker) is gone within seconds, before any resume", async () => {
    const { repo, store, script, background } = setup([{ shell: ["echo started > wip.txt; sleep 300"], text: "<signal>COMPLETE</signal>" }]);
    const run = background("start", "--goal", "hang in a shell", "--driver", "scripted", "--script", script);
    await until(() => (agentsIn(repo).length > 0 ? true : undefined));
    // Recorded as it starts (right after the kernel gave it its pid).
    let seen = await recorded(store);
    for (let i = 0; i < 40 && seen.markers.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      seen = await recorded(store);
    }
    expect(seen.markers).toHaveLength(1);
    expect(marked(seen.markers[0]!).length).toBeGreaterThan(0);
    const slack = machineSlackMs();
    run.child.kill("SIGKILL");
    await run.exited;
    const killedAt = Date.now();
    await until(() => (marked(seen.markers[0]!).length === 0 && agentsIn(repo).length === 0 ? true : undefined), 5_000 + slack);
    expect(Date.now() - killedAt, `bound: 4 s + ${slack} ms measured slack`).toBeLessThan(4_000 + slack);
  }, 30_000);
});

describe("resume after a SIGKILL", () => {
  it("at random points of a turn: resume finishes the interrupted iteration under its number, no agent of the session is alive after it, no two turns ran at once, no completed phase ran again, every iteration is recorded once, the audit chain verifies (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 1_800 }), async (delayMs) => {
        // The turn notes its shell's pid (and, outside the repository, that it started); a turn that finds the previous
        // one still alive notes the overlap. A killed turn whose parent died may stay a zombie until init reaps it: alive means running, not Z.
        const notes = mkdtempSync(join(tmpdir(), "pulse-turns-"));
        dirs.push(notes);
        const turn = `echo $$ >> ${notes}/started; if [ -e turn.pid ] && s=$(awk '{print $3}' /proc/$(cat turn.pid)/stat 2>/dev/null) && [ -n "$s" ] && [ "$s" != Z ]; then echo overlap >> overlap.txt; fi; echo $$ > turn.pid; sleep 1.5`;
        const { repo, store, script, pulse, background } = setup([{ shell: [turn], text: "<signal>COMPLETE</signal>" }], "repeat-last");
        try {
          const run = background("start", "--goal", "survive", "--driver", "scripted", "--script", script);
          await until(() => (agentsIn(repo).length > 0 ? true : undefined));
          await new Promise((r) => setTimeout(r, delayMs));
          run.child.kill("SIGKILL");
          await run.exited;
          const { id } = await recorded(store);
          // Killed after the last turn was recorded complete: there is nothing to resume, and nothing may be left.
          if (json(pulse("status", id, "--json")).session.status !== "complete") {
            const resumed = pulse("resume", id);
            expect(resumed.code, resumed.stderr).toBe(0);
          }
          expect(agentsIn(repo)).toEqual([]);
          // What every turn left is on the session's branch (kept in recovery commits): never an overlap.
          expect(spawnSync("git", ["ls-tree", "-r", "--name-only", `pulse/session/${id.slice(0, 8)}`], { cwd: repo, encoding: "utf8" }).stdout).not.toContain("overlap.txt");
          const d = json(pulse("status", id, "--json"));
          expect(d.session.status).toBe("complete");
          // The interrupted iteration was finished under its number: one iteration, recorded once, never a second one.
          expect(d.iterations.map((i: { iteration_number: number; status: string }) => [i.iteration_number, i.status])).toEqual([[1, "complete"]]);
          expect(d.session.current_iteration).toBe(1);
          expect((await recorded(store)).markers).toEqual([]);
          // One trace (the iteration, resumed in it if it was cut short), each phase completed once in it:
          // a phase the journal had committed never ran again, and a turn ran again only when the crash cut it short.
          const traces = [...phaseRuns(auditOf(repo, store, id)).values()];
          expect(traces).toHaveLength(1);
          const [t] = traces;
          expect(t!.completed).toEqual(Object.fromEntries(PHASES.map((p) => [p, 1])));
          expect(t!.resumed).toBeLessThanOrEqual(1);
          expect(t!.redispatched).toBeLessThanOrEqual(t!.resumed);
          const started = readFileSync(join(notes, "started"), "utf8").trim().split("\n");
          expect(started).toHaveLength(1 + t!.redispatched);
          // The audit trail the killed runners and the resume wrote still chains, trace by trace.
          verifyAudit(repo, store);
        } finally {
          for (const d of dirs.splice(0)) removeDir(d);
        }
      }),
      { numRuns: 5 },
    );
    // Each run starts, kills and resumes a real pulse and reads its trail with two more: slow on a loaded machine.
  }, 240_000);
});

describe("resume at a known phase", () => {
  it("killed during extract_evidence (dispatch_agent journaled): resume goes on at extract_evidence; the agent's turn and build_context are not run again, no recovery commit, the iteration recorded once", async () => {
    const notes = mkdtempSync(join(tmpdir(), "pulse-phase-"));
    dirs.push(notes);
    // The check's baseline passes at once; its run on the COMPLETE hangs the first time (pulse is killed there), not the second.
    const check = `if [ -e ${notes}/baseline ]; then if [ ! -e ${notes}/slept ]; then touch ${notes}/slept; sleep 50; fi; else touch ${notes}/baseline; fi`;
    const { repo, store, script, pulse, background } = setup([{ shell: [`echo turn >> ${notes}/turns`], files: { "done.txt": "done\n" }, commit: "feat: done", text: "<signal>COMPLETE</signal>" }]);
    const run = background("start", "--goal", "kill me in extract_evidence", "--driver", "scripted", "--script", script, "--verify", check);
    await until(() => (existsSync(join(notes, "slept")) && agentsIn(repo).length > 0 ? true : undefined));
    run.child.kill("SIGKILL");
    await run.exited;
    const { id } = await recorded(store);
    const before = auditOf(repo, store, id);
    // What the journal committed before the kill: build_context and dispatch_agent, not extract_evidence.
    expect([...phaseRuns(before).values()].map((t) => t.completed)).toEqual([{ build_context: 1, dispatch_agent: 1 }]);

    const resumed = pulse("resume", id);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("iteration 1 was interrupted at extract_evidence when its runner stopped; it goes on there from the journal (build_context, dispatch_agent not run again)");
    expect(agentsIn(repo)).toEqual([]);
    // The agent's turn ran once: it was not dispatched again.
    expect(readFileSync(join(notes, "turns"), "utf8")).toBe("turn\n");
    const traces = [...phaseRuns(auditOf(repo, store, id)).values()];
    expect(traces).toEqual([{ completed: Object.fromEntries(PHASES.map((p) => [p, 1])), resumed: 1, redispatched: 0 }]);
    const d = json(pulse("status", id, "--json"));
    expect(d.session).toMatchObject({ status: "complete", current_iteration: 1, total_commits: 1 });
    expect(d.iterations.map((i: { iteration_number: number; status: string; signal: string }) => [i.iteration_number, i.status, i.signal])).toEqual([[1, "complete", "COMPLETE"]]);
    expect(d.iterations[0].files_changed).toEqual(["done.txt"]);
    // Nothing of the agent's was left to recover: its commit is the branch's only one.
    expect(gitLog(repo, `pulse/session/${id.slice(0, 8)}`)).toEqual(["feat: done", "initial"]);
    verifyAudit(repo, store);
  }, 60_000);

  it("near miss: killed during the agent's turn (only build_context journaled), the turn is dispatched again once, under the same iteration, and build_context is not run again", async () => {
    const notes = mkdtempSync(join(tmpdir(), "pulse-phase-"));
    dirs.push(notes);
    // The first attempt leaves work and hangs; the one dispatched again finds the hang's flag and finishes.
    const step = `echo turn >> ${notes}/turns; if [ ! -e ${notes}/hung ]; then touch ${notes}/hung; echo wip > wip.txt; sleep 50; fi`;
    const { repo, store, script, pulse, background } = setup([{ shell: [step], files: { "done.txt": "done\n" }, commit: "feat: done", text: "<signal>COMPLETE</signal>" }]);
    const run = background("start", "--goal", "kill me in dispatch_agent", "--driver", "scripted", "--script", script);
    await until(() => (existsSync(join(notes, "hung")) && agentsIn(repo).length > 0 ? true : undefined));
    await new Promise((r) => setTimeout(r, 200)); // wip.txt written
    run.child.kill("SIGKILL");
    await run.exited;
    const { id } = await recorded(store);
    expect([...phaseRuns(auditOf(repo, store, id)).values()].map((t) => t.completed)).toEqual([{ build_context: 1 }]);
    const resumed = pulse("resume", id);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/iteration 1 was interrupted during its agent's turn when its runner stopped; what the agent left is in recovery commit [0-9a-f]{8}; the turn is dispatched again as iteration 1 \(build_context not run again\)/);
    expect(agentsIn(repo)).toEqual([]);
    expect(readFileSync(join(notes, "turns"), "utf8")).toBe("turn\nturn\n");
    const [t] = [...phaseRuns(auditOf(repo, store, id)).values()];
    expect(t).toEqual({ completed: Object.fromEntries(PHASES.map((p) => [p, 1])), resumed: 1, redispatched: 1 });
    const d = json(pulse("status", id, "--json"));
    expect(d.iterations.map((i: { iteration_number: number; status: string }) => [i.iteration_number, i.status])).toEqual([[1, "complete"]]);
    // What the first attempt left is kept (its recovery commit) and counted as the iteration's work.
    expect(d.iterations[0].files_changed).toEqual(["done.txt", "wip.txt"]);
    expect(gitLog(repo, `pulse/session/${id.slice(0, 8)}`)).toEqual(["feat: done", `[RECOVERY] session ${id}: work left by iteration 1, interrupted; its turn is dispatched again`, "initial"]);
    verifyAudit(repo, store);
  }, 60_000);
});

describe("SIGTERM", () => {
  it("with a silent agent that ignores SIGTERM: pulse exits within grace + 2 s, the work in a recovery commit, the session paused, no process left", async () => {
    const { repo, store, script, pulse, background } = setup([{ shell: ["echo wip > wip.txt; trap '' TERM; sleep 300"], text: "<signal>COMPLETE</signal>" }]);
    const run = background("start", "--goal", "stop me", "--driver", "scripted", "--script", script, "--stop-grace", "1");
    await until(() => (agentsIn(repo).length > 0 ? true : undefined));
    await new Promise((r) => setTimeout(r, 300)); // wip.txt written
    const slack = machineSlackMs();
    const sent = Date.now();
    run.child.kill("SIGTERM");
    const { code, at } = await run.exited;
    expect(at - sent, `${run.output()}\n(bound: grace 1 s + 2 s + ${slack} ms measured slack)`).toBeLessThan(3_000 + slack);
    expect(code, run.output()).toBe(0);
    expect(run.output()).toMatch(/SIGTERM: pausing; the current turn is stopped if still going in 1 s/);
    expect(agentsIn(repo)).toEqual([]);
    const { id } = await recorded(store);
    const d = json(pulse("status", id, "--json"));
    expect(d.session.status).toBe("paused");
    expect(d.session.status_reason).toMatch(new RegExp(`^interrupted by SIGTERM during iteration 1; what the agent left is in recovery commit [0-9a-f]{8}; resume with pulse session resume ${id}$`));
    const branch = `pulse/session/${id.slice(0, 8)}`;
    expect(gitLog(repo, branch)[0]).toBe(`[RECOVERY] session ${id}: work left by iteration 1, interrupted by SIGTERM`);
    expect(spawnSync("git", ["show", "--stat", branch], { cwd: repo, encoding: "utf8" }).stdout).toContain("wip.txt");
  }, 30_000);

  it("near miss: a turn that ends within the grace is kept as it ended, and the session pauses after it", async () => {
    const { repo, store, script, pulse, background } = setup([{ shell: ["sleep 1"], files: { "done.txt": "done\n" }, commit: "feat: done", text: "<signal>CONTINUE</signal>" }], "repeat-last");
    const run = background("start", "--goal", "finish the turn", "--driver", "scripted", "--script", script, "--stop-grace", "5");
    await until(() => (agentsIn(repo).length > 0 ? true : undefined));
    run.child.kill("SIGTERM");
    const { code } = await run.exited;
    expect(code, run.output()).toBe(0);
    const { id } = await recorded(store);
    const d = json(pulse("status", id, "--json"));
    expect(d.session.status).toBe("paused");
    expect(d.session.status_reason).toBe(`interrupted by SIGTERM after iteration 1; resume with pulse session resume ${id}`);
    expect(d.iterations.map((i: { status: string }) => i.status)).toEqual(["complete"]);
    expect(gitLog(repo, `pulse/session/${id.slice(0, 8)}`)).toEqual(["feat: done", "initial"]);
  }, 30_000);
});

describe("pulse serve", () => {
  it("on SIGTERM pauses the session it runs within grace + 2 s, the turn stopped and its work kept; SIGKILL of serve leaves no agent either", async () => {
    const { repo, store, script, pulse } = setup([{ shell: ["echo wip > wip.txt; trap '' TERM; sleep 300"], text: "<signal>COMPLETE</signal>" }]);
    const start = () => {
      const child = spawn(process.execPath, [resolve(ROOT, "dist/bin/pulse.mjs"), "serve", "--listen", "0", "--store", store, "--allow-scripts", repo, "--stop-grace", "1"], { cwd: repo, env: { PATH: process.env.PATH ?? "", HOME: repo }, stdio: ["ignore", "pipe", "pipe"] });
      children.push(child);
      const exited = new Promise<number>((r) => child.on("exit", () => r(Date.now())));
      const url = new Promise<string>((ok) => {
        let out = "";
        child.stdout!.on("data", (d: Buffer) => {
          out += d.toString();
          const m = /serving sessions at (http:\/\/\S+)\/api\/pulse/.exec(out);
          if (m) ok(m[1]!);
        });
      });
      return { child, exited, url };
    };
    const begin = async (url: string) => {
      const res = await fetch(`${url}/api/pulse/start`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ goal: "served", repo, driver: "scripted", script }) });
      expect(res.status).toBe(201);
      await until(() => (agentsIn(repo).length > 0 ? true : undefined));
    };

    const first = start();
    await begin(await first.url);
    const slack = machineSlackMs();
    const sent = Date.now();
    first.child.kill("SIGTERM");
    expect((await first.exited) - sent, `bound: grace 1 s + 2 s + ${slack} ms measured slack`).toBeLessThan(3_000 + slack);
    expect(agentsIn(repo)).toEqual([]);
    const { id } = await recorded(store);
    const d = json(pulse("status", id, "--json"));
    expect(d.session.status).toBe("paused");
    expect(d.session.status_reason).toMatch(/^interrupted by a signal to pulse serve \(process \d+\) during iteration 1; what the agent left is in recovery commit [0-9a-f]{8}; resume with/);

    // The near miss of a graceful stop: serve killed outright; its agent is still stopped by its watchdog.
    const second = start();
    await begin(await second.url);
    second.child.kill("SIGKILL");
    await second.exited;
    // The watchdog's own TERM → KILL wait is 2 s, and it scans /proc for the run's marker twice:
    // on a machine running a whole test suite that scan alone can take seconds.
    await until(() => (agentsIn(repo).length === 0 ? true : undefined), 8_000 + machineSlackMs());
  }, 60_000);
});

describe("--stop-grace and a second signal", () => {
  it("a second Ctrl-C (SIGINT) stops the turn at once, long before the grace; the first one pauses as SIGTERM does", async () => {
    const { repo, store, script, pulse, background } = setup([{ shell: ["echo wip > wip.txt; trap '' TERM; sleep 300"], text: "<signal>COMPLETE</signal>" }]);
    const run = background("start", "--goal", "stop me now", "--driver", "scripted", "--script", script, "--stop-grace", "60");
    await until(() => (agentsIn(repo).length > 0 ? true : undefined));
    const slack = machineSlackMs();
    const sent = Date.now();
    run.child.kill("SIGINT");
    await until(() => (/SIGINT: pausing/.test(run.output()) ? true : undefined));
    run.child.kill("SIGINT");
    const { code, at } = await run.exited;
    expect(at - sent, `${run.output()}\n(bound: 4 s + ${slack} ms measured slack, the grace being 60 s)`).toBeLessThan(4_000 + slack);
    expect(code, run.output()).toBe(0);
    expect(run.output()).toContain("SIGINT again: stopping the turn now");
    expect(run.output()).not.toContain("Continuing...");
    expect(agentsIn(repo)).toEqual([]);
    const { id } = await recorded(store);
    expect(json(pulse("status", id, "--json")).session.status_reason).toMatch(/^interrupted by SIGINT during iteration 1; what the agent left is in recovery commit/);
  }, 30_000);

  it("refuses a --stop-grace that is no number of seconds in one line, before recording a session; a fraction is accepted", () => {
    const { script, pulse } = setup([{ text: "<signal>COMPLETE</signal>" }]);
    for (const bad of ["abc", "-1", "10s", "3601"]) {
      const r = pulse("start", "--goal", "g", "--driver", "scripted", "--script", script, "--stop-grace", bad);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`pulse session: --stop-grace: takes seconds from 0 to 3600, not ${JSON.stringify(bad)}\n`);
    }
    expect(pulse("list").stdout).toBe("no sessions\n");
    const ok = pulse("start", "--goal", "g", "--driver", "scripted", "--script", script, "--stop-grace", "0.5");
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("complete after 1 iteration");
  }, 30_000);
});
