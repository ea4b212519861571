/**
 * The real agent CLIs (pinned in test/agent-clis), each driven by its preset end to end against
 * a mock model server on loopback: the agent writes a file in a temporary git repository with
 * its own tool, the driver parses its stream (text, session id, usage, cost) and the kit
 * resolves the signal and finds the work in git. Exit 0 proves nothing: the work and the final
 * event are checked. Under CI=true a missing CLI fails; elsewhere the suite says it was skipped.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliDriver } from "../../adapters/agents/cli/cli-driver.js";
import { BUILTIN_PRESETS } from "../../adapters/agents/cli/presets.js";
import { collectEvidence, startEvidence } from "../../src/coding/evidence.js";
import { resolveSignal } from "../../src/coding/signals.js";
import { agentClisBin, cliPath } from "./support/agent-clis.js";
import { tempDir } from "./support/fake-agent.js";
import { startMockModelServer, type MockModelServer } from "./support/mock-model-server.js";

const bin = agentClisBin();
const inCi = process.env.CI === "true";
const MODELS: Record<string, string> = { claude: "claude-sonnet-4-5", codex: "mock-model", gemini: "gemini-2.5-flash", qwen: "mock-model", opencode: "mock-model" };

describe.skipIf(!bin && !inCi)("real agent CLIs against a mock model (test/agent-clis)", () => {
  let mock: MockModelServer;
  beforeAll(async () => {
    mock = await startMockModelServer();
  });
  afterAll(() => mock?.close());

  it("the CLIs are installed (node test/agent-clis/install.mjs)", () => {
    expect(bin, "the agent CLIs are not installed: run `node test/agent-clis/install.mjs`").toBeDefined();
  });

  it("claude resumes its session (same driver, same private home), and an agent that did no work is caught by the evidence", async () => {
    const command = bin ? cliPath(bin, "claude") : undefined;
    expect(command).toBeDefined();
    const repo = tempDir("pulse-real-resume-");
    const driver = new CliDriver(BUILTIN_PRESETS.claude!, { command: command!, endpoint: { baseUrl: mock.url, model: MODELS.claude! }, timeoutMs: 150_000, parentEnv: { PATH: process.env.PATH } });
    try {
      execFileSync("git", ["init", "-q"], { cwd: repo.path });
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start"], { cwd: repo.path });
      mock.setTask({ workspace: repo.path, file: "a.txt", content: "a", finalText: "Claimed it is done. <signal>COMPLETE</signal>", lazy: true });
      const start = await startEvidence(repo.path);
      const first = await driver.run({ prompt: "Create a.txt.", cwd: repo.path });
      expect(first.status).toBe("ok"); // the CLI is content…
      expect((await collectEvidence(repo.path, start)).progress).toBe(false); // …but git shows nothing was done
      mock.requests.length = 0;
      const second = await driver.run({ prompt: "Now really create a.txt.", cwd: repo.path, resumeSessionId: first.sessionId! });
      expect(second.status).toBe("ok");
      const main = mock.requests.filter((q) => q.tools.length > 0);
      expect(main[0]!.messages).toBeGreaterThanOrEqual(3); // the first exchange came along
    } finally {
      driver.close();
      repo.cleanup();
    }
  }, 180_000);

  for (const name of Object.keys(MODELS)) {
    it(`${name}: writes the file with its own tool, streams text, session, usage; the signal resolves`, async () => {
      const command = bin ? cliPath(bin, name) : undefined;
      expect(command, `${name} is missing from ${bin}`).toBeDefined();
      const repo = tempDir(`pulse-real-${name}-`);
      let driver: CliDriver | undefined;
      try {
        execFileSync("git", ["init", "-q"], { cwd: repo.path });
        execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "start"], { cwd: repo.path });
        mock.requests.length = 0;
        mock.setTask({ workspace: repo.path, file: "hello.txt", content: `hello from ${name}\n`, finalText: "I wrote hello.txt as asked.\n<signal>COMPLETE</signal>" });
        const start = await startEvidence(repo.path);
        driver = new CliDriver(BUILTIN_PRESETS[name]!, {
          command: command!,
          endpoint: { baseUrl: mock.url, model: MODELS[name]! },
          timeoutMs: 150_000,
          silenceTimeoutMs: 120_000,
          parentEnv: { PATH: process.env.PATH, HOME: process.env.HOME, SSL_CERT_FILE: process.env.SSL_CERT_FILE, OPENAI_API_KEY: "must-not-leak", ANTHROPIC_API_KEY: "must-not-leak" },
        });
        const events: string[] = [];
        const r = await driver.run({ prompt: "Create the file hello.txt in the current directory. When finished, end with the completion tag.", cwd: repo.path }, { onEvent: (e) => events.push(e.type) });
        const detail = `${name}: ${JSON.stringify({ status: r.status, error: r.error, exit: r.exit, requests: mock.requests.map((q) => `${q.api} ${q.answered}`), stderr: r.stderr?.slice(-1500) })}`;
        expect(r.status, detail).toBe("ok");
        expect(readFileSync(join(repo.path, "hello.txt"), "utf8"), detail).toBe(`hello from ${name}\n`);
        expect(r.sessionId, detail).toMatch(/\S{8,}/);
        expect(r.text).toContain("<signal>COMPLETE</signal>");
        expect(r.usage?.inputTokens, detail).toBeGreaterThan(0);
        expect(r.usage?.outputTokens, detail).toBeGreaterThan(0);
        expect(events).toContain("session");
        expect(events).toContain("tool_call");
        if (name === "claude") expect(r.costUsd).toBeGreaterThan(0);
        if (name === "opencode") expect(r.costUsd).toBeDefined();
        expect(mock.requests.every((q) => q.model === undefined || q.model.endsWith(MODELS[name]!) || q.tools.length === 0)).toBe(true);
        const signal = resolveSignal({ text: r.transcript, toolCalls: r.toolCalls });
        expect(signal).toMatchObject({ signal: "COMPLETE", source: "tag" });
        const evidence = await collectEvidence(repo.path, start);
        expect(evidence.filesChanged).toEqual(["hello.txt"]);
        expect(evidence.progress).toBe(true);
      } finally {
        driver?.close();
        repo.cleanup();
      }
    }, 180_000);
  }
});
