/**
 * `opencode run --format json`: every line carries `sessionID`; `text` parts the text,
 * `tool_use` parts the tool calls with their state, `step_finish` the tokens and cost of each
 * step. There is no final result event: the run ended well when the last `step_finish` says
 * `reason: "stop"`.
 */
import { looksRateLimited, num, obj, parseJsonLine, str, type StreamParser, type StreamState } from "./stream-state.js";

export function opencodeParser(state: StreamState): StreamParser {
  let lastText: string | undefined;
  return {
    state,
    line(line) {
      const e = parseJsonLine(line);
      if (!e) {
        if (line.trim()) state.unparsed++;
        return;
      }
      const sessionId = str(e.sessionID);
      if (sessionId) state.session(sessionId);
      const part = obj(e.part) ?? {};
      switch (e.type) {
        case "text":
          lastText = str(part.text) ?? "";
          state.text(lastText);
          return;
        case "tool_use": {
          const s = obj(part.state) ?? {};
          const id = str(part.callID) ?? str(part.id) ?? "";
          state.toolCall({ id, name: str(part.tool) ?? "", arguments: obj(s.input) ?? {} });
          if (s.status === "completed" || s.status === "error") state.toolResult(id, s.status === "completed", str(s.output) ?? str(s.error) ?? "", str(part.tool));
          return;
        }
        case "step_finish": {
          const t = obj(part.tokens) ?? {};
          const cache = obj(t.cache) ?? {};
          const usage = { inputTokens: num(t.input) ?? 0, outputTokens: (num(t.output) ?? 0) + (num(t.reasoning) ?? 0) } as Parameters<StreamState["addUsage"]>[0];
          if (num(cache.read)) usage.cacheReadTokens = num(cache.read)!;
          if (num(cache.write)) usage.cacheWriteTokens = num(cache.write)!;
          state.addUsage(usage, num(part.cost), false);
          const reason = str(part.reason);
          if (reason === "stop") state.final = lastText !== undefined ? { status: "ok", text: lastText } : { status: "ok" };
          else if (reason === "length") state.final = { status: "error", error: { kind: "api", message: "the model's output was cut at its length limit" } };
          else state.final = undefined; // tool-calls: more steps follow
          return;
        }
        case "error": {
          const err = obj(e.error) ?? {};
          const message = str(obj(err.data)?.message) ?? str(err.message) ?? str(err.name) ?? "error";
          const limited = looksRateLimited(message);
          state.error(limited ? "rate_limit" : "api", message);
          state.final = { status: limited ? "rate_limited" : "error", error: { kind: limited ? "rate_limit" : "api", message } };
        }
      }
    },
  };
}
