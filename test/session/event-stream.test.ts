/**
 * A session's event stream as kept in the store: a detached session followed from another
 * process (`pulse session logs --follow --events`) shows the live view's lines as they happen
 * and ends with the session; the stored stream read afterwards (lines and JSON lines); and the
 * runner's buffering, which turns an agent's many text deltas into few writes.
 */
import { spawn, spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MemorySessionRecords } from "../../adapters/memory/session-records.js";
import { SqliteSessionRecords } from "../../adapters/sqlite/session-records.js";
import type { AgentEvent, AgentRequest, RunOptions } from "../../src/agents/contract.js";
import { EVENT_DATA_LIMIT, fitted } from "../../src/coding/session/event-log.js";
import type { NewSessionEventRecord } from "../../src/coding/session/records.js";
import { ROOT, runBin } from "../cli/run-bin.js";
import { gitRepo, harness, newSession, removeDir, worktreesRoot } from "./helpers.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) removeDir(d);
});

describe("pulse session logs --events", () => {
  it("follows a detached session from another process as its iterations happen, and ends when it ends", async () => {
    const repo = gitRepo();
    dirs.push(repo);
    const script = join(repo, ".git", "steps.json");
    writeFileSync(script, JSON.stringify({ steps: [
      { match: { iteration: 1 }, delayMs: 300, files: { "a.js": "1\n" }, commit: "a", text: "Wrote a.js. <signal>CONTINUE</signal>" },
      { match: { iteration: 2 }, delayMs: 2500, text: "Done. <signal>COMPLETE</signal>" },
    ] }));
    const store = join(repo, ".pulse", "pulse.db");
    const env = { HOME: repo, PULSE_WORKTREES: worktreesRoot() };
    const pulse = (...args: string[]) => runBin("pulse", ["session", ...args, "--store", store], { cwd: repo, env });
    const started = pulse("start", "--goal", "follow my events", "--driver", "scripted", "--script", script, "--detach");
    expect(started.code, started.stderr).toBe(0);
    expect(started.stdout).toContain("--follow --events");
    const id = /session ([0-9a-f-]{36}) started/.exec(started.stdout)![1]!;
    // Another process follows it; each chunk of its output is timed as it arrives.
    const child = spawn(process.execPath, [join(ROOT, "dist/bin/pulse.mjs"), "session", "logs", id, "--follow", "--events", "--store", store], { cwd: repo, env: { PATH: process.env.PATH ?? "", ...env }, stdio: ["ignore", "pipe", "pipe"] });
    const chunks: { at: number; text: string }[] = [];
    let stderr = "";
    child.stdout.on("data", (d) => chunks.push({ at: Date.now(), text: String(d) }));
    child.stderr.on("data", (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    const exitedAt = Date.now();
    expect(code, stderr).toBe(0);
    const out = chunks.map((c) => c.text).join("");
    expect(out).toMatch(new RegExp(`^session ${id} · "follow my events"`));
    expect(out).toMatch(/#1\/10 running · anchor none\n#1 · CONTINUE · commit [0-9a-f]{8} · 1 file[^\n]*\n {4}Wrote a\.js\.[^\n]*\n {4}receipt: [^\n]*\n#2\/10 running/);
    expect(out).toMatch(/#2 · COMPLETE[^\n]*\n/);
    expect(out).toMatch(/complete after 2 iterations: 1 commit[^\n]*\n {2}the agent signalled COMPLETE\n$/);
    // The first iteration's line came while the second turn (2.5 s) was still under way, not at the end.
    const firstDone = chunks.find((c) => chunks.slice(0, chunks.indexOf(c) + 1).map((x) => x.text).join("").includes("#1 · CONTINUE"))!;
    expect(exitedAt - firstDone.at).toBeGreaterThan(1500);
    expect(pulse("status", id, "--json").stdout).toContain('"status": "complete"');

    // Read afterwards without --follow: the same lines, from the store; --json: one event a line, numbered.
    const again = pulse("logs", id, "--events");
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(out);
    const lines = pulse("logs", id, "--events", "--json").stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((e) => e.seq)).toEqual(lines.map((_, k) => k + 1));
    expect(lines[0]).toMatchObject({ type: "session.started", data: { type: "session.started", session: { id } } });
    expect(lines.at(-1)).toMatchObject({ type: "session.finished", data: { session: { status: "complete" } } });
    // --json alone means the iterations' JSON nowhere: refused in one line; the near miss with --events is taken above.
    const bad = pulse("logs", id, "--json");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe("pulse session: --json goes with --events (the event stream as JSON lines)\n");
    const unknown = pulse("logs", "00000000", "--events");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe("pulse session: no session 00000000 (pulse session list shows them)\n");
  }, 60_000);
});

describe("pulse session logs --follow --events, near misses", () => {
  it("stops following a session whose runner died (shown interrupted), after what it had written", async () => {
    const repo = gitRepo();
    dirs.push(repo);
    const path = join(repo, ".pulse", "pulse.db");
    const records = SqliteSessionRecords.open(path);
    const id = await newSession(records, repo);
    // A runner that wrote two events and was then killed: its pid is gone, its record still says running.
    const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
    await records.update(id, { status: "running", runner_pid: dead, current_iteration: 0 });
    await records.appendEvents(id, [
      { at: new Date().toISOString(), type: "iteration.started", data: { type: "iteration.started", session_id: id, iteration: 1, max: 10, anchor: { strategy: "none" } } },
      { at: new Date().toISOString(), type: "agent", data: { type: "agent", session_id: id, iteration: 1, event: { type: "tool_call", call: { id: "t", name: "Edit", arguments: {} } } } },
    ]);
    await records.close();
    const t0 = Date.now();
    const r = runBin("pulse", ["session", "logs", id, "--follow", "--events", "--store", path], { cwd: repo, env: { HOME: repo, PULSE_WORKTREES: worktreesRoot() }, timeoutMs: 20_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^#1\/10 running · anchor none\n {4}→ Edit\ninterrupted after 0 iterations/);
    expect(Date.now() - t0).toBeLessThan(10_000);
  }, 30_000);
});

describe("the runner's event log", () => {
  it("writes an agent's many text deltas in few writes, the text whole, and every other event as it was", async () => {
    const repo = gitRepo();
    dirs.push(repo);
    const writes: NewSessionEventRecord[][] = [];
    const records = new MemorySessionRecords();
    const append = records.appendEvents.bind(records);
    records.appendEvents = async (id, events) => {
      writes.push(events);
      return append(id, events);
    };
    const h = await harness({ steps: [{ text: "<signal>COMPLETE</signal>" }] }, { records });
    // The agent streams its answer a few characters at a time, as CLI agents do, then calls a tool.
    const scripted = h.driver.run.bind(h.driver);
    h.driver.run = async (request: AgentRequest, options: RunOptions = {}) => {
      for (let k = 0; k < 2000; k++) options.onEvent?.({ type: "text", text: `w${k} ` });
      options.onEvent?.({ type: "tool_call", call: { id: "t1", name: "Edit", arguments: {} } } satisfies AgentEvent);
      return scripted(request, options);
    };
    const id = await newSession(records, repo);
    let emitted = 0;
    const final = await h.runner.run(id, { onEvent: () => emitted++ });
    expect(final.status).toBe("complete");
    const kept = await records.events(id);
    expect(emitted).toBeGreaterThan(2000);
    // Few writes and few rows: the deltas of one turn are one event (or a few, each under the cap).
    expect(writes.length).toBeLessThanOrEqual(6);
    expect(kept.length).toBeLessThan(20);
    const text = kept.filter((e) => e.type === "agent" && (e.data as { event: { type: string } }).event.type === "text").map((e) => (e.data as { event: { text: string } }).event.text).join("");
    expect(text).toBe(`${Array.from({ length: 2000 }, (_, k) => `w${k} `).join("")}<signal>COMPLETE</signal>`);
    const types = kept.map((e) => e.type);
    expect(types[0]).toBe("session.started");
    expect(types.at(-1)).toBe("session.finished");
    // The tool call stays between the text before it and the text after it.
    const call = kept.findIndex((e) => e.type === "agent" && (e.data as { event: { type: string } }).event.type === "tool_call");
    expect(kept[call - 1]!.type).toBe("agent");
    expect(kept.slice(call + 1).some((e) => e.type === "agent" && (e.data as { event: { text?: string } }).event.text === "<signal>COMPLETE</signal>")).toBe(true);
  }, 30_000);

  it("keeps what a session's runner wrote readable by another process (SQLite) after the runner's records are closed", async () => {
    const repo = gitRepo();
    dirs.push(repo);
    const path = join(repo, ".pulse", "pulse.db");
    const records = SqliteSessionRecords.open(path);
    const h = await harness({ steps: [{ text: "<signal>COMPLETE</signal>" }] }, { records });
    const id = await newSession(records, repo);
    await h.runner.run(id);
    await records.close();
    const other = SqliteSessionRecords.open(path);
    const kept = await other.events(id);
    expect(kept.filter((e) => e.type !== "agent").map((e) => e.type)).toEqual(["session.started", "iteration.started", "iteration.finished", "session.finished"]);
    expect(kept.some((e) => e.type === "agent" && (e.data as { event: { text?: string } }).event.text === "<signal>COMPLETE</signal>")).toBe(true);
    await other.close();
  }, 30_000);

  it("cuts an event's long strings to fit the cap, marked, and leaves a small one as it is", () => {
    const small = { type: "agent" as const, session_id: "s", iteration: 1, event: { type: "text" as const, text: "hello" } };
    expect(fitted(small)).toBe(small);
    const big = { ...small, event: { type: "tool_result" as const, id: "t", ok: true, output: "x".repeat(100_000) } };
    const cut = fitted(big) as typeof big;
    expect(JSON.stringify(cut).length).toBeLessThanOrEqual(EVENT_DATA_LIMIT);
    expect(cut.event.output).toMatch(/^x{4096}… \[truncated 95904 chars\]$/);
    expect(cut).toMatchObject({ type: "agent", session_id: "s", iteration: 1, event: { type: "tool_result", ok: true } });
  });
});
