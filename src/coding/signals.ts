/**
 * The signal resolver: exactly one CONTINUE, COMPLETE or BLOCKED per iteration, from the most
 * explicit evidence there is, with where it came from recorded. Precedence: a terminal tool call
 * (`pulse_signal`) > the last `<signal>` tag > a structured status block > inference (only when
 * the loop allows it) > BLOCKED, the safe default. Tags, blocks and phrases inside code (fenced
 * blocks, inline code) never count, and only the agent's own words are read: tool arguments and
 * results (file contents) are not text. Peers' false positives are the fixtures of its tests.
 */
import type { ToolCall } from "../agents/contract.js";

export type Signal = "CONTINUE" | "COMPLETE" | "BLOCKED";
export type SignalSource = "tool_call" | "tag" | "status_block" | "inferred" | "default";

export interface ResolvedSignal {
  signal: Signal;
  /** The reason given with it (`BLOCKED: need an API key`), or why it was chosen. */
  reason?: string;
  source: SignalSource;
  /** The text (or tool call) the signal was read from. */
  evidence: string;
  /** Things a person should know: conflicting tags, a malformed tool call. */
  warnings: string[];
}

export interface ResolveInput {
  /** The agent's words: its transcript (all assistant text) or final answer. */
  text: string;
  toolCalls?: readonly ToolCall[];
  /** Infer from phrases when nothing explicit is there (seed 000's table). Off for structured drivers. */
  allowInference?: boolean;
  /** Tool names that carry a signal; a call whose name ends with one counts (`mcp__pulse__pulse_signal`). */
  signalTools?: readonly string[];
}

const SIGNALS: readonly Signal[] = ["CONTINUE", "COMPLETE", "BLOCKED"];
const TAG = /<signal>\s*(CONTINUE|COMPLETE|BLOCKED)\s*(?::\s*([\s\S]*?))?\s*<\/signal>/gi;
const BLOCK = /---\s*(?:PULSE|RALPH)_STATUS\s*---([\s\S]*?)---\s*END_(?:PULSE|RALPH)_STATUS\s*---/gi;

export function resolveSignal(input: ResolveInput): ResolvedSignal {
  const warnings: string[] = [];
  const fromTool = fromToolCalls(input.toolCalls ?? [], input.signalTools ?? ["pulse_signal"], warnings);
  if (fromTool) return { ...fromTool, warnings };

  const prose = stripCode(input.text);
  const tags = [...prose.matchAll(TAG)];
  if (tags.length > 0) {
    const last = tags.at(-1)!;
    const kinds = new Set(tags.map((t) => t[1]!.toUpperCase()));
    if (kinds.size > 1) warnings.push(`${tags.length} signal tags (${[...kinds].join(", ")}): the last one counts`);
    return withReason({ signal: last[1]!.toUpperCase() as Signal, source: "tag", evidence: last[0], warnings }, last[2]);
  }

  const blocks = [...prose.matchAll(BLOCK)];
  if (blocks.length > 0) {
    const fromBlock = readStatusBlock(blocks.at(-1)!);
    if (fromBlock) return { ...fromBlock, warnings };
    warnings.push("a status block without a STATUS line was ignored");
  }

  if (input.allowInference) {
    const inferred = infer(input.text);
    if (inferred) return { ...inferred, warnings };
  }
  return { signal: "BLOCKED", reason: "no recognisable signal in the agent's output", source: "default", evidence: "", warnings };
}

function fromToolCalls(calls: readonly ToolCall[], names: readonly string[], warnings: string[]): Omit<ResolvedSignal, "warnings"> | undefined {
  for (const call of [...calls].reverse()) {
    if (!names.some((n) => call.name === n || call.name.endsWith(`__${n}`) || call.name.endsWith(`.${n}`))) continue;
    const raw = call.arguments.signal;
    const signal = typeof raw === "string" ? (raw.trim().toUpperCase() as Signal) : undefined;
    if (!signal || !SIGNALS.includes(signal)) {
      warnings.push(`${call.name} was called with signal ${JSON.stringify(raw)}, not one of ${SIGNALS.join(", ")}: ignored`);
      continue;
    }
    const reason = typeof call.arguments.reason === "string" && call.arguments.reason.trim() ? call.arguments.reason.trim() : undefined;
    return { signal, source: "tool_call", evidence: `${call.name}(${JSON.stringify(call.arguments)})`, ...(reason ? { reason } : {}) };
  }
  return undefined;
}

/**
 * `STATUS: COMPLETE|CONTINUE|IN_PROGRESS|BLOCKED`, with an optional `EXIT_SIGNAL: true|false`
 * that wins over STATUS (frankbria/ralph-claude-code #146: COMPLETE with EXIT_SIGNAL false must
 * not stop the loop) and `REASON:`.
 */
