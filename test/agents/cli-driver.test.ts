import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agents/contract.js";
import { CliDriver } from "../../adapters/agents/cli/cli-driver.js";
import { allGone, fakeDriver, pidsIn, tempDir } from "./support/fake-agent.js";

let ws: ReturnType<typeof tempDir>;
beforeAll(() => {
  ws = tempDir("pulse-cli-driver-");
});
afterAll(() => ws.cleanup());

const request = (extra: object = {}) => ({ prompt: "Do the thing.", cwd: ws.path, ...extra });

describe("CLI driver: streams", () => {
  it("claude format: text, session id, tool calls, usage and cost, in event order", async () => {
    const events: AgentEvent[] = [];
    const r = await fakeDriver({ FAKE_AGENT_SESSION: "sess-1" }).run(request(), { onEvent: (e) => events.push(e) });
    expect(r.status).toBe("ok");
    expect(r.text).toBe("Done.\n<signal>COMPLETE</signal>");
    expect(r.sessionId).toBe("sess-1");
    expect(r.usage).toEqual({ inputTokens: 1000, outputTokens: 200, cacheReadTokens: 50 });
    expect(r.costUsd).toBeCloseTo(0.0123);
    expect(r.toolCalls.map((c) => c.name)).toEqual(["Write"]);
    expect(events.map((e) => e.type)).toEqual(["session", "tool_call", "tool_result", "text", "usage"]);
    // An "allowed_warning" rate-limit event is information, not a wait.
    expect(events.some((e) => e.type === "error")).toBe(false);
  });

  it("codex format: thread id as session, tokens summed with reasoning, no cost", async () => {
    const r = await fakeDriver({ FAKE_AGENT_SESSION: "thread-9" }, {}, "codex").run(request());
    expect(r).toMatchObject({ status: "ok", sessionId: "thread-9", text: "Done.\n<signal>COMPLETE</signal>" });
    expect(r.usage).toEqual({ inputTokens: 900, outputTokens: 200, cacheReadTokens: 100 });
    expect(r.costUsd).toBeUndefined();
    expect(r.toolCalls[0]).toMatchObject({ name: "shell", arguments: { command: "bash -lc ls" } });
  });

  it("an exit 0 without the final event is a failure, not a success", async () => {
    for (const format of ["claude", "codex"] as const) {
      const r = await fakeDriver({ FAKE_AGENT_MODE: "no_final" }, {}, format).run(request());
      expect(r.status).toBe("error");
      expect(r.exit?.code).toBe(0);
      expect(r.error?.message).toMatch(/exited 0 without its final/);
    }
  });

  it("a crash is an error that quotes the exit code and stderr", async () => {
    const r = await fakeDriver({ FAKE_AGENT_MODE: "crash" }).run(request());
    expect(r.status).toBe("error");
    expect(r.error?.message).toMatch(/exited with code 3: fatal: the fake agent crashed/);
  });

  it("JSON on stderr is never taken for the agent's stream", async () => {
    const r = await fakeDriver({ FAKE_AGENT_MODE: "stderr_json", FAKE_AGENT_SESSION: "real" }).run(request());
    expect(r.status).toBe("ok");
    expect(r.sessionId).toBe("real");
    expect(r.text).not.toMatch(/stderr/);
    expect(r.stderr).toMatch(/wrong stream/);
  });

  it("a rejected rate limit means wait (with when), not failure; for both formats", async () => {
    const claude = await fakeDriver({ FAKE_AGENT_MODE: "rate_limit" }).run(request());
    expect(claude.status).toBe("rate_limited");
    expect(claude.error?.kind).toBe("rate_limit");
    expect(claude.retryAfterMs).toBeGreaterThan(60_000);
    expect(claude.retryAfterMs).toBeLessThanOrEqual(120_000);
    const codex = await fakeDriver({ FAKE_AGENT_MODE: "rate_limit" }, {}, "codex").run(request());
    expect(codex.status).toBe("rate_limited");
  });

  it("a command that is not installed says so", async () => {
    const r = await fakeDriver({}, { command: "/nonexistent/agent-cli" }).run(request());
    expect(r.status).toBe("error");
    expect(r.error?.message).toMatch(/could not start \/nonexistent\/agent-cli.*installed/);
  });
});

