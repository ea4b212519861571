/**
 * A session's iteration resumed from the runtime's journal at a phase boundary no signal can hit
 * from outside (issue 24): the runner "dies" inside record_branch, after its writes to the
 * session's records and before the journal committed the phase (its process is simulated by a
 * runner whose record update never returns, abandoned; a second runner on a new runtime over the
 * same SQLite file resumes). The agent's turn and extract_evidence are not run again, the
 * session's totals are not counted twice, the guard counts the iteration once, and the audit
 * trail holds each phase once in the iteration's one trace.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteSessionRecords } from "../../adapters/sqlite/session-records.js";
import { ScriptedDriver } from "../../adapters/agents/scripted/scripted-driver.js";
import type { ScriptStep } from "../../adapters/agents/scripted/script.js";
import { createRuntime, openStore, storeAuditRegistry } from "../../src/embedded.js";
import { loadSessionProfile } from "../../src/coding/session/profile.js";
import { SessionRunner } from "../../src/coding/session/runner.js";
import type { SessionPatch, SessionRecords } from "../../src/coding/session/records.js";
import type { Store } from "../../src/store/contracts.js";
import { gitLog, newSession, removeDir, tempRepos } from "./helpers.js";

const repo = tempRepos();
const dirs: string[] = [];
afterAll(() => dirs.splice(0).forEach(removeDir));

const steps: ScriptStep[] = [
  { match: { iteration: 1 }, files: { "a.js": "1\n" }, commit: "a", usage: { inputTokens: 100, outputTokens: 10 }, text: "<signal>CONTINUE</signal>" },
  { match: { iteration: 2 }, files: { "b.js": "2\n" }, commit: "b", usage: { inputTokens: 200, outputTokens: 20 }, text: "<signal>CONTINUE</signal>" },
  { match: { iteration: 3 }, files: { "c.js": "3\n" }, commit: "c", usage: { inputTokens: 300, outputTokens: 30 }, text: "<signal>CONTINUE</signal>" },
];

/** A runner of `db` on a runtime of its own journaling there; `records` as given. */
async function runnerOn(db: string, records: SessionRecords, driver: ScriptedDriver): Promise<{ runner: SessionRunner; store: Store }> {
  const store = await openStore(`sqlite:${db}`);
  const runtime = await createRuntime({ registry: storeAuditRegistry(store), store });
  return { runner: await SessionRunner.create({ runtime, records, profile: loadSessionProfile(), driverFor: () => driver }), store };
}

