/**
 * `claude -p --output-format stream-json --verbose` (and qwen, which prints the same shape):
 * `system/init` carries the session id, `assistant` messages the text and tool calls, `user`
 * messages the tool results, `result` the final answer, usage, cost and permission denials.
 * A `rate_limit_event` whose status is "rejected" means wait, not fail; other statuses
 * ("allowed", "allowed_warning") are information.
 */
import type { AgentStatus } from "../../../../src/agents/contract.js";
import { looksRateLimited, num, obj, parseJsonLine, str, type StreamParser, type StreamState } from "./stream-state.js";

const RESULT_STATUS: Record<string, AgentStatus> = {
  success: "ok",
  error_max_turns: "max_turns",
  error_max_budget_usd: "budget",
  error_during_execution: "error",
};

export function claudeParser(state: StreamState): StreamParser {
  return {
    state,
    line(line) {
      const e = parseJsonLine(line);
      if (!e) {
        if (line.trim()) state.unparsed++;
        return;
      }
      const sessionId = str(e.session_id);
      switch (e.type) {
        case "system":
          if (sessionId) state.session(sessionId, str(e.model));
          return;
        case "assistant": {
          if (sessionId) state.session(sessionId);
          const content = (obj(e.message)?.content as unknown[]) ?? [];
          for (const part of content.map(obj)) {
            if (part?.type === "text") state.text(str(part.text) ?? "");
            if (part?.type === "tool_use") state.toolCall({ id: str(part.id) ?? "", name: str(part.name) ?? "", arguments: obj(part.input) ?? {} });
          }
          return;
        }
        case "user": {
          const content = obj(e.message)?.content;
          if (!Array.isArray(content)) return;
          for (const part of content.map(obj)) {
            if (part?.type !== "tool_result") continue;
            const output = typeof part.content === "string" ? part.content : JSON.stringify(part.content ?? "");
            state.toolResult(str(part.tool_use_id) ?? "", part.is_error !== true, output);
          }
          return;
        }
        case "rate_limit_event": {
          const info = obj(e.rate_limit_info) ?? {};
          if (info.status !== "rejected") return;
          const resetsAt = num(info.resetsAt);
          const kind = str(info.rateLimitType) ?? "usage";
          state.error("rate_limit", `rate limited (${kind} limit reached)`, resetsAt !== undefined ? Math.max(0, resetsAt * 1000 - Date.now()) : undefined);
          return;
        }
        case "result":
          return result(state, e);
      }
    },
  };
}

function result(state: StreamState, e: Record<string, unknown>): void {
  const sessionId = str(e.session_id);
  if (sessionId) state.session(sessionId);
  const u = obj(e.usage);
  if (u) {
    const usage = { inputTokens: num(u.input_tokens) ?? 0, outputTokens: num(u.output_tokens) ?? 0 } as Parameters<StreamState["addUsage"]>[0];
    const cacheRead = num(u.cache_read_input_tokens);
    const cacheWrite = num(u.cache_creation_input_tokens);
    if (cacheRead) usage.cacheReadTokens = cacheRead;
    if (cacheWrite) usage.cacheWriteTokens = cacheWrite;
    state.addUsage(usage, num(e.total_cost_usd), true);
  }
  const denials = Array.isArray(e.permission_denials) ? e.permission_denials : [];
  if (denials.length > 0) state.error("permission_denied", `${denials.length} tool call(s) denied: ${denials.map((d) => str(obj(d)?.tool_name) ?? "?").join(", ")}`);
  const subtype = str(e.subtype) ?? "success";
  let status = RESULT_STATUS[subtype] ?? "error";
  const text = str(e.result);
  if (status === "ok" && e.is_error === true) status = "error";
  if (status !== "ok") {
    const message = text ?? (Array.isArray(e.errors) ? e.errors.join("; ") : subtype);
    const apiStatus = num(e.api_error_status);
    if (status === "error" && (apiStatus === 429 || state.rateLimit || looksRateLimited(message))) {
      if (!state.rateLimit) state.error("rate_limit", message);
      state.final = { status: "rate_limited", error: { kind: "rate_limit", message } };
      return;
    }
    state.final = { status, ...(text !== undefined ? { text } : {}), error: { kind: status === "error" ? "api" : "process", message } };
    return;
  }
  state.final = text !== undefined ? { status, text } : { status };
}
