/**
 * What an iteration's output says besides its signal: the `<anchor_hint>` for the next
 * iteration and a one-line summary. Tags inside code never count (the kit's stripCode).
 */
import { stripCode } from "../signals.js";

const HINT = /<anchor_hint>([\s\S]*?)<\/anchor_hint>/gi;

export interface AnchorHint {
  turnId: string;
  reason?: string;
}

/** The last anchor hint of the agent's own words; a bare `<anchor_hint>id</anchor_hint>` counts too. */
export function anchorHint(text: string): AnchorHint | undefined {
  const hints = [...stripCode(text).matchAll(HINT)];
  const body = hints.at(-1)?.[1];
  if (body === undefined) return undefined;
  const turn = /<turn_id>\s*([\s\S]*?)\s*<\/turn_id>/i.exec(body)?.[1] ?? (/</.test(body) ? undefined : body.trim());
  if (!turn) return undefined;
  const reason = /<reason>\s*([\s\S]*?)\s*<\/reason>/i.exec(body)?.[1];
  return { turnId: turn.slice(0, 200), ...(reason ? { reason } : {}) };
}

/** A short summary: the agent's first sentence of prose, without tags; else the commit subject. */
export function summarize(text: string, fallback: string, max: number): string {
  const prose = stripCode(text)
    .replace(/<anchor_hint>[\s\S]*?<\/anchor_hint>/gi, " ")
    .replace(/<signal>[\s\S]*?<\/signal>/gi, " ")
    .replace(/<[^>]+>/g, " ")
    .split("\n")
    .map((l) => l.replace(/^[#*\->\s]+/, "").trim())
    .filter(Boolean)
    .join(" ")
    .replace(/\s+/g, " ")
    .trim();
  const first = /^(.+?[.!?])(\s|$)/.exec(prose)?.[1] ?? prose;
  const line = first || fallback;
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** About four characters a token: what a context costs before a tokenizer is involved. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
