/**
 * The scripted driver's script: steps matched on loop, phase and iteration, each with file
 * effects, shell commands, a commit, text (with signals), tool calls, usage, a delay and an
 * outcome. Loaded from JSON or YAML with errors that name the step and field.
 */
import { readFileSync } from "node:fs";
import { LineCounter, parseDocument } from "yaml";
import type { Usage } from "../../../src/agents/contract.js";

export type StepOutcome = "ok" | "timeout" | "crash" | "hang" | "rate_limit" | "max_turns";
export const STEP_OUTCOMES: readonly StepOutcome[] = ["ok", "timeout", "crash", "hang", "rate_limit", "max_turns"];

export interface ScriptStep {
  /** Which calls the step answers; a field left out matches anything. */
  match?: { loop?: string; phase?: string; iteration?: number };
  /** Files to write (content) or delete (null), relative to the workspace. */
  files?: Record<string, string | null>;
  /** Shell commands run in the workspace, in order; a failing one makes the step crash. */
  shell?: string[];
  /** Commit everything afterwards with this message. */
  commit?: string;
  text?: string;
  /** A string argument `{{prompt:REGEX}}` is replaced by REGEX's first match in the prompt. */
  toolCalls?: { name: string; arguments?: Record<string, unknown> }[];
  usage?: Usage;
  costUsd?: number;
  model?: string;
  sessionId?: string;
  delayMs?: number;
  outcome?: StepOutcome;
  /** For rate_limit: when to try again. */
  retryAfterMs?: number;
  /** For crash: the message. */
  error?: string;
}

export interface Script {
  /** `strict`: a call no step matches is an error. `repeat-last`: the last step used answers again. */
  mode?: "strict" | "repeat-last";
  steps: ScriptStep[];
}

export class ScriptError extends Error {
  constructor(
    message: string,
    readonly file?: string,
  ) {
    super(file ? `${file}: ${message}` : message);
    this.name = "ScriptError";
  }
}

const STEP_KEYS = new Set(["match", "files", "shell", "commit", "text", "toolCalls", "usage", "costUsd", "model", "sessionId", "delayMs", "outcome", "retryAfterMs", "error"]);

export function loadScript(path: string): Script {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ScriptError(`cannot read the script: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, path);
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: false, lineCounter });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const at = lineCounter.linePos(e.pos[0]);
    throw new ScriptError(`${at.line}:${at.col}: ${e.message.split("\n")[0]}`, path);
  }
  try {
    return validateScript(doc.toJS());
  } catch (e) {
    throw new ScriptError((e as Error).message, path);
  }
}

/** Checks a script value, naming the first wrong field (`steps[2].outcome: …`). */
export function validateScript(value: unknown): Script {
  const fail = (where: string, message: string): never => {
    throw new ScriptError(`${where}: ${message}`);
  };
  if (!value || typeof value !== "object" || Array.isArray(value)) fail("script", "must be an object with a steps list");
  const v = value as Record<string, unknown>;
  if (v.mode !== undefined && v.mode !== "strict" && v.mode !== "repeat-last") fail("mode", `must be "strict" or "repeat-last", got ${JSON.stringify(v.mode)}`);
  if (!Array.isArray(v.steps) || v.steps.length === 0) fail("steps", "must be a non-empty list");
  (v.steps as unknown[]).forEach((raw, i) => {
    const at = `steps[${i}]`;
    if (!raw || typeof raw !== "object" || Array.isArray(raw)) return fail(at, "must be an object");
    const s = raw as Record<string, unknown>;
    for (const key of Object.keys(s)) if (!STEP_KEYS.has(key)) fail(`${at}.${key}`, `unknown field (the fields are ${[...STEP_KEYS].join(", ")})`);
    if (s.match !== undefined) {
      const m = s.match as Record<string, unknown>;
      if (!m || typeof m !== "object") fail(`${at}.match`, "must be an object");
      if (m.iteration !== undefined && (!Number.isInteger(m.iteration) || (m.iteration as number) < 1)) fail(`${at}.match.iteration`, "must be a whole number ≥ 1");
      for (const k of ["loop", "phase"]) if (m[k] !== undefined && typeof m[k] !== "string") fail(`${at}.match.${k}`, "must be a string");
    }
    if (s.outcome !== undefined && !STEP_OUTCOMES.includes(s.outcome as StepOutcome)) fail(`${at}.outcome`, `must be one of ${STEP_OUTCOMES.join(", ")}, got ${JSON.stringify(s.outcome)}`);
    if (s.files !== undefined) {
      if (!s.files || typeof s.files !== "object" || Array.isArray(s.files)) fail(`${at}.files`, "must map paths to content (or null to delete)");
      for (const [p, c] of Object.entries(s.files as object)) if (c !== null && typeof c !== "string") fail(`${at}.files.${p}`, "must be a string or null");
    }
    if (s.shell !== undefined && (!Array.isArray(s.shell) || s.shell.some((c) => typeof c !== "string"))) fail(`${at}.shell`, "must be a list of commands");
    for (const k of ["commit", "text", "model", "sessionId", "error"]) if (s[k] !== undefined && typeof s[k] !== "string") fail(`${at}.${k}`, "must be a string");
    for (const k of ["delayMs", "costUsd", "retryAfterMs"]) if (s[k] !== undefined && (typeof s[k] !== "number" || (s[k] as number) < 0)) fail(`${at}.${k}`, "must be a number ≥ 0");
    if (s.usage !== undefined) {
      const u = s.usage as Record<string, unknown>;
      if (typeof u?.inputTokens !== "number" || typeof u?.outputTokens !== "number") fail(`${at}.usage`, "needs inputTokens and outputTokens (numbers)");
    }
    if (s.toolCalls !== undefined && (!Array.isArray(s.toolCalls) || s.toolCalls.some((c) => typeof (c as { name?: unknown })?.name !== "string"))) fail(`${at}.toolCalls`, "must be a list of { name, arguments }");
  });
  return v as unknown as Script;
}
