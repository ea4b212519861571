/** The agent's config.json: defaults filled in, aliases checked across sections, mistakes named by their path. */
import { describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "../../src/coding/agent/config.js";

const entry = { alias: "a", provider: "ollama", baseUrl: "http://127.0.0.1:11434", model: "m" };

describe("the agent's config", () => {
  it("fills in seed 002's defaults and our guardrails", () => {
    expect(parseConfig({})).toMatchObject({
      llm: [],
      screening: { strategy: "keyword", k: 5 },
      execution: { execution_mode: "interactive", confirm_policy: { default: true, require_for_tags: ["destructive", "write", "network"], max_parallel_actions: 1 }, max_actions: 20, max_wall_time_sec: 600, max_iterations: 50 },
      logging: { dir: "logs", report_format: "jsonl", capture_stdout: true, capture_stderr: true, keep_last_runs: 100 },
      feedback: { enable_user_feedback: true, implicit_success_on_ok: true },
    });
    expect(parseConfig({ llm: [entry], roles: { planner: "a" }, screening: { strategy: "hybrid", embeddingAlias: "a", rerankerAlias: "a" } }).roles.planner).toBe("a");
  });

  it.each([
    [{ execution: { max_actions: 0 } }, "config.json: execution.max_actions: Number must be greater than 0"],
    [{ execution: { confirm_policy: { max_parallel_actions: 2 } } }, "config.json: execution.confirm_policy.max_parallel_actions: Invalid literal value, expected 1"],
    [{ screening: { strategy: "semantic" } }, "config.json: screening.strategy: Invalid enum value. Expected 'keyword' | 'vector' | 'hybrid', received 'semantic'"],
    [{ llm: [{ ...entry, provider: "anthropic" }] }, "config.json: llm.0.provider: Invalid enum value. Expected 'openai_compatible' | 'ollama', received 'anthropic'"],
    [{ llm: [entry, entry] }, 'config.json: llm.1.alias: "a" is used twice'],
    [{ llm: [entry], roles: { decider: "b" } }, 'config.json: roles.decider: no llm entry has the alias "b" (the aliases are a)'],
    [{ llm: [entry], screening: { rerankerAlias: "zz" } }, 'config.json: screening.rerankerAlias: no llm entry has the alias "zz"'],
    [{ knowledge: { online: true } }, "config.json: knowledge.baseUrl: online knowledge needs a search endpoint"],
    [{ logging: { keep_last_runs: 10, rotate: true } }, "config.json: logging: Unrecognized key(s) in object: 'rotate'"],
  ])("refuses %j", (value, message) => {
    expect(() => parseConfig(value)).toThrow(ConfigError);
    expect(() => parseConfig(value)).toThrow(message);
  });
});
