/**
 * What a stream parser learns from an agent's output, and the events it emits on the way. Each
 * format's parser (claude, codex, gemini, opencode, text) feeds one of these.
 */
import { addUsage, type AgentErrorKind, type AgentEvent, type AgentStatus, type ToolCall, type Usage } from "../../../../src/agents/contract.js";

export interface StreamFinal {
  status: AgentStatus;
  /** The final answer as the stream states it; undefined to use the last assistant text. */
  text?: string;
  error?: { kind: AgentErrorKind; message: string };
}

export class StreamState {
  sessionId: string | undefined;
  model: string | undefined;
  readonly texts: string[] = [];
  readonly toolCalls: ToolCall[] = [];
  usage: Usage | undefined;
  costUsd: number | undefined;
  /** Set by the format's final event (claude `result`, codex `turn.completed`, …). */
  final: StreamFinal | undefined;
  /** A rate limit the agent reported (claude `rate_limit_event` "rejected", a 429). */
  rateLimit: { message: string; retryAfterMs?: number } | undefined;
  readonly errors: { kind: AgentErrorKind; message: string }[] = [];
  /** Lines of stdout that were not JSON: kept for diagnostics. */
  unparsed = 0;

  constructor(private readonly emit: (event: AgentEvent) => void) {}

  session(sessionId: string, model?: string): void {
    if (this.sessionId === sessionId) return;
    this.sessionId = sessionId;
    if (model) this.model = model;
    this.emit(model ? { type: "session", sessionId, model } : { type: "session", sessionId });
  }

  text(text: string): void {
    if (!text) return;
    this.texts.push(text);
    this.emit({ type: "text", text });
  }

  /** Appends to the last text piece (formats that stream deltas). */
  appendText(delta: string, startNew: boolean): void {
    if (!delta) return;
    if (startNew || this.texts.length === 0) this.texts.push(delta);
    else this.texts[this.texts.length - 1] += delta;
    this.emit({ type: "text", text: delta });
  }

  toolCall(call: ToolCall): void {
    this.toolCalls.push(call);
    this.emit({ type: "tool_call", call });
  }

  toolResult(id: string, ok: boolean, output: string, name?: string): void {
    this.emit(name ? { type: "tool_result", id, name, ok, output } : { type: "tool_result", id, ok, output });
  }

  /** `total`: the stream's own total replaces what was summed so far. */
  addUsage(usage: Usage, costUsd: number | undefined, total: boolean): void {
    this.usage = total ? usage : addUsage(this.usage, usage);
    if (costUsd !== undefined) this.costUsd = total ? costUsd : (this.costUsd ?? 0) + costUsd;
    this.emit(costUsd !== undefined ? { type: "usage", usage, costUsd } : { type: "usage", usage });
  }

  error(kind: AgentErrorKind, message: string, retryAfterMs?: number): void {
    this.errors.push({ kind, message });
    if (kind === "rate_limit") this.rateLimit = retryAfterMs !== undefined ? { message, retryAfterMs } : { message };
    this.emit(retryAfterMs !== undefined ? { type: "error", kind, message, retryAfterMs } : { type: "error", kind, message });
  }
}

export interface StreamParser {
  /** One line of the agent's stdout. */
  line(line: string): void;
  readonly state: StreamState;
}

export type ParserFactory = (state: StreamState) => StreamParser;

/** JSON.parse of one line, or undefined for lines that are not a JSON object. */
export function parseJsonLine(line: string): Record<string, unknown> | undefined {
  const t = line.trim();
  if (!t.startsWith("{")) return undefined;
  try {
    const v = JSON.parse(t) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const RATE_LIMIT_TEXT = /\b(rate[ _-]?limit(ed)?|too many requests|429|quota exceeded|resource[_ ]exhausted|usage limit)\b/i;

export function looksRateLimited(message: string): boolean {
  return RATE_LIMIT_TEXT.test(message);
}

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
export const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
export const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
