/**
 * A model server on loopback that speaks the four APIs the real agent CLIs use (OpenAI chat
 * completions and Responses, Anthropic Messages, Gemini), streaming or not, and plays one small
 * coding task: asked with tools, it calls the agent's own file-writing tool (or its shell) to
 * write `task.file`; once a tool result is back, it answers `task.finalText`. Requests without
 * tools (titles, topic checks) get a short plain answer. Every request is recorded.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

export interface MockTask {
  /** Absolute path of the workspace the agent works in. */
  workspace: string;
  /** Answer the final text at once, without doing the work (an agent that claims success). */
  lazy?: boolean;
  /** Path, relative to the workspace, of the file the agent must write. */
  file: string;
  content: string;
  finalText: string;
}

export interface RecordedRequest {
  api: "chat" | "responses" | "anthropic" | "gemini" | "other";
  path: string;
  model?: string;
  tools: string[];
  /** What the mock did: called a tool (its name) or answered with text. */
  answered: string;
  /** Messages (turns) in the request: a resumed session sends its history. */
  messages: number;
}

export interface MockModelServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  setTask(task: MockTask): void;
  /** The next `count` model requests get HTTP `status` (429 to test rate limits, 500, …). */
  failNext(count: number, status: number, retryAfterSeconds?: number): void;
  close(): Promise<void>;
}

interface ToolSpec {
  name: string;
  schema: Record<string, unknown>;
}

interface Decision {
  kind: "tool" | "text";
  text: string;
  tool?: { name: string; args: Record<string, unknown> };
}

const USAGE = { input: 120, output: 30 };
/** Tool names in order of preference: a file-writing tool first, a shell last. */
const WRITE_TOOLS = ["Write", "write_file", "write", "create_file"];
const SHELL_TOOLS = ["shell", "exec_command", "run_shell_command", "Bash", "bash", "local_shell"];

