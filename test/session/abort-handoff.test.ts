/**
 * Aborting a session a process has just launched (issue 24): the runner hands the run over the
 * moment it takes it (SessionRunner.claimed), so `SessionApi.abort` stops it then, with no poll;
 * a run that ends without taking the session (finished, refused) answers false, and nobody waits.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SessionService } from "../../src/coding/session/service.js";
import { SessionApi } from "../../src/serve/session-api.js";
import { SessionError } from "../../src/coding/session/runner.js";
import { harness, newSession, tempRepos, worktreesRoot } from "./helpers.js";

const repo = tempRepos();
const hang = { steps: [{ outcome: "hang" as const }] };

describe("the runner's claim handoff", () => {
  it("resolves true the moment the runner takes the session: abortHere then stops it before any turn", async () => {
    const h = await harness(hang);
    const id = await newSession(h.records, repo());
    const taken = h.runner.claimed(id);
    const running = h.runner.run(id);
    expect(await taken).toBe(true);
    expect(h.runner.isRunning(id)).toBe(true);
    expect(h.runner.abortHere(id)).toBe(true);
    expect(await running).toMatchObject({ status: "aborted", stop_reason: "aborted", current_iteration: 0 });
    expect(await h.records.iterations(id)).toEqual([]);
    expect(h.driver.calls).toHaveLength(0);
  });

  it("near miss: a run that ends without taking the session (finished) answers false, and the waiter is not left hanging", async () => {
    const h = await harness(hang);
    const id = await newSession(h.records, repo());
    await h.records.update(id, { status: "complete" });
    const taken = h.runner.claimed(id);
    await expect(h.runner.run(id)).rejects.toBeInstanceOf(SessionError);
    expect(await taken).toBe(false);
    expect(h.runner.isRunning(id)).toBe(false);
  });
});

describe("SessionApi.abort of a session it just launched", () => {
  it("stops it as soon as the runner takes it: aborted, no turn, nothing left running", async () => {
    const h = await harness(hang);
    const service = new SessionService(h.records, { driver: "scripted", contextStrategy: "none", maxIterations: 10, worktreesDir: worktreesRoot() });
    const scripts = repo();
    writeFileSync(join(scripts, "hang.json"), JSON.stringify(hang));
    const api = new SessionApi(service, h.runner, { scriptDirs: [scripts] });
    for (let i = 0; i < 5; i++) {
      const s = await api.start({ goal: "abort me at once", repo: repo(), driver: "scripted", script: join(scripts, "hang.json") }, "api");
      // No await between: the runner is still setting the run up (reaping, opening the worktree).
      const aborted = await api.abort(s.id);
      expect(aborted).toMatchObject({ status: "aborted", stop_reason: "aborted", runner_pid: null });
      expect(h.runner.isRunning(s.id)).toBe(false);
      // The abort reached the run the moment it was taken, before its first turn.
      expect(await h.records.iterations(s.id)).toEqual([]);
    }
    await api.settled();
  });
});
