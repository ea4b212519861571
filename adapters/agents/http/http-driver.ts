/**
 * The OpenAI-compatible HTTP driver: the runtime owns the tool loop. Each turn sends the
 * conversation and the tools to `/v1/chat/completions`; tool calls are run here (confined to the
 * workspace) and answered; the turn ends when the model answers without tool calls, calls one of
 * the loop's terminal tools, or reaches the turn limit. Sessions live in the driver (in memory),
 * so a later call can resume one.
 */
import { randomUUID } from "node:crypto";
import { addUsage, type AgentDriver, type AgentEvent, type AgentRequest, type AgentResult, type RunOptions, type ToolCall, type Usage } from "../../../src/agents/contract.js";
import { chatCompletion, ChatError, type ChatClientOptions, type ChatMessage } from "./chat-client.js";
import { TOOL_DEFINITIONS, ToolRunner, type ToolDefinition } from "./tools.js";

export interface HttpDriverOptions extends ChatClientOptions {
  model: string;
  /** Prepended to every new session. */
  systemPrompt?: string;
  /** Default 50 model round trips per call. */
  maxTurns?: number;
  temperature?: number;
  shellTimeoutMs?: number;
  parentEnv?: Readonly<Record<string, string | undefined>>;
  passEnv?: string[];
  /** Sessions kept for resume (oldest dropped first). Default 50. */
  maxSessions?: number;
}

export const DEFAULT_SYSTEM_PROMPT =
  "You are a coding agent working in a git repository (the workspace). Use the tools to read, search, edit and run commands; paths are relative to the workspace. Read a file before editing it. Edits must match the file exactly. When you are done, answer with a short summary.";

export class HttpDriver implements AgentDriver {
  readonly name = "openai";
  readonly capabilities = { toolCalls: "native", resume: true, usage: true, costUsd: false, maxTurns: true } as const;
  private readonly sessions = new Map<string, ChatMessage[]>();

  constructor(private readonly options: HttpDriverOptions) {
    new URL(options.baseUrl); // a bad URL fails here, not at the first call
  }

