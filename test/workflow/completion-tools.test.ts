/**
 * The workflow's completion tools are real both ways: the HTTP driver's model is offered
 * record_baseline and preflight_done in the preflight, pulse_done and request_extension in a
 * pulse (unresolvedIssues only once a completion was rejected), and a failed edit the agent did
 * not put right rejects its pulse_done; a CLI agent gets them from `pulse workflow mcp`.
 */
import { randomUUID } from "node:crypto";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { runChecks } from "../../adapters/agents/cli/checks.js";
import { HttpDriver } from "../../adapters/agents/http/http-driver.js";
import { SqliteAgentProcesses } from "../../adapters/sqlite/agent-processes.js";
import { SqliteWorkflowRecords } from "../../adapters/sqlite/workflow-records.js";
import { createRuntime } from "../../src/embedded.js";
import { GuidanceGate } from "../../src/coding/guidance/gate.js";
import { loadWorkflowProfile } from "../../src/coding/workflow/profile.js";
import { WorkflowRunner } from "../../src/coding/workflow/runner.js";
import { planWorkflowWorkspace } from "../../src/coding/workflow/workspace.js";
import { startChatMock } from "../agents/support/chat-mock.js";
import { ROOT, runBin } from "../cli/run-bin.js";
import { FIXED_ADD, git, worlds, writeFile } from "./helpers.js";

const world = worlds();
type Tool = { function: { name: string; parameters: { properties: Record<string, unknown> } } };
const toolsOf = (body: Record<string, unknown>) => (body.tools as Tool[]).map((t) => t.function);

