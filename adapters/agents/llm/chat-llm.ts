/**
 * Seed 002's `openai_compatible` and `ollama` providers as an Llm, through the HTTP driver's
 * chat client (so its retry with backoff on 429/5xx and Retry-After apply). Ollama is reached on
 * its OpenAI-compatible `/v1`. `think` is sent as `reasoning_effort`; an endpoint that refuses it
 * (HTTP 400 naming it), or one configured `thinkSupported: false`, gets the call without it and
 * the reply says `thinkSupported: false`.
 */
import { ChatError, chatCompletion, type ChatClientOptions } from "../http/chat-client.js";
import { clampTemperature, type Llm, type LlmCall, type LlmReply } from "../../../src/coding/agent/llm.js";
import type { LlmEntry } from "../../../src/coding/agent/config.js";

export function baseUrlOf(entry: Pick<LlmEntry, "provider" | "baseUrl">): string {
  const root = entry.baseUrl.replace(/\/+$/, "");
  return entry.provider === "ollama" && !root.endsWith("/v1") ? `${root}/v1` : root;
}

export function apiKeyOf(entry: LlmEntry, env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (entry.apiKey) return entry.apiKey;
  const name = entry.apiKeyEnv ?? (entry.provider === "openai_compatible" ? "OPENAI_API_KEY" : undefined);
  return name ? env[name] : undefined;
}

export class ChatLlm implements Llm {
  readonly alias: string;
  private thinkSupported: boolean | undefined;

  constructor(
    private readonly entry: LlmEntry,
    private readonly env: Readonly<Record<string, string | undefined>> = process.env,
    private readonly client: Partial<ChatClientOptions> = {},
  ) {
    this.alias = entry.alias;
    this.thinkSupported = entry.thinkSupported;
  }

  async complete(call: LlmCall): Promise<LlmReply> {
    const e = this.entry;
    const apiKey = apiKeyOf(e, this.env);
    const options: ChatClientOptions = { baseUrl: baseUrlOf(e), requestTimeoutMs: call.timeoutMs ?? e.requestTimeoutMs ?? 120_000, maxRetries: e.maxRetries ?? 3, ...(apiKey ? { apiKey } : {}), ...this.client };
    const temperature = clampTemperature(call.temperature ?? e.temperature);
    const maxTokens = call.maxTokens ?? e.maxTokens;
    const body: Record<string, unknown> = {
      model: e.model,
      messages: [...(call.system ? [{ role: "system", content: call.system }] : []), { role: "user", content: call.prompt }],
      ...(temperature !== undefined ? { temperature } : {}),
      ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
    };
    const think = call.think ?? e.think ?? false;
    let thinkSupported: boolean | undefined;
    if (think && this.thinkSupported !== false) body.reasoning_effort = "medium";
    else if (think) thinkSupported = false;
    let res;
    try {
      res = await chatCompletion(options, body, call.signal);
      if (think && body.reasoning_effort) thinkSupported = this.thinkSupported = true;
    } catch (err) {
      if (!(think && body.reasoning_effort && err instanceof ChatError && err.status === 400 && /reason|think|unsupported|unrecogni[sz]ed|unknown/i.test(err.message))) throw err;
      // Degraded, not failed: the same call without the reasoning switch, remembered for this alias.
      delete body.reasoning_effort;
      this.thinkSupported = thinkSupported = false;
      res = await chatCompletion(options, body, call.signal);
    }
    const u = res.usage;
    return {
      text: res.message.content ?? "",
      retries: res.retries,
      ...(thinkSupported !== undefined ? { thinkSupported } : {}),
      ...(u ? { usage: { inputTokens: u.prompt_tokens ?? 0, outputTokens: u.completion_tokens ?? 0 } } : {}),
      ...(res.model ? { model: res.model } : {}),
    };
  }
}
