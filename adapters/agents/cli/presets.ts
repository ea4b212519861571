/**
 * The built-in presets: the headless invocations of coding-loops.md §3 and §7, checked against
 * the pinned CLIs in test/agent-clis (claude, codex, gemini, qwen, opencode run end to end in
 * CI; goose and aider follow their documented flags).
 */
import type { CliPreset } from "./preset.js";

const NO_TOOLS = { toolCalls: "text", resume: false, usage: false, costUsd: false, maxTurns: false } as const;

export const BUILTIN_PRESETS: Readonly<Record<string, CliPreset>> = {
  claude: {
    name: "claude",
    description: "Claude Code (`claude -p`, stream-json)",
    command: "claude",
    format: "claude",
    args: ["-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"],
    prompt: { via: "arg", arg: ["{prompt}"], stdin: [] },
    model: ["--model", "{model}"],
    resume: ["--resume", "{sessionId}"],
    maxTurns: ["--max-turns", "{maxTurns}"],
    mcp: ["--mcp-config", "{mcpConfig}", "--strict-mcp-config"],
    // Settings added for this run only: the user's own settings and hooks stay as they are.
    hooks: { format: "claude", args: ["--settings", "{hookSettings}"] },
    // Works (result subtype error_max_turns) but 2.1.x no longer lists it in --help.
    hiddenFlags: ["--max-turns"],
    rootEnv: { IS_SANDBOX: "1" },
    passEnv: ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CONFIG_DIR", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"],
    endpoint: {
      env: {
        ANTHROPIC_BASE_URL: "{baseUrl}",
        ANTHROPIC_API_KEY: "{apiKey}",
        ANTHROPIC_MODEL: "{model}",
        ANTHROPIC_SMALL_FAST_MODEL: "{model}",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      },
    },
    capabilities: { toolCalls: "mcp", resume: true, usage: true, costUsd: true, maxTurns: true },
  },
  codex: {
    name: "codex",
    description: "OpenAI Codex CLI (`codex exec --json`)",
    command: "codex",
    format: "codex",
    args: ["exec", "--json", "--skip-git-repo-check", "-s", "workspace-write", "-C", "{cwd}"],
    // `exec resume` has no -s/-C: the sandbox goes as a config override, the cwd is the process's.
    resumeArgs: ["exec", "resume", "--json", "--skip-git-repo-check", "-c", 'sandbox_mode="workspace-write"', "{sessionId}"],
    prompt: { via: "arg", arg: ["{prompt}"], stdin: ["-"] },
    model: ["-m", "{model}"],
    passEnv: ["OPENAI_API_KEY", "CODEX_HOME", "OPENAI_BASE_URL"],
    endpoint: {
      env: { CODEX_HOME: "{home}/codex", PULSE_ENDPOINT_API_KEY: "{apiKey}" },
      files: [
        {
          path: "codex/config.toml",
          content: 'model = "{model}"\nmodel_provider = "pulse"\n\n[model_providers.pulse]\nname = "pulse endpoint"\nbase_url = "{openaiBaseUrl}"\nenv_key = "PULSE_ENDPOINT_API_KEY"\nwire_api = "responses"\n',
        },
      ],
      replacesModelArgs: true,
    },
    help: ["exec", "--help"],
    capabilities: { toolCalls: "mcp", resume: true, usage: true, costUsd: false, maxTurns: false },
  },
  gemini: {
    name: "gemini",
    description: "Gemini CLI (`gemini -p`, stream-json)",
    command: "gemini",
    format: "gemini",
    args: ["--yolo", "--output-format", "stream-json"],
    prompt: { via: "arg", arg: ["-p", "{prompt}"] },
    model: ["-m", "{model}"],
    resume: ["--resume", "{sessionId}"],
    env: { GEMINI_CLI_TRUST_WORKSPACE: "true" },
    // BeforeTool and AfterAgent hooks in a system-defaults file of this run's (the lowest settings layer; hook lists are concatenated): the user's settings stay as they are.
    hooks: { format: "gemini", env: { GEMINI_CLI_SYSTEM_DEFAULTS_PATH: "{hookSettings}" } },
    passEnv: ["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_APPLICATION_CREDENTIALS"],
    endpoint: {
      env: { GOOGLE_GEMINI_BASE_URL: "{baseUrl}", GEMINI_API_KEY: "{apiKey}" },
      files: [{ path: ".gemini/settings.json", content: '{"security":{"auth":{"selectedType":"gemini-api-key"}}}\n' }],
    },
    exitCodes: { "53": "max_turns" },
    capabilities: { toolCalls: "mcp", resume: true, usage: true, costUsd: false, maxTurns: false },
  },
  qwen: {
    name: "qwen",
    description: "Qwen Code (`qwen -p`, claude-like stream-json)",
    command: "qwen",
    format: "claude",
    args: ["--yolo", "--output-format", "stream-json"],
    prompt: { via: "arg", arg: ["-p", "{prompt}"] },
    model: ["-m", "{model}"],
    resume: ["--resume", "{sessionId}"],
    passEnv: ["OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "DASHSCOPE_API_KEY"],
    // PreToolUse and Stop hooks: qwen reads hooks from the user's settings only, so the run gets a config home of its own (the user's settings plus the hooks, the rest linked) and keeps the user's runtime folder (sessions).
    hooks: { format: "qwen", env: { QWEN_HOME: "{hookHome}", QWEN_RUNTIME_DIR: "{cliHome}" } },
    endpoint: {
      args: ["--auth-type", "openai"],
      env: { OPENAI_BASE_URL: "{openaiBaseUrl}", OPENAI_API_KEY: "{apiKey}", OPENAI_MODEL: "{model}" },
    },
    capabilities: { toolCalls: "mcp", resume: true, usage: true, costUsd: false, maxTurns: false },
  },
  opencode: {
    name: "opencode",
    description: "opencode (`opencode run --format json`)",
    command: "opencode",
    format: "opencode",
    args: ["run", "--auto", "--format", "json"],
    prompt: { via: "arg", arg: ["{prompt}"] },
    model: ["--model", "{model}"],
    resume: ["--session", "{sessionId}"],
    passEnv: ["OPENCODE_CONFIG", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"],
    endpoint: {
      env: { OPENCODE_CONFIG: "{home}/opencode.json", PULSE_ENDPOINT_API_KEY: "{apiKey}" },
      args: ["--model", "pulse/{model}"],
      files: [
        {
          path: "opencode.json",
          content:
            '{"$schema":"https://opencode.ai/config.json","provider":{"pulse":{"npm":"@ai-sdk/openai-compatible","name":"pulse endpoint","options":{"baseURL":"{openaiBaseUrl}","apiKey":"{env:PULSE_ENDPOINT_API_KEY}"},"models":{"{model}":{"name":"{model}"}}}}}\n',
        },
      ],
      replacesModelArgs: true,
    },
    help: ["run", "--help"],
    capabilities: { toolCalls: "mcp", resume: true, usage: true, costUsd: true, maxTurns: false },
  },
  goose: {
    name: "goose",
    description: "Goose (`goose run`, plain text)",
    command: "goose",
    format: "text",
    args: ["run", "--no-session", "--quiet"],
    prompt: { via: "file", arg: ["-t", "{prompt}"], file: ["-i", "{promptFile}"], stdin: ["-i", "-"] },
    maxTurns: ["--max-turns", "{maxTurns}"],
    env: { GOOSE_MODE: "auto" },
    passEnv: ["GOOSE_PROVIDER", "GOOSE_MODEL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_HOST"],
    endpoint: {
      env: { GOOSE_PROVIDER: "openai", OPENAI_HOST: "{baseUrl}", OPENAI_BASE_PATH: "v1/chat/completions", OPENAI_API_KEY: "{apiKey}", GOOSE_MODEL: "{model}" },
    },
    help: ["run", "--help"],
    capabilities: { ...NO_TOOLS, maxTurns: true },
  },
  aider: {
    name: "aider",
    description: "Aider (`aider --message-file`, plain text)",
    command: "aider",
    format: "text",
    args: ["--yes-always", "--no-pretty", "--no-stream", "--no-auto-commits", "--no-check-update", "--no-show-release-notes"],
    prompt: { via: "file", arg: ["--message", "{prompt}"], file: ["--message-file", "{promptFile}"] },
    model: ["--model", "{model}"],
    passEnv: ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_BASE", "AIDER_MODEL"],
    endpoint: {
      args: ["--openai-api-base", "{openaiBaseUrl}", "--model", "openai/{model}"],
      env: { OPENAI_API_KEY: "{apiKey}" },
      replacesModelArgs: true,
    },
    capabilities: NO_TOOLS,
  },
};

export const BUILTIN_PRESET_NAMES = Object.keys(BUILTIN_PRESETS);