function readStatusBlock(match: RegExpMatchArray): Omit<ResolvedSignal, "warnings"> | undefined {
  const body = match[1]!;
  const field = (name: string) => new RegExp(`^\\s*${name}\\s*:\\s*(.+?)\\s*$`, "im").exec(body)?.[1];
  const status = field("STATUS")?.toUpperCase().replace(/[^A-Z_]/g, "");
  if (!status) return undefined;
  const exit = field("EXIT_SIGNAL")?.toLowerCase();
  let signal: Signal = status === "COMPLETE" || status === "COMPLETED" || status === "DONE" ? "COMPLETE" : status === "BLOCKED" ? "BLOCKED" : "CONTINUE";
  if (signal === "COMPLETE" && exit === "false") signal = "CONTINUE";
  if (signal === "CONTINUE" && exit === "true" && status !== "BLOCKED") signal = "COMPLETE";
  return withReason({ signal, source: "status_block" as const, evidence: match[0] }, field("REASON"));
}

function withReason<T extends { signal: Signal }>(r: T, reason: string | undefined): T & { reason?: string } {
  const trimmed = reason?.trim();
  return trimmed ? { ...r, reason: trimmed } : r;
}

// ---------------------------------------------------------------------------------------------
// Inference (seed 000's table), for agents that were not asked for a tag or forgot it

const COMPLETE_PHRASES = /\b(all tasks are (?:now )?complete|implementation is (?:now )?complete)\b/gi;
const BLOCKED_PHRASES = /\b(need your input|please provide|cannot proceed|can't proceed|unable to proceed)\b/gi;
const CONTINUE_PHRASES = /\b(created file|next steps?)\b/gi;
/** Words before a phrase (in its sentence) that make it not a statement of fact. */
const HEDGES = /\b(not|n't|never|no|once|when|whenever|until|after|before|if|unless|whether|will|would|should|could|might)\b/i;

/** The sentence of `text` that holds `phrase`, trimmed to 300 characters. */
export function sentenceWith(text: string, phrase: string): string {
  const at = text.toLowerCase().indexOf(phrase.toLowerCase());
  if (at < 0) return phrase;
  const before = text.slice(0, at);
  const start = Math.max(before.lastIndexOf("\n"), ...[". ", "! ", "? "].map((p) => { const i = before.lastIndexOf(p); return i < 0 ? -1 : i + 1; })) + 1;
  const rest = text.slice(at);
  const ends = [rest.search(/[.!?](\s|$)/), rest.indexOf("\n")].filter((i) => i >= 0);
  const end = at + (ends.length ? Math.min(...ends) + 1 : rest.length);
  const sentence = text.slice(start, end).trim();
  return sentence.length > 300 ? `${sentence.slice(0, 299)}…` : sentence;
}

function infer(text: string): Omit<ResolvedSignal, "warnings"> | undefined {
  const prose = stripCode(text);
  const hasCode = /^\s{0,3}(`{3,}|~{3,})/m.test(text);
  const blocked = assertedPhrase(prose, BLOCKED_PHRASES, false);
  // A person reads the reason (the blocked notification): the agent's own sentence, not the phrase that matched.
  if (blocked) return { signal: "BLOCKED", source: "inferred", evidence: blocked, reason: sentenceWith(prose, blocked) };
  const complete = assertedPhrase(prose, COMPLETE_PHRASES, true);
  const cont = assertedPhrase(prose, CONTINUE_PHRASES, false);
  // "Implementation is complete. Next step: tests." is not the end.
  if (complete && !cont) return { signal: "COMPLETE", source: "inferred", evidence: complete, reason: `the agent wrote "${complete}"` };
  if (cont) return { signal: "CONTINUE", source: "inferred", evidence: cont, reason: `the agent wrote "${cont}"` };
  if (hasCode) return { signal: "CONTINUE", source: "inferred", evidence: "code blocks", reason: "the agent wrote code blocks" };
  return undefined;
}

/** The first occurrence of a phrase stated as fact (no hedge before it in its sentence, when `hedged` is checked). */
function assertedPhrase(prose: string, pattern: RegExp, checkHedges: boolean): string | undefined {
  for (const m of prose.matchAll(pattern)) {
    const before = prose.slice(0, m.index);
    const sentence = before.slice(Math.max(before.lastIndexOf("."), before.lastIndexOf("!"), before.lastIndexOf("?"), before.lastIndexOf("\n")) + 1);
    if (checkHedges && HEDGES.test(sentence)) continue;
    return m[0];
  }
  return undefined;
}

/** The text without fenced code blocks (``` or ~~~, an unclosed one runs to the end), inline code, or quoted lines. */
export function stripCode(text: string): string {
  const lines = text.split("\n");
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of lines) {
    const m = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (m && m[1]![0] === fence[0] && m[1]!.length >= fence.length && line.trim() === m[1]) fence = undefined;
      continue;
    }
    if (m) {
      fence = m[1]!;
      continue;
    }
    if (/^\s{0,3}>/.test(line)) continue; // a quotation is somebody else's words
    out.push(line.replace(/(`+)[\s\S]*?\1/g, ""));
  }
  return out.join("\n");
}
