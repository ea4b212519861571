/**
 * The agent's LLM against a loopback provider: temperature clamped, token budget and key sent,
 * per-call timeout, retry with backoff on 429/5xx (the HTTP driver's client), `think` degraded
 * with thinkSupported false, structured output retried once with the validation errors; and a
 * whole run from the home's config (openai_compatible) with hybrid screening whose embeddings are
 * cached on disk, so the second run embeds nothing new.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ChatLlm } from "../../adapters/agents/llm/chat-llm.js";
import { createAgent } from "../../src/coding/agent/api.js";
import { parseConfig, type LlmEntry } from "../../src/coding/agent/config.js";
import { generateStructured, StructuredOutputError } from "../../src/coding/agent/llm.js";
import { readReport } from "../../src/coding/agent/report.js";
import { startModelApi, type ModelApi } from "./support/model-api.js";
import { tempHome } from "./helpers.js";

let api: ModelApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});
const noWait = { sleep: async () => {} };
const entry = (over: Partial<LlmEntry> = {}): LlmEntry => ({ alias: "m", provider: "openai_compatible", baseUrl: `${api!.url}/v1`, model: "mock-1", apiKeyEnv: "MOCK_KEY", ...over });

describe("ChatLlm", () => {
  it("clamps the temperature to [0, 2], sends the token budget and the key from its variable", async () => {
    api = await startModelApi([{ content: "a" }, { content: "b" }, { content: "c" }]);
    const llm = new ChatLlm(entry({ temperature: 7, maxTokens: 99 }), { MOCK_KEY: "sk-test" }, noWait);
    expect((await llm.complete({ role: "planner", prompt: "hi" })).text).toBe("a");
    await llm.complete({ role: "planner", prompt: "hi", temperature: -3 });
    await llm.complete({ role: "planner", prompt: "hi", temperature: 0.7 });
    expect(api.chat.map((c) => c.body.temperature)).toEqual([2, 0, 0.7]);
    expect(api.chat[0]!.body).toMatchObject({ model: "mock-1", max_tokens: 99, messages: [{ role: "user", content: "hi" }] });
    expect(api.chat[0]!.headers.authorization).toBe("Bearer sk-test");
    expect(api.chat[0]!.path).toBe("/v1/chat/completions");
  });

  it("reaches Ollama on its OpenAI-compatible /v1, without a key", async () => {
    api = await startModelApi([{ content: "ok" }]);
    await new ChatLlm(entry({ provider: "ollama", baseUrl: api.url, apiKeyEnv: undefined }), { OPENAI_API_KEY: "sk-not-for-ollama" }, noWait).complete({ role: "decider", prompt: "x" });
    expect(api.chat[0]!.path).toBe("/v1/chat/completions");
    expect(api.chat[0]!.headers.authorization).toBeUndefined();
  });

  it("retries 429 and 5xx with backoff, honouring Retry-After, and gives up on another 4xx at once", async () => {
    api = await startModelApi([{ status: 429, error: "slow down", headers: { "retry-after": "0" } }, { status: 503, error: "busy" }, { content: "finally" }, { status: 401, error: "bad key" }]);
    const waits: number[] = [];
    const llm = new ChatLlm(entry(), {}, { sleep: async (ms) => void waits.push(ms), backoffMs: 100 });
    const r = await llm.complete({ role: "planner", prompt: "x" });
    expect(r).toMatchObject({ text: "finally", retries: 2 });
    expect(waits[0]).toBe(0);
    expect(waits[1]).toBeGreaterThanOrEqual(150);
    await expect(llm.complete({ role: "planner", prompt: "x" })).rejects.toThrow(/answered HTTP 401: bad key/);
    expect(api.chat).toHaveLength(4);
  });

  it("times a call out per its requestTimeoutMs", async () => {
    api = await startModelApi([{ content: "late", delayMs: 2000 }]);
    const llm = new ChatLlm(entry({ requestTimeoutMs: 200, maxRetries: 0 }), {}, noWait);
    const started = Date.now();
    await expect(llm.complete({ role: "planner", prompt: "x" })).rejects.toThrow(/no answer in time/);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("degrades think where the endpoint refuses it, records thinkSupported false, and stops asking", async () => {
    api = await startModelApi([{ status: 400, error: "Unrecognized request argument supplied: reasoning_effort" }, { content: "plain" }, { content: "plain again" }]);
    const llm = new ChatLlm(entry({ think: true }), {}, noWait);
    expect(await llm.complete({ role: "planner", prompt: "x" })).toMatchObject({ text: "plain", thinkSupported: false });
    expect(await llm.complete({ role: "planner", prompt: "x" })).toMatchObject({ thinkSupported: false });
    expect(api.chat.map((c) => c.body.reasoning_effort)).toEqual(["medium", undefined, undefined]);
  });

  it("keeps think where the endpoint takes it (thinkSupported true), and a 400 about something else is an error", async () => {
    api = await startModelApi([{ content: "deep" }, { status: 400, error: "messages: too long" }]);
    const llm = new ChatLlm(entry({ think: true }), {}, noWait);
    expect(await llm.complete({ role: "planner", prompt: "x" })).toMatchObject({ text: "deep", thinkSupported: true });
    await expect(llm.complete({ role: "planner", prompt: "x" })).rejects.toThrow(/too long/);
  });
});

describe("structured output", () => {
  const schema = { type: "object", required: ["n"], properties: { n: { type: "integer", minimum: 1 } } };
  it("asks once more with the validation errors, and takes a fenced answer", async () => {
    api = await startModelApi([{ content: '{"n": 0}' }, { content: 'Sure:\n```json\n{"n": 3}\n```' }]);
    const r = await generateStructured<{ n: number }>(new ChatLlm(entry(), {}, noWait), { role: "planner", prompt: "pick" }, schema);
    expect(r).toMatchObject({ value: { n: 3 }, attempts: 2, usage: { inputTokens: 100, outputTokens: 14 } });
    const second = (api.chat[1]!.body.messages as { content: string }[])[0]!.content;
    expect(second).toContain("Your previous answer was not valid:\n- /n must be >= 1");
  });

  it("fails the step after the retry", async () => {
    api = await startModelApi([{ content: "no" }, { content: '{"n": "three"}' }]);
    const err = await generateStructured(new ChatLlm(entry(), {}, noWait), { role: "planner", prompt: "pick" }, schema).catch((e) => e);
    expect(err).toBeInstanceOf(StructuredOutputError);
    expect(err.message).toBe("the planner's answer did not match its schema after a retry: /n must be integer");
    expect(err.attempts.map((a: { errors: string[] }) => a.errors[0])).toEqual(["no JSON object in the answer", "/n must be integer"]);
  });
});

describe("a run from the home's config", () => {
  it("plans and decides through the provider, screens hybrid with cached embeddings: the second run embeds nothing new", async () => {
    api = await startModelApi();
    const config = {
      llm: [{ alias: "main", provider: "openai_compatible", baseUrl: `${api.url}/v1`, model: "mock-1", embeddingModel: "trigram-256", temperature: 0.1 }],
      roles: { planner: "main", decider: "main" },
      screening: { strategy: "hybrid", k: 3, embeddingAlias: "main" },
    };
    expect(() => parseConfig(config)).not.toThrow();
    const { home, workdir } = tempHome(config);
    const answers = () => [
      { content: JSON.stringify({ steps: [{ id: "s1", desc: "write a greeting for Ada" }] }) },
      { content: JSON.stringify({ type: "execute", action: { name: "greet", args: { who: "Ada" } }, step: "s1", reason: "greet her" }) },
    ];
    api.replies.push(...answers());
    const agent = await createAgent({ home, workdir, env: { PATH: process.env.PATH } });
    const first = await (await agent.ask("Welcome the newcomer Ada", [], { executionMode: "auto" })).finished;
    expect(first).toMatchObject({ status: "succeeded" });
    const plan = readReport(first.report).find((e) => e.type === "plan_built")!.payload;
    expect(plan).toMatchObject({ strategy: "hybrid" });
    expect((plan.guides as { id: string }[])[0]!.id).toBe("greetings/welcome a newcomer");
    const firstEmbedded = api.embedded.length;
    expect(firstEmbedded).toBeGreaterThan(0);
    expect(readdirSync(join(home, "cache")).filter((f) => f.startsWith("embeddings-"))).toHaveLength(1);
    api.replies.push(...answers());
    const second = await (await agent.ask("Welcome the newcomer Ada", [], { executionMode: "auto" })).finished;
    expect(second.status).toBe("succeeded");
    expect(api.embedded.length).toBe(firstEmbedded);
    // The prompts went to the provider with the configured temperature.
    expect(api.chat.every((c) => c.body.temperature === 0.1)).toBe(true);
    await agent.close();
  });

  it("reorders the screened guides by the reranker alias, its answer limited to their ids", async () => {
    api = await startModelApi();
    const config = {
      llm: [
        { alias: "main", provider: "openai_compatible", baseUrl: `${api.url}/v1`, model: "mock-1" },
        { alias: "rank", provider: "ollama", baseUrl: api.url, model: "mock-reranker" },
      ],
      roles: { planner: "main", decider: "main" },
      screening: { strategy: "keyword", rerankerAlias: "rank" },
    };
    const { home, workdir } = tempHome(config);
    api.replies.push(
      { content: JSON.stringify({ order: ["greetings/no such guide"] }) },
      { content: JSON.stringify({ order: ["greetings/welcome a newcomer"] }) },
      { content: JSON.stringify({ steps: [{ id: "s1", desc: "tidy up" }] }) },
      { content: JSON.stringify({ type: "terminate", reason: "nothing to do", hint: "terminate" }) },
    );
    const agent = await createAgent({ home, workdir, store: "memory:", env: {} });
    const out = await (await agent.ask("welcome a newcomer, then tidy the desk", [], { executionMode: "auto" })).finished;
    expect(out.status).toBe("succeeded");
    const rerankCall = api.chat[0]!;
    expect(rerankCall.body.model).toBe("mock-reranker");
    expect((rerankCall.body.messages as { content: string }[])[0]!.content).toMatch(/^Order these passages from most to least relevant to the query, by id\.\n\nQuery: welcome a newcomer, then tidy the desk\n\n\[greetings\/tidy the desk\]/);
    // The first answer named an id that was not offered: asked again, then the order applied, the one left out after it.
    expect((api.chat[1]!.body.messages as { content: string }[])[0]!.content).toContain("must be equal to one of the allowed values");
    const plan = readReport(out.report).find((e) => e.type === "plan_built")!.payload;
    expect(plan.reranker).toBe("rank");
    expect((plan.guides as { id: string; ranks: Record<string, number> }[]).map((g) => [g.id, g.ranks])).toEqual([
      ["greetings/welcome a newcomer", { keyword: 2, reranked: 1 }],
      ["greetings/tidy the desk", { keyword: 1, reranked: 2 }],
    ]);
    await agent.close();
  });

  it("ends failed (budget) once the run's model tokens reach execution.max_tokens, the report counting them", async () => {
    api = await startModelApi([
      { content: JSON.stringify({ steps: [{ id: "s1", desc: "greet Ada" }, { id: "s2", desc: "greet Bo" }] }) },
      { content: JSON.stringify({ type: "execute", action: { name: "greet", args: { who: "Ada" } }, step: "s1", reason: "first" }) },
    ]);
    const { home, workdir } = tempHome({ llm: [{ alias: "m", provider: "openai_compatible", baseUrl: `${api.url}/v1`, model: "mock-1" }], execution: { max_tokens: 100 } });
    const agent = await createAgent({ home, workdir, store: "memory:", env: {} });
    const out = await (await agent.ask("greet Ada and Bo", [], { executionMode: "auto" })).finished;
    // The mock reports 50 prompt + 7 completion tokens per call: 114 after the plan and one decision.
    expect(out).toMatchObject({ status: "failed", reason: "budget", message: "the run's token budget (100) is spent: 114 used" });
    expect(out.summary.tokens).toBe(114);
    expect(api.chat).toHaveLength(2);
    expect(readReport(out.report).at(-1)!.payload).toMatchObject({ tokensUsed: 114 });
    await agent.close();
  });

  it("refuses vector screening with no embeddings endpoint rather than fall back to keywords", async () => {
    const { home } = tempHome({ llm: [{ alias: "m", provider: "ollama", baseUrl: "http://127.0.0.1:9", model: "x" }], screening: { strategy: "vector" } });
    await expect(createAgent({ home })).rejects.toThrow(/screening.strategy "vector" needs embeddings: .*no silent fall back to keywords/);
    expect(existsSync(join(home, "agent.db"))).toBe(false);
  });
});
