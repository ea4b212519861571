/**
 * Agents that print plain text (goose, aider): every line is the agent's words; there is no
 * final event, so the exit code decides and the whole output is the answer.
 */
import type { StreamParser, StreamState } from "./stream-state.js";

export function textParser(state: StreamState): StreamParser {
  return {
    state,
    line(line) {
      state.appendText(state.texts.length === 0 ? line : `\n${line}`, false);
    },
  };
}
