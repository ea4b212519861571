/**
 * Inside a turn: the claude hooks pulse installs for one run (--settings), driven by a fake
 * claude CLI that runs them as claude does. A guidance change mid-turn blocks the next mutating
 * tool call until the agent has replanned and acknowledged; one made before it stops keeps it
 * working; `pulse guidance hook` itself, with its near misses; a CLI without hooks is told so.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CliDriver } from "../../adapters/agents/cli/cli-driver.js";
import { BUILTIN_PRESETS } from "../../adapters/agents/cli/presets.js";
import { runBin } from "../cli/run-bin.js";
import { gitRepo, removeDir, worktreesRoot } from "../session/helpers.js";
import { project } from "./helpers.js";
import { BIN } from "./serve-process.js";

const HOOKED = fileURLToPath(new URL("./fixtures/hooked-agent.mjs", import.meta.url));
const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const PLAN = "# Plan\n\n1. Follow the new guidance.\n";
const hook = { command: process.execPath, args: [BIN, "guidance", "hook"] };

function driver(preset: "claude" | "codex", env: Record<string, string>) {
  return new CliDriver(BUILTIN_PRESETS[preset]!, { command: HOOKED, guidanceHook: hook, killGraceMs: 300, pipeGraceMs: 300, env: { FAKE_PULSE: `${process.execPath} ${BIN}`, ...env }, parentEnv: { PATH: process.env.PATH, HOME: process.env.HOME } });
}

describe("claude's hooks, installed for one run", () => {
  it("a change mid-turn blocks the next mutating call until the agent replans and acknowledges", async () => {
    const { root, file } = await project();
    const r = await driver("claude", { FAKE_STEER: "start" }).run({ prompt: "Write src/app.js", cwd: root });
    expect(r.status, JSON.stringify(r)).toBe("ok");
    const lines = r.text.split("\n");
    // Blocked first; the replan's own steps pass; then the same call goes through.
    expect(lines.slice(0, 4)).toEqual(["blocked Write src/app.js", "did Write .pulse/plan.md", expect.stringMatching(/^did Bash pulse guidance ack evt_\S+$/), "did Write src/app.js"]);
    const state = JSON.parse(readFileSync(file("state.json"), "utf8"));
    expect(state.last_acknowledged_event_id).toBe(/evt_\S+/.exec(lines[2]!)![0]);
    expect(state.last_acknowledged_plan_sha256).toBe(sha(PLAN));
    expect(existsSync(join(root, "src/app.js"))).toBe(true);
    expect(r.toolCalls.map((c) => c.name)).toEqual(["Write", "Write", "Bash", "Write"]);
    expect(r.warnings).toEqual([]);
  }, 60_000);

  it("a change just before the agent stops keeps it working on the replan, once", async () => {
    const { root, file } = await project();
    const r = await driver("claude", { FAKE_STEER: "end" }).run({ prompt: "Write src/app.js", cwd: root });
    expect(r.status).toBe("ok");
    expect(r.text.split("\n").slice(0, 4)).toEqual(["did Write src/app.js", "stop blocked", "did Write .pulse/plan.md", expect.stringMatching(/^did Bash pulse guidance ack evt_/)]);
    expect(JSON.parse(readFileSync(file("state.json"), "utf8")).last_acknowledged_plan_sha256).toBe(sha(PLAN));
  }, 60_000);

  it("with no change, nothing is blocked", async () => {
    const { root } = await project();
    const r = await driver("claude", {}).run({ prompt: "Write src/app.js", cwd: root });
    expect(r.text.split("\n")[0]).toBe("did Write src/app.js");
    expect(r.text).not.toContain("blocked");
  }, 60_000);

  it("a CLI whose hooks pulse does not install says once that it is steered at boundaries only", async () => {
    const { root } = await project();
    const d = driver("codex", {});
    const r1 = await d.run({ prompt: "x", cwd: root });
    const r2 = await d.run({ prompt: "x", cwd: root });
    expect(r1.warnings).toContain("codex has no hooks pulse installs: a guidance change reaches it at the next iteration, not during its turn");
    expect(r2.warnings.filter((w) => w.includes("hooks"))).toEqual([]);
  }, 60_000);
});

describe("pulse guidance hook", () => {
  it("blocks a mutating call while a replan is pending (exit 2, the briefing on stderr), and lets the near misses through", async () => {
    const { root, file } = await project();
    const call = (event: string, input: object) => runBin("pulse", ["guidance", "hook", event, "-C", root], { input: JSON.stringify(input) });
    expect(call("pre-tool-use", { tool_name: "Write", tool_input: { file_path: "a.js" } }).code).toBe(0);
    writeFileSync(file("constraints.md"), "No network access.\n");
    const blocked = call("pre-tool-use", { tool_name: "Edit", tool_input: { file_path: join(root, "src/a.js") } });
    expect(blocked.code).toBe(2);
    expect(blocked.stderr).toMatch(/^pulse blocked Edit: the guidance changed while you were working\.\n\nSTOP: the guidance for this work changed \(pending replan event evt_\S+\)/);
    expect(blocked.stderr).toContain("```text .pulse/constraints.md\nNo network access.\n```");
    expect(call("pre-tool-use", { tool_name: "Bash", tool_input: { command: "rm -rf src" } }).code).toBe(2);
    // Near misses: reading, the plan itself, the acknowledgement through the CLI.
    expect(call("pre-tool-use", { tool_name: "Read", tool_input: { file_path: "a.js" } }).code).toBe(0);
    expect(call("pre-tool-use", { tool_name: "Write", tool_input: { file_path: join(root, ".pulse/plan.md") } }).code).toBe(0);
    expect(call("pre-tool-use", { tool_name: "Bash", tool_input: { command: "pulse guidance ack evt_x" } }).code).toBe(0);
    expect(call("pre-tool-use", { tool_name: "Bash", tool_input: { command: "pulse guidance ack evt_x; rm -rf src" } }).code).toBe(2);
    expect(call("stop", { stop_hook_active: false }).code).toBe(2);
    expect(call("stop", { stop_hook_active: true }).code).toBe(0);
    expect(call("bogus", {})).toMatchObject({ code: 2, stderr: 'pulse guidance: hook takes pre-tool-use or stop, not "bogus"\n' });
    const bad = runBin("pulse", ["guidance", "hook", "stop", "-C", root], { input: "{not json" });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^pulse guidance hook: the hook input is not JSON .*; the call goes on\n$/);
  }, 60_000);
});

describe("a session with a claude agent", () => {
  it("installs the hooks in the agent's run: a change mid-turn is replanned and acknowledged inside the turn, and the session goes on without a held iteration", async () => {
    const repo = gitRepo();
    try {
      const config = join(repo, ".git", "agents.yaml");
      writeFileSync(config, `presets:\n  hooked:\n    extends: claude\n    command: ${HOOKED}\n    env: { FAKE_STEER: start, FAKE_PULSE: "${process.execPath} ${BIN}" }\n`);
      const store = join(repo, ".git", "pulse.db");
      const env = { PULSE_AGENTS_CONFIG: config, PULSE_WORKTREES: worktreesRoot() };
      const r = runBin("pulse", ["session", "start", "--goal", "Write src/app.js", "--repo", repo, "--in-place", "--driver", "hooked", "--max-iterations", "2", "--store", store], { cwd: repo, env });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      const [s] = JSON.parse(runBin("pulse", ["session", "list", "--store", store, "--json"], { cwd: repo, env }).stdout) as { id: string; status: string; current_iteration: number }[];
      expect(s).toMatchObject({ status: "complete", current_iteration: 1 });
      const detail = JSON.parse(runBin("pulse", ["session", "status", s!.id, "--store", store, "--json"], { cwd: repo, env }).stdout);
      expect(detail.iterations[0].output_full).toMatch(/^blocked Write src\/app\.js\ndid Write \.pulse\/plan\.md\ndid Bash pulse guidance ack evt_\S+\ndid Write src\/app\.js\n/);
      const state = JSON.parse(readFileSync(join(repo, ".pulse/state.json"), "utf8"));
      expect(state.last_acknowledged_plan_sha256).toBe(sha(PLAN));
      const events = runBin("pulse", ["session", "logs", s!.id, "--store", store, "--events", "--json"], { cwd: repo, env }).stdout;
      expect(events).not.toContain("guidance.held");
    } finally {
      removeDir(repo);
    }
  }, 90_000);
});
