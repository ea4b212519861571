/**
 * The hooks pulse installs, in the real claude CLI (test/agent-clis) against the test suite's
 * mock model: while a replan is pending, claude's Write is blocked by pulse's PreToolUse hook
 * (the file is not written, the model is told why) and its stop is refused once; after the
 * acknowledgement the same task writes the file. Under CI=true a missing CLI fails; elsewhere
 * the suite says it was skipped.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agents/contract.js";
import { CliDriver } from "../../adapters/agents/cli/cli-driver.js";
import { BUILTIN_PRESETS } from "../../adapters/agents/cli/presets.js";
import { agentClisBin, cliPath } from "../agents/support/agent-clis.js";
import { startMockModelServer, type MockModelServer } from "../agents/support/mock-model-server.js";
import { project } from "./helpers.js";
import { BIN } from "./serve-process.js";

const bin = agentClisBin();
const inCi = process.env.CI === "true";

describe.skipIf(!bin && !inCi)("claude with pulse's guidance hooks, against a mock model", () => {
  let mock: MockModelServer;
  beforeAll(async () => {
    mock = await startMockModelServer();
  });
  afterAll(() => mock?.close());

  it("blocks the Write while a replan is pending and refuses the stop once; after the ack the Write goes through", async () => {
    const command = bin ? cliPath(bin, "claude") : undefined;
    expect(command, "claude is not installed: node test/agent-clis/install.mjs").toBeDefined();
    const { root, sidecar, file } = await project();
    execFileSync("git", ["init", "-q"], { cwd: root });
    const driver = new CliDriver(BUILTIN_PRESETS.claude!, { command: command!, endpoint: { baseUrl: mock.url, model: "claude-sonnet-4-5" }, guidanceHook: { command: process.execPath, args: [BIN, "guidance", "hook"] }, timeoutMs: 150_000, silenceTimeoutMs: 120_000, parentEnv: { PATH: process.env.PATH } });
    try {
      mock.setTask({ workspace: root, file: "app.txt", content: "app\n", finalText: "Wrote app.txt. <signal>COMPLETE</signal>" });
      writeFileSync(file("guidance.md"), "# Guidance\n\nKeep the public API stable.\n");
      const pending = (await sidecar.shouldInterrupt()).pending_replan_event_id!;
      mock.requests.length = 0;
      const events: AgentEvent[] = [];
      const blocked = await driver.run({ prompt: "Create app.txt.", cwd: root }, { onEvent: (e) => events.push(e) });
      const detail = JSON.stringify({ status: blocked.status, error: blocked.error, requests: mock.requests.map((q) => `${q.api} ${q.answered} ${q.messages}`), stderr: blocked.stderr?.slice(-1500) });
      expect(blocked.status, detail).toBe("ok");
      expect(existsSync(join(root, "app.txt")), detail).toBe(false);
      const results = JSON.stringify(events.filter((e) => e.type === "tool_result"));
      expect(results, detail).toContain("pulse blocked Write: the guidance changed while you were working.");
      expect(results).toContain(pending);
      // The stop was refused once: the model was asked again after its final answer.
      const blockedRequests = mock.requests.filter((q) => q.tools.length > 0).length;
      expect(blockedRequests, detail).toBeGreaterThanOrEqual(3);

      writeFileSync(file("plan.md"), "# Plan\n\n1. Keep the API.\n");
      expect((await sidecar.ack(pending)).accepted).toBe(true);
      mock.requests.length = 0;
      const allowed = await driver.run({ prompt: "Create app.txt.", cwd: root });
      expect(allowed.status).toBe("ok");
      expect(readFileSync(join(root, "app.txt"), "utf8")).toBe("app\n");
      expect(mock.requests.filter((q) => q.tools.length > 0).length).toBeLessThan(blockedRequests);
    } finally {
      driver.close();
    }
  }, 300_000);
});
