/**
 * What a run leaves outside its report: the envelopes of its phases in the loop's audit trail
 * (agent.<type>, signed by their phase), and its action processes recorded in the home's store
 * while they live and forgotten when they end.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SqliteAgentProcesses } from "../../adapters/sqlite/agent-processes.js";
import { createAgent } from "../../src/coding/agent/api.js";
import { AGENT_MANIFEST } from "../../src/coding/agent/runner.js";
import { packageFile } from "../../src/coding/session/profile.js";
import { createRuntime } from "../../src/embedded.js";
import type { AuditEvent } from "../../src/index.js";
import { execute, planStep, script, tempHome } from "./helpers.js";

describe("the audit trail", () => {
  it("holds the envelopes emitted in phases, each as agent.<type> of its phase", async () => {
    const runtime = await createRuntime();
    const events: AuditEvent[] = [];
    await runtime.load(packageFile(AGENT_MANIFEST), { substrates: { audit: { append_event: async ({ event }) => (events.push(event), { event_id: event.event_id }), query_by_trace: async () => events } } });
    const { home, workdir } = tempHome();
    const agent = await createAgent({ home, workdir, runtime, store: "memory:", driver: "scripted", script: script(planStep([{ id: "s1", desc: "add" }]), execute("add", { a: 1, b: 2 }, "s1")) });
    const { runId, finished } = await agent.ask("add one and two", [], { executionMode: "auto" });
    expect((await finished).status).toBe("succeeded");
    const mine = events.filter((e) => e.event_type.startsWith("agent."));
    expect(mine.map((e) => [e.event_type, e.phase_id])).toEqual([
      ["agent.plan_built", "plan"],
      ["agent.decision", "decide"],
      ["agent.action_started", "perform_action"],
      ["agent.action_result", "perform_action"],
      ["agent.feedback_received", "evaluate_progress"],
      ["agent.plan_updated", "evaluate_progress"],
      ["agent.progress_evaluated", "evaluate_progress"],
    ]);
    expect(mine.every((e) => e.workspace_id === runId && e.loop_id === "coding.plan_decide_act" && /^blake3:/.test(e.signature))).toBe(true);
    // The route phase's decision reached the runtime's own audit of the phase.
    const routed = events.find((e) => e.event_type === "phase.routed");
    expect(routed?.data).toMatchObject({ decision: "execute", next: "perform_action" });
    await agent.close();
  });
});

describe("action processes", () => {
  it("are recorded in the home's store while they run and forgotten when they end", async () => {
    const { home, workdir } = tempHome({ execution: { max_wall_time_sec: 3 } });
    const agent = await createAgent({ home, workdir, driver: "scripted", script: script(planStep([{ id: "s1", desc: "sleep" }]), execute("slow", {}, "s1")) });
    const { runId, finished } = await agent.ask("Sleep for a long while", [], { executionMode: "auto" });
    const processes = SqliteAgentProcesses.open(join(home, "agent.db"));
    let seen: Awaited<ReturnType<typeof processes.list>> = [];
    for (let i = 0; i < 40 && !seen.some((p) => p.pid > 0); i++) {
      await new Promise((r) => setTimeout(r, 50));
      seen = await processes.list(runId);
    }
    const live = seen.find((p) => p.pid > 0)!;
    expect(live).toMatchObject({ session_id: runId, iteration: 1, runner_pid: process.pid });
    expect(live.pgid).toBe(live.pid);
    expect(live.marker).toMatch(new RegExp(`^pulse-agent-${runId}-1-`));
    expect((await finished).status).toBe("timeout");
    expect(await processes.list(runId)).toEqual([]);
    expect(() => process.kill(live.pid, 0)).toThrow();
    await processes.close();
    await agent.close();
  });
});
