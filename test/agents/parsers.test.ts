import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agents/contract.js";
import { STREAM_FORMATS, StreamState, type StreamFormat } from "../../adapters/agents/cli/parsers/index.js";

/** Streams captured from the real CLIs (test/agent-clis) against the mock model server. */
function parse(format: StreamFormat, lines: string[]) {
  const events: AgentEvent[] = [];
  const state = new StreamState((e) => events.push(e));
  const parser = STREAM_FORMATS[format](state);
  for (const line of lines) parser.line(line);
  return { state, events };
}
const captured = (name: string) => readFileSync(new URL(`./fixtures/streams/${name}.jsonl`, import.meta.url), "utf8").split("\n");

describe("stream parsers on captured real streams", () => {
  it("claude 2.1.197", () => {
    const { state } = parse("claude", captured("claude"));
    expect(state.sessionId).toBe("b54cb4bc-7827-409a-ae0d-7071493c377b");
    expect(state.model).toBe("claude-sonnet-4-5");
    expect(state.final).toEqual({ status: "ok", text: "I wrote hello.txt.\n<signal>COMPLETE</signal>" });
    expect(state.usage).toEqual({ inputTokens: 240, outputTokens: 60 });
    expect(state.costUsd).toBeCloseTo(0.00162);
    expect(state.toolCalls.map((c) => c.name)).toEqual(["Write"]);
  });

  it("qwen 0.15.10 (claude-like)", () => {
    const { state } = parse("claude", captured("qwen"));
    expect(state.final?.status).toBe("ok");
    expect(state.sessionId).toMatch(/^0e512b6a/);
    expect(state.usage).toEqual({ inputTokens: 240, outputTokens: 60 });
    expect(state.costUsd).toBeUndefined();
  });

  it("codex 0.169.0", () => {
    const { state, events } = parse("codex", captured("codex"));
    expect(state.sessionId).toMatch(/^01a20cc9/);
    expect(state.final).toEqual({ status: "ok", text: "I wrote hello.txt.\n<signal>COMPLETE</signal>" });
    expect(state.usage).toEqual({ inputTokens: 240, outputTokens: 60 });
    expect(events.filter((e) => e.type === "tool_result")).toEqual([expect.objectContaining({ ok: true, name: "shell" })]);
  });

  it("gemini 0.61.0: the echoed prompt is not the agent's text", () => {
    const { state } = parse("gemini", captured("gemini"));
    expect(state.texts).toEqual(["I wrote hello.txt.\n<signal>COMPLETE</signal>"]);
    expect(state.final).toEqual({ status: "ok", text: "I wrote hello.txt.\n<signal>COMPLETE</signal>" });
    expect(state.usage).toEqual({ inputTokens: 240, outputTokens: 60 });
  });

  it("opencode 1.18.33: tokens and cost summed over steps, final on reason stop", () => {
    const { state } = parse("opencode", captured("opencode"));
    expect(state.sessionId).toBe("ses_df3367313ffeQmmRJHy0Ys85ix");
    expect(state.usage).toEqual({ inputTokens: 240, outputTokens: 60 });
    expect(state.costUsd).toBeCloseTo(0.00036);
    expect(state.final).toEqual({ status: "ok", text: "I wrote hello.txt.\n<signal>COMPLETE</signal>" });
    const cut = captured("opencode").slice(0, 3); // stopped after a tool step: no final
    expect(parse("opencode", cut).state.final).toBeUndefined();
  });
});

describe("stream parsers on failures", () => {
  it("claude: turn limit, budget, permission denials, an API error that is a rate limit", () => {
    expect(parse("claude", ['{"type":"result","subtype":"error_max_turns","is_error":true,"session_id":"s"}']).state.final?.status).toBe("max_turns");
    expect(parse("claude", ['{"type":"result","subtype":"error_max_budget_usd","is_error":true}']).state.final?.status).toBe("budget");
    const denied = parse("claude", ['{"type":"result","subtype":"success","result":"partly","permission_denials":[{"tool_name":"Bash"}]}']);
    expect(denied.state.final?.status).toBe("ok");
    expect(denied.events).toContainEqual({ type: "error", kind: "permission_denied", message: "1 tool call(s) denied: Bash" });
    expect(parse("claude", ['{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"API Error"}']).state.final?.status).toBe("rate_limited");
    expect(parse("claude", ['{"type":"result","subtype":"success","is_error":true,"result":"API Error: 500"}']).state.final?.status).toBe("error");
    expect(parse("claude", ['{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning"}}']).state.rateLimit).toBeUndefined();
  });

  it("codex: turn.failed; gemini: error result; opencode: error event; non-JSON lines counted", () => {
    expect(parse("codex", ['{"type":"turn.failed","error":{"message":"model not found"}}']).state.final).toEqual({ status: "error", error: { kind: "api", message: "model not found" } });
    expect(parse("gemini", ['{"type":"error","message":"Quota exceeded for quota metric"}', '{"type":"result","status":"error"}']).state.final?.status).toBe("rate_limited");
    expect(parse("opencode", ['{"type":"error","sessionID":"s","error":{"name":"APIError","data":{"message":"bad key"}}}']).state.final).toEqual({ status: "error", error: { kind: "api", message: "bad key" } });
    const noisy = parse("claude", ["Loading…", "", '{"type":"system","subtype":"init","session_id":"s1"}', "{broken"]);
    expect(noisy.state.unparsed).toBe(2);
    expect(noisy.state.sessionId).toBe("s1");
  });

  it("gemini deltas are joined into one piece until a tool call", () => {
    const { state } = parse("gemini", ['{"type":"message","role":"assistant","content":"Hel","delta":true}', '{"type":"message","role":"assistant","content":"lo","delta":true}', '{"type":"tool_use","tool_name":"x","tool_id":"1","parameters":{}}', '{"type":"message","role":"assistant","content":"Bye","delta":true}']);
    expect(state.texts).toEqual(["Hello", "Bye"]);
  });
});
