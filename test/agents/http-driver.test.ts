import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { chatCompletion } from "../../adapters/agents/http/chat-client.js";
import { HttpDriver } from "../../adapters/agents/http/http-driver.js";
import { startChatMock, type ChatReply } from "./support/chat-mock.js";
import { tempDir } from "./support/fake-agent.js";

let ws: ReturnType<typeof tempDir>;
let mock: Awaited<ReturnType<typeof startChatMock>> | undefined;
beforeEach(() => {
  ws = tempDir("pulse-http-driver-");
  writeFileSync(join(ws.path, "app.ts"), "const greeting = 'hi';\n");
});
afterEach(async () => {
  await mock?.close();
  ws.cleanup();
});

const noSleep = async () => {};
async function driver(replies: ChatReply[], extra: Partial<ConstructorParameters<typeof HttpDriver>[0]> = {}) {
  mock = await startChatMock(replies);
  return new HttpDriver({ baseUrl: mock.url, model: "local-model", sleep: noSleep, parentEnv: { PATH: process.env.PATH }, ...extra });
}

describe("HTTP driver (OpenAI-compatible chat completions)", () => {
  it("runs the tool loop: read, edit, answer; usage summed; tool results sent back", async () => {
    const d = await driver([
      { toolCalls: [{ name: "read_file", arguments: { path: "app.ts" } }] },
      { toolCalls: [{ name: "edit_file", arguments: { path: "app.ts", old_string: "'hi'", new_string: "'hello'" } }] },
      { content: "Changed the greeting.\n<signal>COMPLETE</signal>" },
    ]);
    const events: string[] = [];
    const r = await d.run({ prompt: "Say hello", cwd: ws.path }, { onEvent: (e) => events.push(e.type) });
    expect(r.status).toBe("ok");
    expect(readFileSync(join(ws.path, "app.ts"), "utf8")).toBe("const greeting = 'hello';\n");
    expect(r.text).toContain("<signal>COMPLETE</signal>");
    expect(r.toolCalls.map((c) => c.name)).toEqual(["read_file", "edit_file"]);
    expect(r.usage).toEqual({ inputTokens: 300, outputTokens: 30 });
    expect(r.model).toBe("mock-llm");
    const last = mock!.bodies[2]!.messages as { role: string; content: string; tool_call_id?: string }[];
    expect(last.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([expect.stringContaining("const greeting"), "edited app.ts (1 edit)"]);
    expect(mock!.bodies[0]!.model).toBe("local-model");
    expect((mock!.bodies[0]!.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual(["read_file", "list_directory", "glob", "grep", "write_file", "edit_file", "multi_edit", "shell"]);
    expect(events[0]).toBe("session");
  });

  it("a failed edit is reported to the model as a hard failure, never retried fuzzily", async () => {
    const d = await driver([{ toolCalls: [{ name: "read_file", arguments: { path: "app.ts" } }, { name: "edit_file", arguments: { path: "app.ts", old_string: "const  greeting", new_string: "x" } }] }, { content: "I could not edit." }]);
    const r = await d.run({ prompt: "edit", cwd: ws.path });
    expect(r.status).toBe("ok");
    const tool = (mock!.bodies[1]!.messages as { role: string; content: string }[]).filter((m) => m.role === "tool");
    expect(tool[1]!.content).toMatch(/^error: old_string was not found/);
    expect(readFileSync(join(ws.path, "app.ts"), "utf8")).toBe("const greeting = 'hi';\n");
  });

  it("429 and 5xx are retried with backoff; a 400 is not", async () => {
    const d = await driver([{ status: 429, headers: { "retry-after": "0" }, body: { error: { message: "slow down" } } }, { status: 503, body: {} }, { content: "ok" }]);
    expect((await d.run({ prompt: "p", cwd: ws.path })).status).toBe("ok");
    expect(mock!.bodies).toHaveLength(3);
    await mock!.close();
    const bad = await driver([{ status: 400, body: { error: { message: "model not found" } } }, { content: "never" }]);
    const r = await bad.run({ prompt: "p", cwd: ws.path });
    expect(r).toMatchObject({ status: "error", error: { kind: "api", message: expect.stringMatching(/HTTP 400: model not found/) } });
    expect(mock!.bodies).toHaveLength(1);
  });

  it("a rate limit that outlasts the retries is a wait for the loop, with when", async () => {
    const d = await driver([{ status: 429, headers: { "retry-after": "3600" }, body: { error: { message: "quota" } } }]);
    const r = await d.run({ prompt: "p", cwd: ws.path });
    expect(r.status).toBe("rate_limited");
    expect(r.retryAfterMs).toBe(3_600_000);
  });

  it("backoff grows between retries and the last error is reported", async () => {
    mock = await startChatMock([{ status: 500, body: {} }, { status: 500, body: {} }, { status: 500, body: {} }]);
    const waits: number[] = [];
    await expect(chatCompletion({ baseUrl: mock.url, maxRetries: 2, backoffMs: 100, sleep: async (ms) => void waits.push(ms) }, { model: "m", messages: [] })).rejects.toThrow(/HTTP 500/);
    expect(waits).toHaveLength(2);
    expect(waits[1]!).toBeGreaterThan(waits[0]!);
  });

  it("a terminal tool ends the turn and is in the result; resume continues the conversation", async () => {
    const d = await driver([{ content: "done", toolCalls: [{ name: "pulse_signal", arguments: { signal: "COMPLETE" } }] }, { content: "second" }]);
    const first = await d.run({ prompt: "p1", cwd: ws.path, terminalTools: [{ name: "pulse_signal", description: "signal", parameters: { type: "object" } }] });
    expect(first.toolCalls).toEqual([expect.objectContaining({ name: "pulse_signal", arguments: { signal: "COMPLETE" } })]);
    const second = await d.run({ prompt: "p2", cwd: ws.path, resumeSessionId: first.sessionId! });
    expect(second.sessionId).toBe(first.sessionId);
    const sent = mock!.bodies[1]!.messages as { role: string; content: string | null }[];
    expect(sent.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "user"]);
    const unknown = await d.run({ prompt: "p3", cwd: ws.path, resumeSessionId: "nope" });
    expect(unknown.warnings.join()).toMatch(/not known/);
  });

  it("stops at the turn limit", async () => {
    const d = await driver(Array.from({ length: 5 }, () => ({ toolCalls: [{ name: "list_directory", arguments: {} }] })));
    const r = await d.run({ prompt: "p", cwd: ws.path, maxTurns: 3 });
    expect(r.status).toBe("max_turns");
    expect(mock!.bodies).toHaveLength(3);
  });
});

describe("HTTP driver against the mock model server the real CLIs use", () => {
  it("writes the file with its own write_file tool and resolves the signal", async () => {
    const { startMockModelServer } = await import("./support/mock-model-server.js");
    const { resolveSignal } = await import("../../src/coding/signals.js");
    const server = await startMockModelServer();
    try {
      server.setTask({ workspace: ws.path, file: "hello.txt", content: "hello from the HTTP driver\n", finalText: "Wrote it.\n<signal>COMPLETE</signal>" });
      const r = await new HttpDriver({ baseUrl: server.url, model: "mock-model", parentEnv: {} }).run({ prompt: "Create hello.txt", cwd: ws.path });
      expect(r.status).toBe("ok");
      expect(readFileSync(join(ws.path, "hello.txt"), "utf8")).toBe("hello from the HTTP driver\n");
      expect(resolveSignal({ text: r.transcript, toolCalls: r.toolCalls }).signal).toBe("COMPLETE");
      expect(server.requests.map((q) => q.answered)).toEqual(["write_file", "text"]);
    } finally {
      await server.close();
    }
  });
});
