import { claudeParser } from "./claude.js";
import { codexParser } from "./codex.js";
import { geminiParser } from "./gemini.js";
import { opencodeParser } from "./opencode.js";
import type { ParserFactory } from "./stream-state.js";
import { textParser } from "./text.js";

export type StreamFormat = "claude" | "codex" | "gemini" | "opencode" | "text";

export const STREAM_FORMATS: Record<StreamFormat, ParserFactory> = {
  claude: claudeParser,
  codex: codexParser,
  gemini: geminiParser,
  opencode: opencodeParser,
  text: textParser,
};

export { StreamState, type StreamFinal, type StreamParser } from "./stream-state.js";
