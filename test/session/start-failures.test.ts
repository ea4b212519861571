/**
 * No session is left `running` without a live runner: a runner that fails after the start was
 * answered records the session `failed` with the reason, and a session the records say this
 * process runs, but nothing here runs, is settled as failed before pause, abort or resume act.
 */
import { afterAll, describe, expect, it } from "vitest";
import { MemorySessionRecords } from "../../adapters/memory/session-records.js";
import { createRuntime } from "../../src/embedded.js";
import { loadSessionProfile } from "../../src/coding/session/profile.js";
import { SessionRunner } from "../../src/coding/session/runner.js";
import { SessionService } from "../../src/coding/session/service.js";
import { SessionApi } from "../../src/serve/session-api.js";
import { gitRepo, newSession, removeDir } from "./helpers.js";

const repos: string[] = [];
afterAll(() => repos.forEach(removeDir));

async function api(driverFor: () => never) {
  const records = new MemorySessionRecords();
  const runner = await SessionRunner.create({ runtime: await createRuntime(), records, profile: loadSessionProfile(), driverFor });
  const service = new SessionService(records, { driver: "scripted", contextStrategy: "none", maxIterations: 3 });
  const errors: string[] = [];
  return { records, api: new SessionApi(service, runner, { scriptDirs: [], onError: (_id, e) => errors.push(e.message) }), errors };
}

describe("a start whose runner fails", () => {
  it("is recorded failed with the reason, never left running, and can be resumed or aborted", async () => {
    const repo = gitRepo();
    repos.push(repo);
    const { api: a, records, errors } = await api(() => {
      throw new Error("the agent's CLI vanished");
    });
    const s = await a.start({ goal: "x", repo, driver: "claude" }, "api");
    await a.settled();
    const after = (await records.get(s.id))!;
    expect(after.status).toBe("failed");
    expect(after.status_reason).toMatch(/could not run: the agent's CLI vanished/);
    expect(after.runner_pid).toBeNull();
    expect(errors).toEqual(["the agent's CLI vanished"]);
    // The repository is free again: its lock went with the runner.
    const again = await a.resume(s.id);
    expect(again.id).toBe(s.id);
    await a.settled();
    expect((await records.get(s.id))!.status).toBe("failed");
    expect((await a.abort(s.id)).status).toBe("aborted");
  });

  it("settles a session recorded as running here that nothing runs, so pause and abort tell the truth", async () => {
    const repo = gitRepo();
    repos.push(repo);
    const { api: a, records } = await api(() => {
      throw new Error("unused");
    });
    const id = await newSession(records, repo);
    await records.update(id, { status: "running", runner_pid: process.pid });
    await expect(a.pause(id)).rejects.toThrow(/is failed, not running/);
    expect((await records.get(id))!.status_reason).toMatch(/its runner stopped/);
    // One whose runner process is gone is shown interrupted (REST, MCP), and listed so.
    const crashed = await newSession(records, repo);
    await records.update(crashed, { status: "running", runner_pid: 2 ** 22 + 12345 });
    expect((await a.status(crashed)).session.status).toBe("interrupted");
    expect((await a.list("interrupted")).map((s) => s.id)).toEqual([crashed]);
    expect((await a.list("running")).map((s) => s.id)).not.toContain(crashed);
        // Near miss: a session that really runs elsewhere (another live process) is left alone.
    const other = await newSession(records, repo);
    await records.update(other, { status: "running", runner_pid: process.ppid });
    const paused = await a.pause(other);
    expect(paused.status).toBe("running");
    expect(paused.control).toBe("pause");
  });
});