  async run(request: AgentRequest, runOptions: RunOptions = {}): Promise<AgentResult> {
    const started = performance.now();
    const emit = (e: AgentEvent) => runOptions.onEvent?.(e);
    const warnings: string[] = [];
    const timeout = request.timeoutMs ? AbortSignal.timeout(request.timeoutMs) : undefined;
    const signal = [runOptions.signal, timeout].filter((s): s is AbortSignal => s !== undefined);
    const abort = signal.length ? AbortSignal.any(signal) : undefined;
    let tools: ToolRunner;
    try {
      tools = new ToolRunner(request.cwd, { shellTimeoutMs: this.options.shellTimeoutMs ?? 120_000, ...(this.options.parentEnv ? { parentEnv: this.options.parentEnv } : {}), ...(this.options.passEnv ? { passEnv: this.options.passEnv } : {}), ...(abort ? { signal: abort } : {}), ...(runOptions.onSpawn ? { onSpawn: runOptions.onSpawn } : {}), ...(runOptions.marker ? { marker: runOptions.marker } : {}) });
    } catch {
      return { status: "error", text: "", transcript: "", toolCalls: [], error: { kind: "process", message: `workspace ${request.cwd} does not exist` }, durationMs: performance.now() - started, warnings };
    }

    let sessionId = request.resumeSessionId;
    let messages = sessionId ? this.sessions.get(sessionId) : undefined;
    if (request.resumeSessionId && !messages) warnings.push(`session ${request.resumeSessionId} is not known to this driver: starting a new one`);
    if (!messages || !sessionId) {
      sessionId = randomUUID();
      messages = [{ role: "system", content: this.options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT }];
    }
    this.remember(sessionId, messages);
    emit({ type: "session", sessionId, model: request.model ?? this.options.model });
    messages.push({ role: "user", content: request.prompt });

    const terminal = new Set((request.terminalTools ?? []).map((t) => t.name));
    const definitions: ToolDefinition[] = [...TOOL_DEFINITIONS, ...(request.terminalTools ?? []).map((t) => ({ type: "function" as const, function: { name: t.name, description: t.description, parameters: t.parameters } }))];
    const texts: string[] = [];
    const toolCalls: ToolCall[] = [];
    let usage: Usage | undefined;
    let model: string | undefined;
    const maxTurns = request.maxTurns ?? this.options.maxTurns ?? 50;
    const result = (status: AgentResult["status"], extra: Partial<AgentResult> = {}): AgentResult => {
      const r: AgentResult = { status, text: texts.at(-1) ?? "", transcript: texts.join("\n"), toolCalls, sessionId, durationMs: performance.now() - started, warnings, ...extra };
      if (usage) r.usage = usage;
      if (model) r.model = model;
      return r;
    };

    for (let turn = 0; turn < maxTurns; turn++) {
      let reply;
      try {
        reply = await chatCompletion(this.options, { model: request.model ?? this.options.model, messages, tools: definitions, tool_choice: "auto", ...(this.options.temperature !== undefined ? { temperature: this.options.temperature } : {}) }, abort);
      } catch (e) {
        if (runOptions.signal?.aborted) return result("aborted", { error: { kind: "process", message: "stopped by the caller" } });
        if (timeout?.aborted) return result("timeout", { error: { kind: "process", message: `no result within ${request.timeoutMs} ms` } });
        const err = e as ChatError;
        if (err instanceof ChatError && err.status === 429) {
          emit({ type: "error", kind: "rate_limit", message: err.message, ...(err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}) });
          return result("rate_limited", { error: { kind: "rate_limit", message: err.message }, ...(err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}) });
        }
        emit({ type: "error", kind: "api", message: err.message });
        return result("error", { error: { kind: "api", message: err.message } });
      }
      model = reply.model ?? model;
      if (reply.usage) {
        const u: Usage = { inputTokens: reply.usage.prompt_tokens ?? 0, outputTokens: reply.usage.completion_tokens ?? 0 };
        const cached = reply.usage.prompt_tokens_details?.cached_tokens;
        if (cached) u.cacheReadTokens = cached;
        usage = addUsage(usage, u);
        emit({ type: "usage", usage: u });
      }
      const message = reply.message;
      messages.push({ role: "assistant", content: message.content ?? null, ...(message.tool_calls?.length ? { tool_calls: message.tool_calls } : {}) });
      if (message.content) {
        texts.push(message.content);
        emit({ type: "text", text: message.content });
      }
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) return result("ok");
      let ended = false;
      for (const c of calls) {
        let args: Record<string, unknown> = {};
        let parseError: string | undefined;
        try {
          args = c.function.arguments ? (JSON.parse(c.function.arguments) as Record<string, unknown>) : {};
        } catch (e) {
          parseError = `error: the arguments are not valid JSON: ${(e as Error).message}`;
        }
        const call: ToolCall = { id: c.id, name: c.function.name, arguments: args };
        toolCalls.push(call);
        emit({ type: "tool_call", call });
        if (terminal.has(c.function.name) && !parseError) {
          // The loop answers its own tools: the turn ends here, the call is in the result.
          messages.push({ role: "tool", tool_call_id: c.id, content: "received" });
          ended = true;
          continue;
        }
        const outcome = parseError ? { ok: false, output: parseError } : await tools.run(c.function.name, args);
        emit({ type: "tool_result", id: c.id, name: c.function.name, ok: outcome.ok, output: outcome.output });
        messages.push({ role: "tool", tool_call_id: c.id, content: outcome.output });
      }
      if (ended) return result("ok");
    }
    return result("max_turns", { error: { kind: "api", message: `the model was still calling tools after ${maxTurns} turns` } });
  }

  private remember(id: string, messages: ChatMessage[]): void {
    this.sessions.delete(id);
    this.sessions.set(id, messages);
    while (this.sessions.size > (this.options.maxSessions ?? 50)) this.sessions.delete(this.sessions.keys().next().value!);
  }
}
