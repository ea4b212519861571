/**
 * What a CLI preset declares: how to call one agent CLI headless, how to give it the prompt,
 * resume a session, pick a model, point it at another endpoint, and which stream format it
 * prints. Presets are data, so users add their own from a config file (preset-config.ts).
 *
 * Templates: `{prompt}`, `{promptFile}`, `{cwd}`, `{model}`, `{sessionId}`, `{maxTurns}`,
 * `{mcpConfig}`, `{hookSettings}`, `{home}` (the run's private home), `{baseUrl}` (endpoint root, no `/v1`),
 * `{openaiBaseUrl}` (root + `/v1`), `{apiKey}`. Other braces are left alone.
 */
import type { AgentCapabilities, AgentStatus } from "../../../src/agents/contract.js";
import type { StreamFormat } from "./parsers/index.js";
import type { HookFormat } from "../../../src/coding/guidance/hook-settings.js";

export type PromptVia = "arg" | "stdin" | "file";

export interface EndpointTemplate {
  /** Environment set when an endpoint is given; an entry whose template names an unknown value is left out. */
  env?: Record<string, string>;
  args?: string[];
  /** Files written under the run's private home (path relative to it). */
  files?: { path: string; content: string }[];
  /** The endpoint's args carry the model themselves: the preset's `model` args are not added. */
  replacesModelArgs?: boolean;
}

export interface CliPreset {
  name: string;
  description: string;
  /** Executable, found on PATH (or given as a path). */
  command: string;
  format: StreamFormat;
  /** Arguments of every run, before the rest. */
  args: string[];
  /** Arguments instead of `args` when resuming (codex resumes through a subcommand). */
  resumeArgs?: string[];
  /** How the prompt goes in: the default way and the templates of each way the CLI accepts. */
  prompt: { via: PromptVia; arg?: string[]; stdin?: string[]; file?: string[] };
  model?: string[];
  resume?: string[];
  maxTurns?: string[];
  /** Hands MCP servers to the agent (`{mcpConfig}` is a JSON file the driver writes). */
  mcp?: string[];
  /**
   * Installs pulse's guidance hooks for one run (`{hookSettings}` is a file the driver writes in
   * the CLI's own format): a CLI without them is steered at iteration boundaries only.
   */
  hooks?: { format: HookFormat; args?: string[]; env?: Record<string, string> };
  /** Fixed environment of every run. */
  env?: Record<string, string>;
  /** Environment added when pulse runs as root (claude refuses to skip permissions as root otherwise). */
  rootEnv?: Record<string, string>;
  /** Variables taken from pulse's own environment when set (API keys, the CLI's config dir). */
  passEnv?: string[];
  endpoint?: EndpointTemplate;
  /** Exit codes with a meaning of their own (gemini: 53 = turn limit). */
  exitCodes?: Record<string, AgentStatus>;
  /** Arguments that print the help listing the flags above (`--help` by default). */
  help?: string[];
  /** Flags that work but the CLI's help does not list (claude's --max-turns): not drift. */
  hiddenFlags?: string[];
  capabilities: AgentCapabilities;
}

/** The endpoint a preset's CLI is pointed at: a proxy, a local model, a mock server. */
export interface Endpoint {
  /** The server's root URL, e.g. `http://127.0.0.1:11434` (a trailing `/v1` is taken off). */
  baseUrl: string;
  model?: string;
  apiKey?: string;
  /** Read the key from this variable of pulse's environment. */
  apiKeyEnv?: string;
}

const PLACEHOLDER = /\{([A-Za-z]+)\}/g;

/**
 * Fills a template. Returns undefined when it names a value that is not known, so optional
 * parts (a model nobody chose) drop out whole instead of leaving `{model}` in a command line.
 */
export function fill(template: string, values: Readonly<Record<string, string | undefined>>, known: ReadonlySet<string> = TEMPLATE_NAMES): string | undefined {
  let missing = false;
  const out = template.replace(PLACEHOLDER, (whole, name: string) => {
    if (!known.has(name)) return whole;
    const v = values[name];
    if (v === undefined) missing = true;
    return v ?? "";
  });
  return missing ? undefined : out;
}

/** Fills every element, or undefined when any of them names an unknown value. */
export function fillAll(templates: readonly string[] | undefined, values: Readonly<Record<string, string | undefined>>): string[] | undefined {
  if (!templates) return undefined;
  const out: string[] = [];
  for (const t of templates) {
    const v = fill(t, values);
    if (v === undefined) return undefined;
    out.push(v);
  }
  return out;
}

export const TEMPLATE_NAMES: ReadonlySet<string> = new Set(["prompt", "promptFile", "cwd", "model", "sessionId", "maxTurns", "mcpConfig", "hookSettings", "hookHome", "cliHome", "home", "baseUrl", "openaiBaseUrl", "apiKey"]);

/** Every flag a preset uses: what `pulse drivers` looks for in the CLI's `--help`. */
export function presetFlags(preset: CliPreset): string[] {
  const all = [
    ...preset.args,
    ...(preset.resumeArgs ?? []),
    ...(preset.prompt.arg ?? []),
    ...(preset.prompt.stdin ?? []),
    ...(preset.prompt.file ?? []),
    ...(preset.model ?? []),
    ...(preset.resume ?? []),
    ...(preset.maxTurns ?? []),
    ...(preset.mcp ?? []),
    ...(preset.hooks?.args ?? []),
    ...(preset.endpoint?.args ?? []),
  ];
  const hidden = new Set(preset.hiddenFlags ?? []);
  return [...new Set(all.filter((a) => /^--?[A-Za-z]/.test(a)).map((a) => a.split("=")[0]!))].filter((f) => !hidden.has(f));
}

/** Normalises an endpoint's base URL: `http://h:1/v1/` → `http://h:1`. Throws on a URL that is not http(s). */
export function endpointRoot(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new Error(`endpoint baseUrl ${JSON.stringify(baseUrl)} is not a URL (e.g. http://127.0.0.1:11434)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`endpoint baseUrl ${JSON.stringify(baseUrl)} must be http:// or https://`);
  return url.href.replace(/\/+$/, "").replace(/\/v1$/, "");
}