/** The records, except that the update `dies` picks never returns (once made): the runner stops there as if killed. */
function dyingAt(records: SessionRecords, dies: (patch: SessionPatch) => boolean, died: () => void): SessionRecords {
  return new Proxy(records, {
    get(target, key) {
      if (key === "update") {
        return async (id: string, patch: SessionPatch) => {
          const s = await target.update(id, patch);
          if (dies(patch)) {
            died();
            await new Promise(() => undefined);
          }
          return s;
        };
      }
      const v = Reflect.get(target, key) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

describe("a session resumed from the journal inside record_branch", () => {
  it("goes on at record_branch: the turn and extract_evidence are not run again, totals are counted once, the guard's limit counts the iteration once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-journal-"));
    dirs.push(dir);
    const db = join(dir, "pulse.db");
    const records = SqliteSessionRecords.open(db);
    const cwd = repo();
    const id = await newSession(records, cwd, { max_iterations: 3 });

    // The first runner dies in iteration 2's record_branch, right after it added the iteration to the session's totals.
    let died!: () => void;
    const dead = new Promise<void>((r) => (died = r));
    const firstDriver = new ScriptedDriver({ steps });
    const first = await runnerOn(db, dyingAt(records, (p) => (p.progress_log?.length ?? 0) === 2, () => died()), firstDriver);
    void first.runner.run(id, { lock: { path: "", release: () => undefined } });
    await dead;
    expect(firstDriver.calls.map((c) => c.iteration)).toEqual([1, 2]);
    const before = (await records.get(id))!;
    expect(before).toMatchObject({ current_iteration: 2, total_tokens_used: 330, total_commits: 2 });

    const secondDriver = new ScriptedDriver({ steps });
    const events: string[] = [];
    const second = await runnerOn(db, records, secondDriver);
    const done = await second.runner.run(id, { lock: { path: "", release: () => undefined }, onEvent: (e) => events.push(e.type === "session.started" ? `started: ${e.recovered}` : e.type) });
    // The agent was not called again for iteration 2 (its turn's result came from the journal), only for iteration 3.
    expect(secondDriver.calls.map((c) => c.iteration)).toEqual([3]);
    expect(events[0]).toBe("started: iteration 2 was interrupted at record_branch when its runner stopped; it goes on there from the journal (build_context, dispatch_agent, extract_evidence not run again)");
    // Counted once, and the limit of 3 stops it after iteration 3: the resumed iteration counted once against it.
    expect(done).toMatchObject({ current_iteration: 3, total_tokens_used: 660, total_commits: 3, stop_reason: "max_iterations" });
    expect(done.progress_log.map((e) => e.iteration)).toEqual([1, 2, 3]);
    const its = await records.iterations(id);
    expect(its.map((i) => [i.iteration_number, i.status, i.tokens_used])).toEqual([
      [1, "complete", 110],
      [2, "complete", 220],
      [3, "complete", 330],
    ]);
    expect(gitLog(cwd)).toEqual(["c", "b", "a", "initial"]);

    // The trail: three traces, each phase once in each; iteration 2's opened again by iteration.resumed.
    const page = await second.store.queryAudit({ workspace_id: id, limit: 1000 });
    const byTrace = new Map<string, string[]>();
    for (const { event } of page.events) {
      if (event.loop_id !== "coding.pulse_session") continue;
      const list = byTrace.get(event.trace_id) ?? [];
      if (event.event_type === "phase.completed" || event.event_type === "phase.routed" || event.event_type === "iteration.resumed") list.push(event.event_type === "iteration.resumed" ? "resumed" : event.phase_id!);
      byTrace.set(event.trace_id, list);
    }
    const all = ["build_context", "dispatch_agent", "extract_evidence", "record_branch", "learn"];
    expect([...byTrace.values()]).toEqual([all, ["build_context", "dispatch_agent", "extract_evidence", "resumed", "record_branch", "learn"], all]);
    expect((await second.store.verifyAudit(id)).every((r) => r.ok)).toBe(true);
    await second.store.close();
    await records.close();
  });

  it("near miss: the same death before the session's totals were written counts the iteration's totals then, once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-journal-"));
    dirs.push(dir);
    const db = join(dir, "pulse.db");
    const records = SqliteSessionRecords.open(db);
    const cwd = repo();
    const id = await newSession(records, cwd, { max_iterations: 2 });
    let died!: () => void;
    const dead = new Promise<void>((r) => (died = r));
    // Dies at the same update, but as if before it reached the database: nothing of iteration 2 is in the totals.
    const dying = new Proxy(records, {
      get(target, key) {
        if (key === "update") {
          return async (sid: string, patch: SessionPatch) => {
            if ((patch.progress_log?.length ?? 0) === 2) {
              died();
              await new Promise(() => undefined);
            }
            return target.update(sid, patch);
          };
        }
        const v = Reflect.get(target, key) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const first = await runnerOn(db, dying, new ScriptedDriver({ steps }));
    void first.runner.run(id, { lock: { path: "", release: () => undefined } });
    await dead;
    expect((await records.get(id))!).toMatchObject({ total_tokens_used: 110, total_commits: 1 });
    const second = await runnerOn(db, records, new ScriptedDriver({ steps }));
    const done = await second.runner.run(id, { lock: { path: "", release: () => undefined } });
    expect(done).toMatchObject({ current_iteration: 2, total_tokens_used: 330, total_commits: 2, stop_reason: "max_iterations" });
    expect(done.progress_log.map((e) => e.iteration)).toEqual([1, 2]);
    await second.store.close();
    await records.close();
  });

  it("killed in build_context, before the journal held anything of the iteration: it runs again from its start under its number, one row, its agent called once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-journal-"));
    dirs.push(dir);
    const db = join(dir, "pulse.db");
    const records = SqliteSessionRecords.open(db);
    const cwd = repo();
    const id = await newSession(records, cwd, { max_iterations: 3 });
    let died!: () => void;
    const dead = new Promise<void>((r) => (died = r));
    // build_context recorded iteration 2 (pending) and made it the session's current one, then the runner died.
    const firstDriver = new ScriptedDriver({ steps });
    const first = await runnerOn(db, dyingAt(records, (p) => p.current_iteration === 2, () => died()), firstDriver);
    void first.runner.run(id, { lock: { path: "", release: () => undefined } });
    await dead;
    expect(firstDriver.calls.map((c) => c.iteration)).toEqual([1]);
    expect((await records.iterations(id)).map((i) => [i.iteration_number, i.status])).toEqual([
      [1, "complete"],
      [2, "pending"],
    ]);
    const secondDriver = new ScriptedDriver({ steps });
    const events: string[] = [];
    const second = await runnerOn(db, records, secondDriver);
    const done = await second.runner.run(id, { lock: { path: "", release: () => undefined }, onEvent: (e) => void (e.type === "session.started" && events.push(e.recovered ?? "")) });
    expect(events).toEqual(["iteration 2 was interrupted before its agent's turn when its runner stopped; it runs again from its start"]);
    expect(secondDriver.calls.map((c) => c.iteration)).toEqual([2, 3]);
    expect(done).toMatchObject({ current_iteration: 3, total_tokens_used: 660, stop_reason: "max_iterations" });
    expect((await records.iterations(id)).map((i) => [i.iteration_number, i.status])).toEqual([
      [1, "complete"],
      [2, "complete"],
      [3, "complete"],
    ]);
    expect((await second.store.verifyAudit(id)).every((r) => r.ok)).toBe(true);
    await second.store.close();
    await records.close();
  });
});
