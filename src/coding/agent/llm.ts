/**
 * The agent's LLM (seed 002's `LLM` class) as a contract: one completion per call, by alias,
 * with the temperature clamped to [0, 2], a token budget and a per-call timeout; the
 * implementations (an OpenAI-compatible or Ollama endpoint, or any agent driver, such as the
 * scripted one tests use) live in adapters/agents. `generateStructured` asks for JSON, validates
 * it against a JSON Schema, asks once more with the validation errors, and fails the step after.
 */
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";

export interface LlmCall {
  prompt: string;
  system?: string;
  temperature?: number;
  maxTokens?: number;
  think?: boolean;
  timeoutMs?: number;
  /** Which step asks (planner, decider): the scripted driver matches its steps on it. */
  role: string;
  iteration?: number;
  signal?: AbortSignal;
}

export interface LlmReply {
  text: string;
  /** false when `think` was asked for and the provider could not honour it (the call went ahead without). */
  thinkSupported?: boolean;
  usage?: { inputTokens: number; outputTokens: number };
  retries: number;
  model?: string;
}

export interface Llm {
  readonly alias: string;
  complete(call: LlmCall): Promise<LlmReply>;
}

export const clampTemperature = (t: number | undefined): number | undefined => (t === undefined || Number.isNaN(t) ? undefined : Math.min(2, Math.max(0, t)));

export class StructuredOutputError extends Error {
  constructor(
    message: string,
    readonly attempts: { text: string; errors: string[] }[],
  ) {
    super(message);
    this.name = "StructuredOutputError";
  }
}

export interface Structured<T> {
  value: T;
  attempts: number;
  thinkSupported?: boolean;
  usage: { inputTokens: number; outputTokens: number };
}

const ajv = new Ajv2020({ allErrors: true, strict: false });
const compiled = new WeakMap<object, ReturnType<Ajv2020["compile"]>>();

/** The JSON value in a model's answer: the whole text, else a fenced block, else the outermost braces. */
export function extractJson(text: string): unknown {
  const tries = [text.trim()];
  const fence = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  if (fence) tries.push(fence[1]!.trim());
  const first = text.indexOf("{");
  const last = text.lastIndexOf("}");
  if (first >= 0 && last > first) tries.push(text.slice(first, last + 1));
  for (const t of tries) {
    try {
      return JSON.parse(t);
    } catch {
      // the next candidate
    }
  }
  throw new SyntaxError("no JSON object in the answer");
}

const describe = (errors: ErrorObject[] | null | undefined): string[] => (errors ?? []).map((e) => `${e.instancePath || "(root)"} ${e.message ?? "is invalid"}${e.params && "allowedValues" in e.params ? ` (${(e.params.allowedValues as unknown[]).join(", ")})` : ""}`);

export async function generateStructured<T>(llm: Llm, call: LlmCall, schema: object): Promise<Structured<T>> {
  let validate = compiled.get(schema);
  if (!validate) compiled.set(schema, (validate = ajv.compile(schema)));
  const attempts: { text: string; errors: string[] }[] = [];
  const usage = { inputTokens: 0, outputTokens: 0 };
  let thinkSupported: boolean | undefined;
  const instructions = `Answer with one JSON object only, valid against this JSON Schema:\n${JSON.stringify(schema)}`;
  for (let attempt = 1; attempt <= 2; attempt++) {
    const prompt = attempt === 1 ? `${call.prompt}\n\n${instructions}` : `${call.prompt}\n\n${instructions}\n\nYour previous answer was not valid:\n${attempts.at(-1)!.errors.map((e) => `- ${e}`).join("\n")}\nAnswer again with the corrected JSON object only.`;
    const reply = await llm.complete({ ...call, prompt });
    if (reply.thinkSupported !== undefined) thinkSupported = reply.thinkSupported;
    usage.inputTokens += reply.usage?.inputTokens ?? 0;
    usage.outputTokens += reply.usage?.outputTokens ?? 0;
    let value: unknown;
    try {
      value = extractJson(reply.text);
    } catch (e) {
      attempts.push({ text: reply.text, errors: [(e as Error).message] });
      continue;
    }
    if (validate(value)) return { value: value as T, attempts: attempt, usage, ...(thinkSupported !== undefined ? { thinkSupported } : {}) };
    attempts.push({ text: reply.text, errors: describe(validate.errors) });
  }
  throw new StructuredOutputError(`the ${call.role}'s answer did not match its schema after a retry: ${attempts.at(-1)!.errors.join("; ")}`, attempts);
}
