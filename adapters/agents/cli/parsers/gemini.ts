/**
 * `gemini -p … --output-format stream-json`: `init` carries the session id and model, the
 * assistant's text comes as `message` pieces with `delta: true` to be joined (the user's prompt
 * is echoed as a `message` with role "user", never taken as the agent's words), `tool_use` and
 * `tool_result` the tool work, `result` the end with `stats` (tokens, no cost).
 */
import { looksRateLimited, num, obj, parseJsonLine, str, type StreamParser, type StreamState } from "./stream-state.js";

export function geminiParser(state: StreamState): StreamParser {
  let continuing = false; // the next assistant delta continues the current text piece
  let sinceTool = "";
  return {
    state,
    line(line) {
      const e = parseJsonLine(line);
      if (!e) {
        if (line.trim()) state.unparsed++;
        return;
      }
      switch (e.type) {
        case "init": {
          const id = str(e.session_id);
          if (id) state.session(id, str(e.model));
          return;
        }
        case "message": {
          if (e.role !== "assistant") return;
          const text = str(e.content) ?? "";
          state.appendText(text, !continuing);
          sinceTool = continuing ? sinceTool + text : text;
          continuing = e.delta === true;
          return;
        }
        case "tool_use":
          continuing = false;
          state.toolCall({ id: str(e.tool_id) ?? "", name: str(e.tool_name) ?? "", arguments: obj(e.parameters) ?? {} });
          return;
        case "tool_result":
          continuing = false;
          sinceTool = "";
          state.toolResult(str(e.tool_id) ?? "", e.status === "success", str(e.output) ?? str(obj(e.error)?.message) ?? "");
          return;
        case "error": {
          const message = str(e.message) ?? str(obj(e.error)?.message) ?? "error";
          state.error(looksRateLimited(message) ? "rate_limit" : "api", message);
          return;
        }
        case "result": {
          const stats = obj(e.stats) ?? {};
          state.addUsage({ inputTokens: num(stats.input_tokens) ?? num(stats.input) ?? 0, outputTokens: num(stats.output_tokens) ?? 0 }, undefined, true);
          if (e.status === "success") {
            state.final = { status: "ok", text: sinceTool };
            return;
          }
          const message = str(obj(e.error)?.message) ?? state.errors.at(-1)?.message ?? "the agent reported an error";
          const limited = looksRateLimited(message) || state.rateLimit !== undefined;
          state.final = { status: limited ? "rate_limited" : "error", error: { kind: limited ? "rate_limit" : "api", message } };
        }
      }
    },
  };
}
