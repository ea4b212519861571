/**
 * One call to an OpenAI-compatible `/v1/chat/completions` (OpenAI, vLLM, Ollama, LM Studio, a
 * proxy), retried with exponential backoff and jitter on 429, 5xx and connection failures,
 * honouring Retry-After. A 4xx other than 429 is not retried: it will not get better.
 */

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface ChatResponse {
  message: ChatMessage;
  finishReason: string;
  model?: string;
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } };
}

export class ChatError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "ChatError";
  }
}

export interface ChatClientOptions {
  /** Server root or `…/v1`: `/v1/chat/completions` is appended as needed. */
  baseUrl: string;
  apiKey?: string;
  /** Per request (default 10 min: local models can be slow). */
  requestTimeoutMs?: number;
  /** Retries after the first try (default 5). */
  maxRetries?: number;
  /** First backoff (default 1 s), doubled each time up to 60 s. */
  backoffMs?: number;
  headers?: Record<string, string>;
  /** A Retry-After longer than this is not waited out here: the caller (the loop) waits instead. Default 60 s. */
  maxRetryWaitMs?: number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export function chatUrl(baseUrl: string): string {
  const root = baseUrl.replace(/\/+$/, "");
  if (root.endsWith("/chat/completions")) return root;
  return root.endsWith("/v1") ? `${root}/chat/completions` : `${root}/v1/chat/completions`;
}

export async function chatCompletion(options: ChatClientOptions, body: Record<string, unknown>, signal?: AbortSignal): Promise<ChatResponse & { retries: number }> {
  const { value, retries } = await postWithRetry(chatUrl(options.baseUrl), options, body, parseChat, signal);
  return { ...value, retries };
}

/**
 * POSTs JSON to `url` and parses the answer with `parse`, retried with exponential backoff and
 * jitter on 429, 5xx and connection failures (honouring Retry-After): the chat call's policy,
 * shared with the other endpoints of the same services (embeddings).
 */
export async function postWithRetry<T>(url: string, options: ChatClientOptions, body: Record<string, unknown>, parse: (url: string, text: string) => T, signal?: AbortSignal): Promise<{ value: T; retries: number }> {
  const sleep = options.sleep ?? defaultSleep;
  const maxRetries = options.maxRetries ?? 5;
  let lastError: ChatError | undefined;
  for (let attempt = 0; attempt <= maxRetries; attempt++) {
    if (attempt > 0) {
      const backoff = Math.min(60_000, (options.backoffMs ?? 1000) * 2 ** (attempt - 1));
      await sleep(lastError?.retryAfterMs ?? backoff * (0.75 + Math.random() * 0.5), signal);
    }
    try {
      const text = await once(url, options, body, signal);
      return { value: parse(url, text), retries: attempt };
    } catch (e) {
      if (signal?.aborted) throw e;
      if (!(e instanceof ChatError)) throw e;
      lastError = e;
      const retryable = e.status === undefined || e.status === 429 || e.status >= 500;
      if (!retryable || (e.retryAfterMs ?? 0) > (options.maxRetryWaitMs ?? 60_000)) throw e;
    }
  }
  throw lastError!;
}

async function once(url: string, options: ChatClientOptions, body: Record<string, unknown>, signal?: AbortSignal): Promise<string> {
  const timeout = AbortSignal.timeout(options.requestTimeoutMs ?? 600_000);
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}), ...options.headers },
      body: JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  } catch (e) {
    if (signal?.aborted) throw e;
    throw new ChatError(`${url}: ${timeout.aborted ? "no answer in time" : ((e as Error).cause as Error | undefined)?.message ?? (e as Error).message}`, undefined);
  }
  const text = await res.text();
  if (!res.ok) {
    const retryAfter = parseRetryAfter(res.headers.get("retry-after"));
    let detail = text.slice(0, 500);
    try {
      detail = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? detail;
    } catch {
      // not JSON: the text itself
    }
    throw new ChatError(`${url} answered HTTP ${res.status}: ${detail}`, res.status, retryAfter);
  }
  return text;
}

function parseChat(url: string, text: string): ChatResponse {
  let parsed: { choices?: { message?: ChatMessage; finish_reason?: string }[]; model?: string; usage?: ChatResponse["usage"] };
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ChatError(`${url} answered something that is not JSON: ${text.slice(0, 200)}`, 502);
  }
  const choice = parsed.choices?.[0];
  if (!choice?.message) throw new ChatError(`${url} answered without choices[0].message`, 502);
  const out: ChatResponse = { message: choice.message, finishReason: choice.finish_reason ?? "stop" };
  if (parsed.model) out.model = parsed.model;
  if (parsed.usage) out.usage = parsed.usage;
  return out;
}

function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      reject(signal.reason);
    }, { once: true });
  });
}
