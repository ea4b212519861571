/**
 * The hooks pulse installs, in the real gemini and qwen CLIs (test/agent-clis) against the test
 * suite's mock model: while a replan is pending, the CLI's file write is blocked by pulse's hook
 * (the file is not written, the model is told why); after the acknowledgement the same task
 * writes the file. The user's settings (the run's HOME) are read, never written. Under CI=true a
 * missing CLI fails; elsewhere the suite says it was skipped.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
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
const MODELS = { gemini: "gemini-2.5-flash", qwen: "mock-model" } as const;

describe.skipIf(!bin && !inCi)("gemini and qwen with pulse's guidance hooks, against a mock model", () => {
  let mock: MockModelServer;
  beforeAll(async () => {
    mock = await startMockModelServer();
  });
  afterAll(() => mock?.close());

  for (const name of ["gemini", "qwen"] as const) {
    it(`${name}: blocks the write while a replan is pending; after the ack the write goes through; the user's settings untouched`, async () => {
      const command = bin ? cliPath(bin, name) : undefined;
      expect(command, `${name} is not installed: node test/agent-clis/install.mjs`).toBeDefined();
      const { root, sidecar, file } = await project();
      execFileSync("git", ["init", "-q"], { cwd: root });
      // The user's own qwen settings, in the HOME the CLI runs with.
      const home = mkdtempSync(join(tmpdir(), "pulse-user-home-"));
      mkdirSync(join(home, ".qwen"));
      const userSettings = '{ "general": { "checkpointing": { "enabled": false } } }\n';
      writeFileSync(join(home, ".qwen", "settings.json"), userSettings);
      const driver = new CliDriver(BUILTIN_PRESETS[name]!, { command: command!, endpoint: { baseUrl: mock.url, model: MODELS[name] }, guidanceHook: { command: process.execPath, args: [BIN, "guidance", "hook"] }, timeoutMs: 150_000, silenceTimeoutMs: 120_000, homeDir: home, parentEnv: { PATH: process.env.PATH, SSL_CERT_FILE: process.env.SSL_CERT_FILE } });
      try {
        mock.setTask({ workspace: root, file: "app.txt", content: "app\n", finalText: "Wrote app.txt. <signal>COMPLETE</signal>" });
        writeFileSync(file("guidance.md"), "# Guidance\n\nKeep the public API stable.\n");
        const pending = (await sidecar.shouldInterrupt()).pending_replan_event_id!;
        mock.requests.length = 0;
        const events: AgentEvent[] = [];
        const blocked = await driver.run({ prompt: "Create app.txt.", cwd: root }, { onEvent: (e) => events.push(e) });
        const detail = JSON.stringify({ status: blocked.status, error: blocked.error, requests: mock.requests.map((q) => `${q.api} ${q.answered} ${q.messages}`), stderr: blocked.stderr?.slice(-1500) });
        expect(existsSync(join(root, "app.txt")), detail).toBe(false);
        const told = JSON.stringify(events);
        expect(told, detail).toContain("pulse blocked write_file: the guidance changed while you were working.");
        expect(told).toContain(pending);

        writeFileSync(file("plan.md"), "# Plan\n\n1. Keep the API.\n");
        expect((await sidecar.ack(pending)).accepted).toBe(true);
        mock.requests.length = 0;
        const allowed = await driver.run({ prompt: "Create app.txt.", cwd: root });
        expect(allowed.status, JSON.stringify({ error: allowed.error, stderr: allowed.stderr?.slice(-1500) })).toBe("ok");
        expect(readFileSync(join(root, "app.txt"), "utf8")).toBe("app\n");
        expect(readFileSync(join(home, ".qwen", "settings.json"), "utf8")).toBe(userSettings);
      } finally {
        driver.close();
      }
    }, 300_000);
  }
});