export async function startMockModelServer(): Promise<MockModelServer> {
  let task: MockTask | undefined;
  const requests: RecordedRequest[] = [];
  let failures: { count: number; status: number; retryAfter?: number } = { count: 0, status: 500 };
  let serial = 0;

  const decide = (tools: ToolSpec[], sawToolResult: boolean): Decision => {
    if (!task || tools.length === 0) return { kind: "text", text: "Mock title" };
    if (sawToolResult || task.lazy) return { kind: "text", text: task.finalText };
    const target = join(task.workspace, task.file);
    const writer = WRITE_TOOLS.map((n) => tools.find((t) => t.name === n)).find(Boolean);
    if (writer) {
      const props = Object.keys(((writer.schema as { properties?: object }).properties ?? {}) as object);
      const pathKey = ["file_path", "filePath", "path", "absolute_path"].find((k) => props.includes(k)) ?? "file_path";
      return { kind: "tool", text: "", tool: { name: writer.name, args: { [pathKey]: target, content: task.content } } };
    }
    const shell = SHELL_TOOLS.map((n) => tools.find((t) => t.name === n)).find(Boolean);
    if (shell) {
      const script = `printf '%s' ${shellQuote(task.content)} > ${shellQuote(target)}`;
      const props = Object.keys(((shell.schema as { properties?: object }).properties ?? {}) as object);
      const args: Record<string, unknown> = props.includes("cmd") ? { cmd: script } : props.includes("command") && shell.name !== "shell" ? { command: script } : { command: ["bash", "-lc", script] };
      return { kind: "tool", text: "", tool: { name: shell.name, args } };
    }
    return { kind: "text", text: `no tool to write with among: ${tools.map((t) => t.name).join(", ")}` };
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: Record<string, unknown> = {};
      try {
        body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>) : {};
      } catch {
        body = {};
      }
      const path = (req.url ?? "/").split("?")[0]!;
      if (req.method !== "POST") return json(res, 200, path.endsWith("/models") ? { object: "list", data: [{ id: "mock-model", object: "model" }] } : {});
      if (/count_tokens|countTokens/.test(path)) return json(res, 200, { input_tokens: 10, totalTokens: 10 });
      if (failures.count > 0) {
        failures.count--;
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (failures.retryAfter !== undefined) headers["retry-after"] = String(failures.retryAfter);
        res.writeHead(failures.status, headers);
        return res.end(JSON.stringify({ error: { type: failures.status === 429 ? "rate_limit_error" : "api_error", message: `mock ${failures.status}` } }));
      }
      serial++;
      try {
        if (path.endsWith("/chat/completions")) return chat(req, res, body);
        if (path.endsWith("/responses")) return responses(res, body);
        if (path.endsWith("/messages")) return anthropic(res, body);
        if (/:(stream)?[gG]enerateContent$/.test(path)) return gemini(req, res, body, path);
      } catch (e) {
        return json(res, 500, { error: { message: String(e) } });
      }
      requests.push({ api: "other", path, tools: [], answered: "404", messages: 0 });
      json(res, 404, { error: { message: `mock model server: no route ${path}` } });
    });
  });

  // --------------------------------------------------------------------------------------------
  // OpenAI chat completions (qwen, opencode, the HTTP driver)
  function chat(_req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>) {
    const messages = (body.messages as { role: string }[]) ?? [];
    const tools = ((body.tools as { function: { name: string; parameters?: object } }[]) ?? []).map((t) => ({ name: t.function.name, schema: (t.function.parameters ?? {}) as Record<string, unknown> }));
    const d = decide(tools, messages.some((m) => m.role === "tool"));
    record("chat", "/v1/chat/completions", body.model, tools, d, messages.length);
    const id = `chatcmpl-${serial}`;
    const model = String(body.model ?? "mock-model");
    const usage = { prompt_tokens: USAGE.input, completion_tokens: USAGE.output, total_tokens: USAGE.input + USAGE.output };
    const toolCalls = d.tool ? [{ id: `call_${serial}`, type: "function", function: { name: d.tool.name, arguments: JSON.stringify(d.tool.args) } }] : undefined;
    const finish = d.tool ? "tool_calls" : "stop";
    if (!body.stream) {
      return json(res, 200, { id, object: "chat.completion", created: 1, model, choices: [{ index: 0, message: { role: "assistant", content: d.text || null, ...(toolCalls ? { tool_calls: toolCalls } : {}) }, finish_reason: finish }], usage });
    }
    sse(res);
    const chunk = (delta: object, finish_reason: string | null, extra: object = {}) => res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta, finish_reason }], ...extra })}\n\n`);
    chunk({ role: "assistant", content: "" }, null);
    if (d.text) for (const piece of pieces(d.text)) chunk({ content: piece }, null);
    if (toolCalls) chunk({ tool_calls: toolCalls.map((c, index) => ({ index, ...c })) }, null);
    chunk({}, finish);
    res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model, choices: [], usage })}\n\n`);
    res.end("data: [DONE]\n\n");
  }

  // --------------------------------------------------------------------------------------------
  // OpenAI Responses (codex)
  function responses(res: ServerResponse, body: Record<string, unknown>) {
    const input = (body.input as { type?: string }[]) ?? [];
    const tools = ((body.tools as { type: string; name?: string; parameters?: object }[]) ?? []).filter((t) => t.name).map((t) => ({ name: t.name!, schema: (t.parameters ?? {}) as Record<string, unknown> }));
    const d = decide(tools, input.some((i) => i.type === "function_call_output" || i.type === "custom_tool_call_output" || i.type === "local_shell_call_output"));
    record("responses", "/v1/responses", body.model, tools, d, input.length);
    const id = `resp_${serial}`;
    const item = d.tool
      ? { type: "function_call", id: `fc_${serial}`, call_id: `call_${serial}`, name: d.tool.name, arguments: JSON.stringify(d.tool.args), status: "completed" }
      : { type: "message", id: `msg_${serial}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: d.text, annotations: [] }] };
    const usage = { input_tokens: USAGE.input, input_tokens_details: { cached_tokens: 0 }, output_tokens: USAGE.output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: USAGE.input + USAGE.output };
    const response = { id, object: "response", created_at: 1, status: "completed", model: body.model, output: [item], usage };
    if (!body.stream) return json(res, 200, response);
    sse(res);
    let seq = 0;
    const ev = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
    ev("response.created", { response: { ...response, status: "in_progress", output: [] } });
    ev("response.output_item.added", { output_index: 0, item: d.tool ? { ...item, arguments: "" } : { ...item, content: [] } });
    if (!d.tool) for (const piece of pieces(d.text)) ev("response.output_text.delta", { item_id: item.id, output_index: 0, content_index: 0, delta: piece });
    ev("response.output_item.done", { output_index: 0, item });
    ev("response.completed", { response });
    res.end();
  }

  // --------------------------------------------------------------------------------------------
  // Anthropic Messages (claude)
  function anthropic(res: ServerResponse, body: Record<string, unknown>) {
    const messages = (body.messages as { role: string; content: unknown }[]) ?? [];
    const tools = ((body.tools as { name: string; input_schema?: object }[]) ?? []).filter((t) => t.name).map((t) => ({ name: t.name, schema: (t.input_schema ?? {}) as Record<string, unknown> }));
    const sawResult = messages.some((m) => Array.isArray(m.content) && (m.content as { type: string }[]).some((c) => c.type === "tool_result"));
    const d = decide(tools, sawResult);
    record("anthropic", "/v1/messages", body.model, tools, d, messages.length);
    const id = `msg_${serial}`;
    const content = d.tool ? [{ type: "tool_use", id: `toolu_${serial}`, name: d.tool.name, input: d.tool.args }] : [{ type: "text", text: d.text }];
    const stop = d.tool ? "tool_use" : "end_turn";
    const usage = { input_tokens: USAGE.input, output_tokens: USAGE.output, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    if (!body.stream) return json(res, 200, { id, type: "message", role: "assistant", model: body.model, content, stop_reason: stop, stop_sequence: null, usage });
    sse(res);
    const ev = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    ev("message_start", { message: { id, type: "message", role: "assistant", model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
    if (d.tool) {
      ev("content_block_start", { index: 0, content_block: { type: "tool_use", id: `toolu_${serial}`, name: d.tool.name, input: {} } });
      ev("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(d.tool.args) } });
    } else {
      ev("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
      for (const piece of pieces(d.text)) ev("content_block_delta", { index: 0, delta: { type: "text_delta", text: piece } });
    }
    ev("content_block_stop", { index: 0 });
    ev("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: USAGE.output } });
    ev("message_stop", {});
    res.end();
  }

  // --------------------------------------------------------------------------------------------
  // Gemini generateContent / streamGenerateContent (gemini)
  function gemini(_req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>, path: string) {
    const contents = (body.contents as { parts?: { functionResponse?: unknown }[] }[]) ?? [];
    const decls = ((body.tools as { functionDeclarations?: { name: string; parameters?: object; parametersJsonSchema?: object }[] }[]) ?? []).flatMap((t) => t.functionDeclarations ?? []);
    const tools = decls.map((f) => ({ name: f.name, schema: (f.parametersJsonSchema ?? f.parameters ?? {}) as Record<string, unknown> }));
    const d = decide(tools, contents.some((c) => (c.parts ?? []).some((p) => p.functionResponse)));
    const model = /models\/([^:]+):/.exec(path)?.[1];
    record("gemini", path, model, tools, d, contents.length);
    const parts = d.tool ? [{ functionCall: { name: d.tool.name, args: d.tool.args } }] : [{ text: d.text }];
    const usageMetadata = { promptTokenCount: USAGE.input, candidatesTokenCount: USAGE.output, totalTokenCount: USAGE.input + USAGE.output };
    const reply = { candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }], usageMetadata, modelVersion: model };
    if (!path.includes(":stream")) {
      // The CLI's side requests (next-speaker checks, JSON answers) read structured text.
      const wantsJson = (body.generationConfig as { responseMimeType?: string } | undefined)?.responseMimeType === "application/json";
      if (wantsJson) return json(res, 200, { ...reply, candidates: [{ content: { role: "model", parts: [{ text: JSON.stringify({ reasoning: "done", next_speaker: "user" }) }] }, finishReason: "STOP", index: 0 }] });
      return json(res, 200, reply);
    }
    sse(res);
    res.write(`data: ${JSON.stringify(reply)}\n\n`);
    res.end();
  }

  function record(api: RecordedRequest["api"], path: string, model: unknown, tools: ToolSpec[], d: Decision, messages = 0) {
    const r: RecordedRequest = { api, path, tools: tools.map((t) => t.name), answered: d.tool ? d.tool.name : "text", messages };
    if (typeof model === "string") r.model = model;
    requests.push(r);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    setTask: (t) => {
      task = t;
    },
    failNext: (count, status, retryAfter) => {
      failures = { count, status, ...(retryAfter !== undefined ? { retryAfter } : {}) };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function sse(res: ServerResponse) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
}

/** Text in a few pieces, as a streaming model sends it. */
function pieces(text: string): string[] {
  const size = Math.max(8, Math.ceil(text.length / 3));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [""];
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
