/**
 * User-defined presets from a config file (JSON or YAML): a CLI pulse does not know, or a
 * built-in one with other flags, environment or model endpoint. Mistakes are refused with the
 * file, line and column and the field at fault.
 *
 *   presets:
 *     claude-local:            # claude pointed at a local proxy
 *       extends: claude
 *       endpoint: { baseUrl: "http://127.0.0.1:4000", model: "qwen3-coder" }
 *     my-agent:                # a CLI of one's own
 *       command: my-agent
 *       format: claude         # claude | codex | gemini | opencode | text
 *       args: ["--json"]
 *       prompt: { via: stdin, stdin: [] }
 */
import { readFileSync } from "node:fs";
import { LineCounter, parseDocument, type Document } from "yaml";
import { isEnvName } from "./env.js";
import { STREAM_FORMATS } from "./parsers/index.js";
import { endpointRoot, type CliPreset, type Endpoint } from "./preset.js";
import { BUILTIN_PRESETS } from "./presets.js";

export interface ConfiguredPreset {
  preset: CliPreset;
  endpoint?: Endpoint;
  passEnv?: string[];
  timeoutMs?: number;
  silenceTimeoutMs?: number;
  /** Where it was defined: the built-ins say "built-in". */
  source: string;
}

export class AgentsConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AgentsConfigError";
  }
}

const PRESET_FIELDS = new Set(["extends", "description", "command", "format", "args", "resumeArgs", "prompt", "model", "resume", "maxTurns", "mcp", "env", "rootEnv", "passEnv", "endpointTemplate", "exitCodes", "help", "hiddenFlags", "capabilities", "endpoint", "timeoutMs", "silenceTimeoutMs"]);

export function builtinConfigured(): Record<string, ConfiguredPreset> {
  return Object.fromEntries(Object.entries(BUILTIN_PRESETS).map(([k, preset]) => [k, { preset, source: "built-in" }]));
}

