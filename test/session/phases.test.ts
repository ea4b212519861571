/**
 * The session loop as runtime phases: each phase's output carries what the next needs (a
 * replayed extract_evidence returns the same thing), the route phase's decision is what the
 * runner follows, every iteration's spend is an audit event, and the guard (iteration limit,
 * no-progress breaker) survives a resume.
 */
import { describe, expect, it } from "vitest";
import { MemorySessionRecords } from "../../adapters/memory/session-records.js";
import { ScriptedDriver } from "../../adapters/agents/scripted/scripted-driver.js";
import type { Script } from "../../adapters/agents/scripted/script.js";
import type { AuditEvent } from "../../src/substrates/contracts.js";
import type { PhaseContext, PhaseHandler } from "../../src/runtime/handler-context.js";
import { createRuntime } from "../../src/embedded.js";
import { loadSessionProfile, packageFile, SESSION_MANIFEST } from "../../src/coding/session/profile.js";
import { SessionRunner } from "../../src/coding/session/runner.js";
import { harness, newSession, tempRepos } from "./helpers.js";

const repo = tempRepos();

const limits = { maxIterations: 10, maxConsecutiveFailures: 3, noProgressLimit: 2, sameErrorLimit: 5, permissionDenialLimit: 2 };

describe("the session's phases", () => {
  it("records each iteration's spend as an agent.usage audit event of the route phase", async () => {
    const events: AuditEvent[] = [];
    const runtime = await createRuntime();
    await runtime.load(packageFile(SESSION_MANIFEST), { substrates: { audit: { append_event: async ({ event }) => (events.push(event), { event_id: event.event_id }), query_by_trace: async () => events } } });
    const records = new MemorySessionRecords();
    const driver = new ScriptedDriver({
      steps: [
        { match: { iteration: 1 }, files: { "a.txt": "a\n" }, commit: "a", text: "<signal>CONTINUE</signal>", usage: { inputTokens: 1000, outputTokens: 100 }, costUsd: 0.25 },
        { match: { iteration: 2 }, text: "<signal>COMPLETE</signal>", usage: { inputTokens: 500, outputTokens: 50 }, costUsd: 0.1 },
      ],
    });
    const runner = await SessionRunner.create({ runtime, records, profile: loadSessionProfile(), driverFor: () => driver });
    const id = await newSession(records, repo());
    expect((await runner.run(id)).status).toBe("complete");
    const usage = events.filter((e) => e.event_type === "agent.usage");
    expect(usage.map((e) => [e.phase_id, (e.data as { iteration: number }).iteration, (e.data as { costUsd: number }).costUsd])).toEqual([
      ["record_branch", 1, 0.25],
      ["record_branch", 2, 0.1],
    ]);
  });

  it("counts uncommitted edits as progress, and nothing changed as none", async () => {
    const edits: Script = { mode: "repeat-last", steps: [{ files: { "wip.txt": "" }, shell: ["date +%s%N >> wip.txt"], text: "<signal>CONTINUE</signal>" }] };
    // Auto-commit off: the edits stay uncommitted (with it on, pulse's own commit would be the progress).
    const profile = loadSessionProfile();
    const h = await harness(edits, { profile: { limits: { ...limits, maxIterations: 3 }, extract: { ...profile.extract, autoCommit: false } } });
    const id = await newSession(h.records, repo(), { max_iterations: 3 });
    const edited = await h.runner.run(id);
    expect(edited).toMatchObject({ status: "failed", stop_reason: "max_iterations", current_iteration: 3, total_commits: 0 });
    expect((await h.records.iterations(id)).map((i) => [i.commit_hash, i.files_changed])).toEqual([
      [null, ["wip.txt"]],
      [null, ["wip.txt"]],
      [null, ["wip.txt"]],
    ]);

    const idle = await harness({ mode: "repeat-last", steps: [{ text: "<signal>CONTINUE</signal>" }] }, { profile: { limits } });
    const id2 = await newSession(idle.records, repo());
    expect(await idle.runner.run(id2)).toMatchObject({ status: "failed", stop_reason: "no_progress", current_iteration: 2 });
  });

  it("resumes a session the no-progress breaker stopped half-open: one more idle iteration stops it at once", async () => {
    const r = repo();
    const idle: Script = { mode: "repeat-last", steps: [{ text: "<signal>CONTINUE</signal>" }] };
    const h = await harness(idle, { profile: { limits } });
    const id = await newSession(h.records, r);
    expect(await h.runner.run(id)).toMatchObject({ status: "failed", stop_reason: "no_progress", current_iteration: 2 });
    const again = await h.runner.run(id);
    expect(again).toMatchObject({ status: "failed", stop_reason: "circuit_open", current_iteration: 3 });
    expect(again.status_reason).toMatch(/no progress on the half-open try/);

    // Near miss: the resumed iteration makes progress, and the session goes on to complete.
    const h2 = await harness(
      {
        steps: [
          { match: { iteration: 1 }, text: "<signal>CONTINUE</signal>" },
          { match: { iteration: 2 }, text: "<signal>CONTINUE</signal>" },
          { match: { iteration: 3 }, files: { "b.txt": "b\n" }, commit: "b", text: "<signal>CONTINUE</signal>" },
          { match: { iteration: 4 }, text: "<signal>COMPLETE</signal>" },
        ],
      },
      { profile: { limits } },
    );
    const id2 = await newSession(h2.records, repo());
    expect((await h2.runner.run(id2)).stop_reason).toBe("no_progress");
    expect(await h2.runner.run(id2)).toMatchObject({ status: "complete", current_iteration: 4 });
  });

  it("checks the iteration limit once, against every iteration the session ran, resumed or not", async () => {
    const steps: Script = { mode: "repeat-last", steps: [{ shell: ["date +%s%N >> log.txt"], text: "<signal>CONTINUE</signal>" }] };
    const h = await harness(steps, { profile: { limits } });
    const id = await newSession(h.records, repo(), { max_iterations: 2 });
    expect(await h.runner.run(id)).toMatchObject({ status: "failed", stop_reason: "max_iterations", current_iteration: 2, status_reason: "reached the limit of 2 iterations" });
    // At its limit, a resume runs nothing; raised by one, exactly one more.
    expect(await h.runner.run(id)).toMatchObject({ current_iteration: 2, stop_reason: "max_iterations" });
    await h.records.update(id, { max_iterations: 3 });
    expect(await h.runner.run(id)).toMatchObject({ current_iteration: 3, stop_reason: "max_iterations", status_reason: "reached the limit of 3 iterations" });
    expect((await h.records.iterations(id)).map((i) => i.iteration_number)).toEqual([1, 2, 3]);
  });

  it("extract_evidence, run again on the same input, returns the same output", async () => {
    const r = repo();
    const runtime = await createRuntime();
    const outputs: unknown[] = [];
    // Each handler the runner binds is seen here; extract_evidence is run twice on its input.
    const handle = runtime.handle.bind(runtime);
    runtime.handle = ((name: string, handler: PhaseHandler) =>
      handle(name, name.endsWith("/extract_evidence") ? async (ctx: PhaseContext) => {
        const first = await handler(ctx);
        outputs.push(first, await handler(ctx));
        return first;
      } : handler)) as typeof runtime.handle;
    const records = new MemorySessionRecords();
    const driver = new ScriptedDriver({ steps: [{ files: { "c.txt": "c\n" }, commit: "feat: c", text: "Wrote c. <signal>COMPLETE</signal>" }] });
    const runner = await SessionRunner.create({ runtime, records, profile: loadSessionProfile(), driverFor: () => driver });
    const id = await newSession(records, r);
    expect((await runner.run(id)).status).toBe("complete");
    expect(outputs).toHaveLength(2);
    expect(outputs[1]).toEqual(outputs[0]);
    expect(outputs[0]).toMatchObject({ iteration: 1, signal: { signal: "COMPLETE", source: "tag" }, evidence: { filesChanged: ["c.txt"] } });
  });
});
