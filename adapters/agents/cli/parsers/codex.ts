/**
 * `codex exec --json`: `thread.started` carries the session (thread) id, `item.completed` items
 * of type `agent_message` the text, `command_execution`/`file_change`/`mcp_tool_call` the tool
 * work, `turn.completed` the usage (tokens, no cost) and the end of the turn, `turn.failed` and
 * `error` the failures.
 */
import { looksRateLimited, num, obj, parseJsonLine, str, type StreamParser, type StreamState } from "./stream-state.js";

export function codexParser(state: StreamState): StreamParser {
  let lastMessage: string | undefined;
  return {
    state,
    line(line) {
      const e = parseJsonLine(line);
      if (!e) {
        if (line.trim()) state.unparsed++;
        return;
      }
      switch (e.type) {
        case "thread.started": {
          const id = str(e.thread_id);
          if (id) state.session(id);
          return;
        }
        case "item.started":
        case "item.completed": {
          const item = obj(e.item) ?? {};
          const id = str(item.id) ?? "";
          if (item.type === "agent_message" && e.type === "item.completed") {
            lastMessage = str(item.text) ?? "";
            state.text(lastMessage);
          } else if (item.type === "command_execution") {
            if (e.type === "item.started") state.toolCall({ id, name: "shell", arguments: { command: item.command } });
            else state.toolResult(id, num(item.exit_code) === 0, str(item.aggregated_output) ?? "", "shell");
          } else if (item.type === "file_change" && e.type === "item.completed") {
            state.toolCall({ id, name: "file_change", arguments: { changes: item.changes } });
            state.toolResult(id, item.status !== "failed", JSON.stringify(item.changes ?? []), "file_change");
          } else if (item.type === "mcp_tool_call" && e.type === "item.completed") {
            state.toolCall({ id, name: `${str(item.server) ?? "mcp"}.${str(item.tool) ?? "?"}`, arguments: obj(item.arguments) ?? {} });
          }
          return;
        }
        case "turn.completed": {
          const u = obj(e.usage) ?? {};
          const usage = { inputTokens: num(u.input_tokens) ?? 0, outputTokens: (num(u.output_tokens) ?? 0) + (num(u.reasoning_output_tokens) ?? 0) } as Parameters<StreamState["addUsage"]>[0];
          const cached = num(u.cached_input_tokens);
          if (cached) usage.cacheReadTokens = cached;
          state.addUsage(usage, undefined, false);
          state.final = lastMessage !== undefined ? { status: "ok", text: lastMessage } : { status: "ok" };
          return;
        }
        case "turn.failed": {
          const message = str(obj(e.error)?.message) ?? "the turn failed";
          return fail(state, message);
        }
        case "error":
          // codex retries transient errors itself and reports each attempt: only the turn's end decides.
          state.error(looksRateLimited(str(e.message) ?? "") ? "rate_limit" : "api", str(e.message) ?? "error");
          return;
      }
    },
  };
}

function fail(state: StreamState, message: string): void {
  if (looksRateLimited(message)) {
    if (!state.rateLimit) state.error("rate_limit", message);
    state.final = { status: "rate_limited", error: { kind: "rate_limit", message } };
  } else {
    state.final = { status: "error", error: { kind: "api", message } };
  }
}