describe("the workflow's completion tools", () => {
  it("are offered natively to the HTTP driver's model; a failed edit left standing rejects pulse_done, the fix is accepted", async () => {
    const w = world();
    const mock = await startChatMock([
      { toolCalls: [{ name: "record_baseline", arguments: { issueType: "Error", source: "Test", pattern: "add adds" } }, { name: "preflight_done", arguments: { summary: "nothing to install", buildSuccess: false, verificationCommands: ["node --test"] } }] },
      { toolCalls: [{ name: "edit_file", arguments: { path: "src/math.js", old_string: "a * b", new_string: "a + b" } }] },
      { toolCalls: [{ name: "pulse_done", arguments: { summary: "fix(math): add adds" } }] },
      { toolCalls: [{ name: "write_file", arguments: { path: "src/math.js", content: FIXED_ADD } }] },
      { toolCalls: [{ name: "pulse_done", arguments: { summary: "fix(math): add adds" } }] },
    ]);
    const records = SqliteWorkflowRecords.open(join(w.dir, "pulse.db"));
    const processes = SqliteAgentProcesses.open(join(w.dir, "pulse.db"));
    try {
      const driver = new HttpDriver({ baseUrl: mock.url, model: "mock-llm" });
      const profile = loadWorkflowProfile();
      const runner = await WorkflowRunner.create({ runtime: await createRuntime(), records, profile, processes, driverFor: () => driver, checks: (c, o) => runChecks(c, { ...o, parentEnv: process.env }) });
      const id = randomUUID();
      const where = await planWorkflowWorkspace(w.repo, id, { base: "main", prefix: "pulse/workflow/", dir: w.worktrees });
      await records.create({ id, title: "t", plan_path: null, repo_path: w.repo, ...where, driver: { name: "openai" }, verify: { checks: [] } }, [{ id: randomUUID(), number: 1, title: "Fix add", description: "Fix add" }]);
      const final = await runner.run(id);
      expect(final.status, final.status_reason ?? "").toBe("completed");

      const preflight = toolsOf(mock.bodies[0]!).map((t) => t.name);
      expect(preflight).toEqual(expect.arrayContaining(["record_baseline", "preflight_done"]));
      const firstTurn = toolsOf(mock.bodies[1]!);
      expect(firstTurn.map((t) => t.name)).toEqual(expect.arrayContaining(["pulse_done", "request_extension", "edit_file", "shell"]));
      expect(firstTurn.find((t) => t.name === "pulse_done")!.parameters.properties).not.toHaveProperty("unresolvedIssues");
      // After one rejection the escape hatch is on offer.
      expect(toolsOf(mock.bodies[3]!).find((t) => t.name === "pulse_done")!.parameters.properties).toHaveProperty("unresolvedIssues");
      expect(JSON.stringify(mock.bodies[3]!.messages)).toContain("a tool call failed and was not fixed: edit_file src/math.js failed");

      const [pulse] = await records.pulses(id);
      expect(pulse).toMatchObject({ status: "succeeded", turns: 2, rejections: 1, summary: "fix(math): add adds", files_changed: ["src/math.js"] });
      expect(await records.baselines(id)).toMatchObject([{ issueType: "Error", source: "Test", pattern: "add adds" }]);
      expect(git(w.repo, "show", `${final.branch_name}:src/math.js`)).toBe(FIXED_ADD.trim());
      expect(await processes.list(id)).toEqual([]);
    } finally {
      await mock.close();
      await processes.close();
      await records.close();
    }
  }, 60_000);

  it("are served over MCP to CLI agents by pulse workflow mcp, per phase, a call acknowledged and a bad one refused", async () => {
    const w = world();
    const connect = async (phase: string, extra: string[] = []) => {
      const client = new Client({ name: "test-agent", version: "1" });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [resolve(ROOT, "dist/bin/pulse.mjs"), "workflow", "mcp", "--phase", phase, "--store", join(w.dir, "pulse.db"), ...extra], cwd: w.dir, env: { PATH: process.env.PATH ?? "", HOME: w.dir }, stderr: "pipe" }));
      return client;
    };
    const pulse = await connect("pulse");
    try {
      const tools = (await pulse.listTools()).tools;
      expect(tools.map((t) => t.name)).toEqual(["pulse_done", "request_extension"]);
      expect(tools[0]!.inputSchema.properties).toHaveProperty("unresolvedIssues");
      const ok = await pulse.callTool({ name: "pulse_done", arguments: { summary: "feat: x" } });
      expect(ok.isError).toBeFalsy();
      expect((ok.content as { text: string }[])[0]!.text).toBe("pulse_done received: end your turn now");
      const bad = await pulse.callTool({ name: "pulse_done", arguments: {} });
      expect(bad.isError).toBe(true);
      expect((bad.content as { text: string }[])[0]!.text).toBe("pulse_done needs summary");
    } finally {
      await pulse.close();
    }
    const preflight = await connect("preflight");
    try {
      expect((await preflight.listTools()).tools.map((t) => t.name)).toEqual(["record_baseline", "preflight_done"]);
      const rec = await preflight.callTool({ name: "record_baseline", arguments: { issueType: "Error", source: "Build", pattern: "CS0618" } });
      expect((rec.content as { text: string }[])[0]!.text).toBe("baseline recorded");
    } finally {
      await preflight.close();
    }

    // With the worktree's guidance: a pending change is reported, and acknowledged through the served tool (a wrong id is refused).
    const gate = await GuidanceGate.open(w.repo, undefined, { gitExclude: false });
    const steered = await gate.steer("Keep the public API stable");
    const guided = await connect("pulse", ["--guidance", w.repo]);
    try {
      expect((await guided.listTools()).tools.map((t) => t.name)).toEqual(["pulse_done", "request_extension", "pulse_should_interrupt", "pulse_ack_replan"]);
      const asked = await guided.callTool({ name: "pulse_should_interrupt", arguments: {} });
      expect(asked.structuredContent).toMatchObject({ needs_replan: true, pending_replan_event_id: steered.id });
      const wrong = await guided.callTool({ name: "pulse_ack_replan", arguments: { event_id: "evt_not_it" } });
      expect(wrong.structuredContent).toMatchObject({ accepted: false });
      writeFile(w, "repo/.pulse/plan.md", "1. keep the API\n");
      const ack = await guided.callTool({ name: "pulse_ack_replan", arguments: { event_id: steered.id } });
      expect(ack.structuredContent).toMatchObject({ accepted: true, acknowledged_event_id: steered.id });
      expect((await guided.callTool({ name: "pulse_should_interrupt", arguments: {} })).structuredContent).toMatchObject({ needs_replan: false });
      expect((await guided.callTool({ name: "pulse_done", arguments: { summary: "feat: x" } })).isError).toBeFalsy();
    } finally {
      await guided.close();
    }
    const missing = runBin("pulse", ["workflow", "mcp", "--phase", "pulse", "--store", join(w.dir, "pulse.db"), "--guidance", join(w.dir, "no-such-worktree")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--guidance: \S+no-such-worktree: no such directory/);
  }, 60_000);
});

describe("a CLI agent in a workflow", () => {
  it("ends its preflight and its pulse with the completion tools pulse serves it over MCP", () => {
    const w = world();
    const config = writeFile(w, "agents.json", JSON.stringify({ presets: { "mcp-agent": { extends: "claude", command: resolve(ROOT, "test/workflow/fixtures/mcp-agent.mjs") } } }));
    const plan = writeFile(w, "plan.md", "- Fix add\n");
    const r = runBin("pulse", ["workflow", "start", "--plan", plan, "--driver", "mcp-agent", "--repo", w.repo, "--base", "main", "--store", join(w.dir, "pulse.db"), "--json"], { env: { ...w.env, PULSE_AGENTS_CONFIG: config } });
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.preflight.summary).toBe("tools offered: record_baseline, preflight_done");
    expect(s.pulses[0]).toMatchObject({ status: "succeeded", gate: "passed", summary: "fix(math): add adds (tools: pulse_done, request_extension, pulse_should_interrupt, pulse_ack_replan)", files: ["src/math.js"] });
    expect(git(w.repo, "show", `${s.workflow.branch}:src/math.js`)).toBe(FIXED_ADD.trim());
  }, 60_000);
});