/** The built-in presets plus those of `path` (which may override a built-in by name). */
export function loadAgentsConfig(path: string): Record<string, ConfiguredPreset> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new AgentsConfigError(`${path}: cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: false, lineCounter });
  if (doc.errors.length > 0) {
    const at = lineCounter.linePos(doc.errors[0]!.pos[0]);
    throw new AgentsConfigError(`${path}:${at.line}:${at.col}: ${doc.errors[0]!.message.split("\n")[0]}`);
  }
  const fail = (keys: (string | number)[], message: string): never => {
    const node = doc.getIn(keys, true) as { range?: [number, number, number] } | undefined;
    const at = node?.range ? lineCounter.linePos(node.range[0]) : undefined;
    throw new AgentsConfigError(`${path}${at ? `:${at.line}:${at.col}` : ""}: ${keys.join(".")}: ${message}`);
  };
  return parseConfig(doc, path, fail);
}

function parseConfig(doc: Document, source: string, fail: (keys: (string | number)[], message: string) => never): Record<string, ConfiguredPreset> {
  const root = doc.toJS() as unknown;
  if (!isObject(root)) return fail([], "the file must hold an object with a presets map");
  const unknownTop = Object.keys(root).filter((k) => k !== "presets");
  if (unknownTop.length) fail([unknownTop[0]!], "unknown field (the file holds `presets`)");
  if (!isObject(root.presets)) fail(["presets"], "must map preset names to presets");
  const out = builtinConfigured();
  for (const [name, raw] of Object.entries(root.presets as Record<string, unknown>)) {
    const at = (k?: string) => (k ? ["presets", name, k] : ["presets", name]);
    if (!/^[a-z][a-z0-9._-]*$/.test(name)) fail(at(), "a preset name is lower case letters, digits, '.', '_' or '-'");
    if (!isObject(raw)) fail(at(), "must be an object");
    const r = raw as Record<string, unknown>;
    for (const key of Object.keys(r)) if (!PRESET_FIELDS.has(key)) fail(at(key), `unknown field (the fields are ${[...PRESET_FIELDS].join(", ")})`);
    let base: CliPreset | undefined;
    if (r.extends !== undefined) {
      if (typeof r.extends !== "string" || !out[r.extends]) fail(at("extends"), `must name a preset defined before (${Object.keys(out).join(", ")})`);
      base = out[r.extends as string]!.preset;
    }
    const strings = (k: string) => r[k] === undefined || (Array.isArray(r[k]) && (r[k] as unknown[]).every((x) => typeof x === "string")) || fail(at(k), "must be a list of strings");
    for (const k of ["args", "resumeArgs", "model", "resume", "maxTurns", "mcp", "help", "hiddenFlags", "passEnv"]) strings(k);
    for (const k of ["env", "rootEnv"]) {
      if (r[k] === undefined) continue;
      if (!isObject(r[k])) fail(at(k), "must map variable names to strings");
      for (const [n, v] of Object.entries(r[k] as object)) if (!isEnvName(n) || typeof v !== "string") fail(at(k), `${n}: a variable name with a string value`);
    }
    for (const n of (r.passEnv as string[] | undefined) ?? []) if (!isEnvName(n)) fail(at("passEnv"), `${JSON.stringify(n)} is not a variable name`);
    if (r.command !== undefined && (typeof r.command !== "string" || !r.command)) fail(at("command"), "must be a non-empty string");
    if (r.format !== undefined && !(typeof r.format === "string" && r.format in STREAM_FORMATS)) fail(at("format"), `must be one of ${Object.keys(STREAM_FORMATS).join(", ")}`);
    if (r.prompt !== undefined) {
      const p = r.prompt as Record<string, unknown>;
      if (!isObject(p) || !["arg", "stdin", "file"].includes(p.via as string)) fail(at("prompt"), 'must be { via: arg|stdin|file, arg?: [...], stdin?: [...], file?: [...] }');
      if (!Array.isArray(p[p.via as string])) fail(at("prompt"), `via ${String(p.via)} needs the ${String(p.via)} list (the arguments that carry the prompt, e.g. ["{prompt}"])`);
    }
    for (const k of ["timeoutMs", "silenceTimeoutMs"]) if (r[k] !== undefined && !(typeof r[k] === "number" && (r[k] as number) > 0)) fail(at(k), "must be a number of milliseconds > 0");
    let endpoint: Endpoint | undefined;
    if (r.endpoint !== undefined) {
      const e = r.endpoint as Record<string, unknown>;
      if (!isObject(e) || typeof e.baseUrl !== "string") fail(at("endpoint"), "must be { baseUrl, model?, apiKey?, apiKeyEnv? }");
      try {
        endpointRoot(e.baseUrl as string);
      } catch (err) {
        fail(at("endpoint"), (err as Error).message);
      }
      for (const k of ["model", "apiKey", "apiKeyEnv"]) if (e[k] !== undefined && typeof e[k] !== "string") fail(at("endpoint"), `${k} must be a string`);
      endpoint = e as unknown as Endpoint;
    }
    const preset = { ...(base ?? {}), name, description: (r.description as string | undefined) ?? (base ? `${base.description}, configured` : `${name} (from ${source})`) } as CliPreset;
    for (const k of ["command", "format", "args", "resumeArgs", "prompt", "model", "resume", "maxTurns", "mcp", "env", "rootEnv", "exitCodes", "help", "hiddenFlags"] as const) if (r[k] !== undefined) (preset as unknown as Record<string, unknown>)[k] = r[k];
    if (r.endpointTemplate !== undefined) preset.endpoint = r.endpointTemplate as CliPreset["endpoint"];
    if (r.passEnv !== undefined && !base) preset.passEnv = r.passEnv as string[];
    preset.capabilities = { ...(base?.capabilities ?? { toolCalls: "text", resume: Boolean(preset.resume), usage: preset.format !== "text", costUsd: false, maxTurns: Boolean(preset.maxTurns) }), ...(r.capabilities as object | undefined) };
    for (const k of ["command", "format", "args", "prompt"] as const) if (preset[k] === undefined) fail(at(), `needs ${k} (or extends: a preset that has it)`);
    const configured: ConfiguredPreset = { preset, source };
    if (endpoint) configured.endpoint = endpoint;
    if (r.passEnv !== undefined && base) configured.passEnv = r.passEnv as string[];
    if (r.timeoutMs !== undefined) configured.timeoutMs = r.timeoutMs as number;
    if (r.silenceTimeoutMs !== undefined) configured.silenceTimeoutMs = r.silenceTimeoutMs as number;
    out[name] = configured;
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
