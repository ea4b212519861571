/**
 * The agent's configuration (`<home>/config.json`): seed 002's `execution`, `logging` and
 * `feedback` sections, its LLM entries with aliases, screening, and the guardrails the seed names
 * but never sets (per-run action quota, wall time). A wrong value is refused naming its path.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { z } from "zod";

const llmEntry = z
  .object({
    alias: z.string().min(1),
    provider: z.enum(["openai_compatible", "ollama"]),
    baseUrl: z.string().url(),
    model: z.string().min(1),
    apiKey: z.string().optional(),
    /** Where the key is read from (never written into the file): default OPENAI_API_KEY for openai_compatible. */
    apiKeyEnv: z.string().optional(),
    temperature: z.number().optional(),
    maxTokens: z.number().int().positive().optional(),
    think: z.boolean().optional(),
    /** Whether the endpoint takes a reasoning switch; unknown (absent) is found out by asking. */
    thinkSupported: z.boolean().optional(),
    requestTimeoutMs: z.number().int().positive().optional(),
    maxRetries: z.number().int().min(0).optional(),
    /** An embeddings model on the same endpoint, for vector screening. */
    embeddingModel: z.string().optional(),
  })
  .strict();

const configSchema = z
  .object({
    llm: z.array(llmEntry).default([]),
    roles: z.object({ planner: z.string().optional(), decider: z.string().optional() }).strict().default({}),
    screening: z
      .object({ strategy: z.enum(["keyword", "vector", "hybrid"]).default("keyword"), k: z.number().int().positive().default(5), embeddingAlias: z.string().optional(), rerankerAlias: z.string().optional() })
      .strict()
      .default({}),
    execution: z
      .object({
        execution_mode: z.enum(["interactive", "auto"]).default("interactive"),
        confirm_policy: z
          .object({ default: z.boolean().default(true), require_for_tags: z.array(z.string()).default(["destructive", "write", "network"]), max_parallel_actions: z.literal(1).default(1) })
          .strict()
          .default({}),
        max_actions: z.number().int().positive().default(20),
        max_wall_time_sec: z.number().positive().default(600),
        max_iterations: z.number().int().positive().default(50),
        /** Tokens (input + output) the planner, decider and reranker may use in one run; none: no cap. */
        max_tokens: z.number().int().positive().optional(),
        confirm_timeout_sec: z.number().positive().default(300),
      })
      .strict()
      .default({}),
    logging: z
      .object({ dir: z.string().default("logs"), report_format: z.literal("jsonl").default("jsonl"), capture_stdout: z.boolean().default(true), capture_stderr: z.boolean().default(true), keep_last_runs: z.number().int().positive().default(100) })
      .strict()
      .default({}),
    feedback: z
      .object({ enable_user_feedback: z.boolean().default(true), implicit_success_on_ok: z.boolean().default(true), handler_timeout_sec: z.number().positive().default(60), recent: z.number().int().positive().default(20) })
      .strict()
      .default({}),
    /**
     * Seed 002's OnlineConfig: a search endpoint consulted only when this says `online: true`
     * and the run asks for it too (`--online`). The key is read from `apiKeyEnv`, never stored.
     */
    knowledge: z
      .object({
        online: z.boolean().default(false),
        provider: z.enum(["custom_api", "web"]).default("custom_api"),
        baseUrl: z
          .string()
          .url()
          .refine((u) => /^https?:\/\//i.test(u), "must be an http(s) URL")
          .optional(),
        index: z.string().min(1).optional(),
        apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable's name").optional(),
        timeoutMs: z.number().int().positive().max(120_000).default(10_000),
        maxResults: z.number().int().positive().max(20).default(5),
        maxContentChars: z.number().int().positive().max(20_000).default(2_000),
        cacheTtlSec: z.number().int().min(0).default(86_400),
      })
      .strict()
      .default({}),
  })
  .strict();

export type AgentConfig = z.infer<typeof configSchema>;
export type LlmEntry = z.infer<typeof llmEntry>;
export type OnlineConfig = AgentConfig["knowledge"];

export class ConfigError extends Error {}

export function defaultHome(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env.PULSE_AGENT_HOME || join(env.HOME || homedir(), ".pulse", "agent");
}

/** The home's folders: actions/, guides/, knowledge/, logs/ (or logging.dir), cache/, and its store. */
export function homePaths(home: string, config?: AgentConfig) {
  const logs = config?.logging.dir ?? "logs";
  return { home, config: join(home, "config.json"), actions: join(home, "actions"), guides: join(home, "guides"), knowledge: join(home, "knowledge"), logs: isAbsolute(logs) ? logs : join(home, logs), cache: join(home, "cache"), runs: join(home, "runs"), store: join(home, "agent.db") };
}

export function parseConfig(value: unknown, where = "config.json"): AgentConfig {
  const r = configSchema.safeParse(value ?? {});
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new ConfigError(`${where}: ${issue.path.join(".") || "(top)"}: ${issue.message}`);
  }
  const aliases = new Set<string>();
  for (const [i, e] of r.data.llm.entries()) {
    if (aliases.has(e.alias)) throw new ConfigError(`${where}: llm.${i}.alias: "${e.alias}" is used twice`);
    aliases.add(e.alias);
  }
  for (const role of ["planner", "decider"] as const) {
    const a = r.data.roles[role];
    if (a && !aliases.has(a)) throw new ConfigError(`${where}: roles.${role}: no llm entry has the alias "${a}" (the aliases are ${[...aliases].join(", ") || "none"})`);
  }
  for (const key of ["embeddingAlias", "rerankerAlias"] as const) {
    const a = r.data.screening[key];
    if (a && !aliases.has(a)) throw new ConfigError(`${where}: screening.${key}: no llm entry has the alias "${a}"`);
  }
  if (r.data.knowledge.online && !r.data.knowledge.baseUrl) throw new ConfigError(`${where}: knowledge.baseUrl: online knowledge needs a search endpoint (custom_api: a JSON search API; web: a SearXNG instance)`);
  return r.data;
}

/** The home's config.json, or the defaults when it has none. */
export function loadConfig(home: string): AgentConfig {
  const path = homePaths(home).config;
  if (!existsSync(path)) return parseConfig({});
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new ConfigError(`${path}: ${(e as Error).message}`);
  }
  return parseConfig(value, path);
}

/** Writes a config with every default spelled out (and the home's folders), refusing to overwrite one. */
export function initConfig(home: string, save?: string): string {
  const paths = homePaths(home);
  const target = save ? resolve(save) : paths.config;
  if (existsSync(target)) throw new ConfigError(`${target} exists already: edit it, or name another file with --save`);
  for (const dir of [paths.actions, paths.guides, paths.knowledge, paths.logs]) mkdirSync(dir, { recursive: true });
  const sample = { llm: [{ alias: "default", provider: "openai_compatible", baseUrl: "http://127.0.0.1:11434/v1", model: "qwen2.5:7b", apiKeyEnv: "OPENAI_API_KEY", temperature: 0.2, maxTokens: 2048, requestTimeoutMs: 120000 }], roles: { planner: "default", decider: "default" } };
  const config = parseConfig(sample);
  writeFileSync(target, `${JSON.stringify(config, null, 2)}\n`);
  return target;
}