describe("CLI driver: prompt, resume, environment", () => {
  it("stdin is closed at once: an agent reading stdin gets EOF, not a hang", async () => {
    const r = await fakeDriver({ FAKE_AGENT_MODE: "read_stdin", FAKE_AGENT_TEXT: "stdin={stdin}" }, { silenceTimeoutMs: 10_000 }).run(request());
    expect(r.status).toBe("ok");
    expect(r.text).toBe('stdin=""');
  });

  it("the prompt by stdin arrives whole and stdin is then closed; by argument it is the last argument", async () => {
    const big = "x".repeat(150_000); // longer than one argument may be: goes by stdin automatically
    const viaStdin = await fakeDriver({ FAKE_AGENT_MODE: "read_stdin", FAKE_AGENT_TEXT: "{stdin}" }).run(request({ prompt: big }));
    expect(viaStdin.status).toBe("ok");
    expect(JSON.parse(viaStdin.text)).toBe(big);
    const viaArg = await fakeDriver({ FAKE_AGENT_TEXT: "{argv}" }).run(request({ prompt: "short prompt" }));
    expect(JSON.parse(viaArg.text).at(-1)).toBe("short prompt");
  });

  it("resume passes a valid session id; an invalid one is refused with a warning", async () => {
    const ok = await fakeDriver({ FAKE_AGENT_TEXT: "{argv}" }).run(request({ resumeSessionId: "b54cb4bc-7827-409a-ae0d-7071493c377b", maxTurns: 7, model: "m1" }));
    const argv = JSON.parse(ok.text) as string[];
    expect(argv.join(" ")).toContain("--resume b54cb4bc-7827-409a-ae0d-7071493c377b");
    expect(argv.join(" ")).toContain("--max-turns 7");
    expect(argv.join(" ")).toContain("--model m1");
    expect(ok.warnings).toEqual([]);
    const bad = await fakeDriver({ FAKE_AGENT_TEXT: "{argv}" }).run(request({ resumeSessionId: "$(rm -rf /)" }));
    expect(JSON.parse(bad.text)).not.toContain("--resume");
    expect(bad.warnings.join()).toMatch(/not valid: starting a new session/);
  });

  it("codex resumes through its subcommand, and warns that it has no turn limit", async () => {
    const r = await fakeDriver({ FAKE_AGENT_TEXT: "{argv}" }, {}, "codex").run(request({ resumeSessionId: "thread-1", maxTurns: 3 }));
    expect((JSON.parse(r.text) as string[]).slice(0, 2)).toEqual(["exec", "resume"]);
    expect(r.warnings.join()).toMatch(/no turn limit flag/);
  });

  it("the environment is an allowlist: secrets and nesting markers stay out, named keys pass", async () => {
    const parentEnv = { PATH: process.env.PATH, HOME: "/home/me", SECRET_TOKEN: "s", CLAUDECODE: "1", ANTHROPIC_API_KEY: "ak", OPENAI_API_KEY: "ok", MY_KEY: "mine" };
    const r = await fakeDriver({ FAKE_AGENT_TEXT: "{env}" }, { parentEnv, passEnv: ["MY_KEY"] }).run(request());
    const env = JSON.parse(r.text) as Record<string, string>;
    expect(env.SECRET_TOKEN).toBeUndefined();
    expect(env.CLAUDECODE).toBeUndefined();
    expect(env.OPENAI_API_KEY).toBeUndefined(); // not claude's
    expect(env.ANTHROPIC_API_KEY).toBe("ak"); // claude's own key passes
    expect(env.MY_KEY).toBe("mine");
    expect(env.HOME).toBe("/home/me");
    expect(env.PWD).toBe(ws.path);
    expect(env.NO_COLOR).toBe("1");
  });

  it("with an endpoint: a private home, the endpoint's variables, inherited provider keys replaced", async () => {
    const parentEnv = { PATH: process.env.PATH, HOME: "/home/me", ANTHROPIC_API_KEY: "real-key", LOCAL_KEY: "local" };
    const driver = fakeDriver({ FAKE_AGENT_TEXT: "{env}" }, { parentEnv, endpoint: { baseUrl: "http://127.0.0.1:9/v1/", model: "qwen3", apiKeyEnv: "LOCAL_KEY" } });
    const r = await driver.run(request());
    const again = await driver.run(request());
    driver.close();
    const env = JSON.parse(r.text) as Record<string, string>;
    expect(env.HOME).not.toBe("/home/me");
    expect(JSON.parse(again.text).HOME).toBe(env.HOME); // one private home per driver: sessions resume
    expect(existsSync(env.HOME!)).toBe(false); // close() removed it
    expect(env.ANTHROPIC_BASE_URL).toBe("http://127.0.0.1:9");
    expect(env.ANTHROPIC_API_KEY).toBe("local");
    expect(env.ANTHROPIC_MODEL).toBe("qwen3");
    expect(() => fakeDriver({}, { endpoint: { baseUrl: "ftp://x" } })).toThrow(/http:\/\/ or https:\/\//);
  });

  it("a prompt by file, for CLIs that read one (text format: the output is the answer)", async () => {
    const driver = new CliDriver(
      { name: "cat", description: "", command: "cat", format: "text", args: [], prompt: { via: "file", file: ["{promptFile}"] }, capabilities: { toolCalls: "text", resume: false, usage: false, costUsd: false, maxTurns: false } },
      { parentEnv: { PATH: process.env.PATH } },
    );
    const r = await driver.run(request({ prompt: "line one\nline two <signal>COMPLETE</signal>" }));
    expect(r).toMatchObject({ status: "ok", text: "line one\nline two <signal>COMPLETE</signal>" });
    const byStdin = await driver.run(request({ prompt: "p" }));
    expect(byStdin.status).toBe("ok");
  });
});

describe("CLI driver: process hygiene", () => {
  it("ignoring SIGTERM after a timeout: SIGKILL follows, nothing is left", async () => {
    const pidfile = join(ws.path, "pids-term");
    const r = await fakeDriver({ FAKE_AGENT_MODE: "ignore_sigterm,grandchild", FAKE_AGENT_PIDFILE: pidfile }, { timeoutMs: 1_500 }).run(request());
    expect(r.status).toBe("timeout");
    expect(r.error?.message).toMatch(/wall-clock/);
    expect(pidsIn(pidfile)).toHaveLength(2);
    expect(await allGone(pidsIn(pidfile))).toBe(true);
  });

  it("a grandchild that left the group and holds stdout: the run still ends, and the grandchild is killed", async () => {
    const pidfile = join(ws.path, "pids-escape");
    const started = Date.now();
    const r = await fakeDriver({ FAKE_AGENT_MODE: "grandchild_escape", FAKE_AGENT_PIDFILE: pidfile }, { timeoutMs: 20_000 }).run(request());
    expect(r.status).toBe("ok");
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await allGone(pidsIn(pidfile))).toBe(true);
  });

  it("a grandchild holding stdout at a timeout is killed with the agent", async () => {
    const pidfile = join(ws.path, "pids-escape-timeout");
    const r = await fakeDriver({ FAKE_AGENT_MODE: "grandchild_escape,silent", FAKE_AGENT_PIDFILE: pidfile }, { timeoutMs: 1_500 }).run(request());
    expect(r.status).toBe("timeout");
    expect(await allGone(pidsIn(pidfile))).toBe(true);
  });

  it("silence watchdog: an agent that goes quiet is stopped", async () => {
    const r = await fakeDriver({ FAKE_AGENT_MODE: "silent" }, { silenceTimeoutMs: 800, timeoutMs: 60_000 }).run(request());
    expect(r.status).toBe("timeout");
    expect(r.error?.message).toMatch(/printed nothing/);
    expect(r.sessionId).toBeDefined(); // what it said before going quiet is kept
  });

  it("an agent that prints its final event but never exits is stopped, and its result kept", async () => {
    const pidfile = join(ws.path, "pids-linger");
    const r = await fakeDriver({ FAKE_AGENT_MODE: "never_exit", FAKE_AGENT_PIDFILE: pidfile }, { lingerMs: 500, timeoutMs: 60_000 }).run(request());
    expect(r.status).toBe("ok");
    expect(r.text).toMatch(/COMPLETE/);
    expect(r.warnings.join()).toMatch(/did not exit/);
    expect(await allGone(pidsIn(pidfile))).toBe(true);
  });

  it("abort stops the agent at once", async () => {
    const pidfile = join(ws.path, "pids-abort");
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    const r = await fakeDriver({ FAKE_AGENT_MODE: "silent,grandchild", FAKE_AGENT_PIDFILE: pidfile }, { timeoutMs: 60_000 }).run(request(), { signal: controller.signal });
    expect(r.status).toBe("aborted");
    expect(await allGone(pidsIn(pidfile))).toBe(true);
  });

  it("output is capped keeping head and tail, and the final event after it is still read", async () => {
    const r = await fakeDriver({ FAKE_AGENT_MODE: "big_output", FAKE_AGENT_BIG: String(2 << 20) }, { maxOutputBytes: 64 << 10 }).run(request());
    expect(r.status).toBe("ok");
    expect(r.text).toMatch(/COMPLETE/);
    expect(r.warnings.join()).toMatch(/bytes of the agent's output were dropped/);
  });
});
