/**
 * Building a driver by name, as a loop's `--driver` option names it: a CLI preset (built-in or
 * from a config file), `openai` (the HTTP driver) or `scripted`.
 */
import type { AgentDriver } from "../../src/agents/contract.js";
import { CliDriver, type CliDriverOptions } from "./cli/cli-driver.js";
import { builtinConfigured, loadAgentsConfig, type ConfiguredPreset } from "./cli/preset-config.js";
import type { Endpoint } from "./cli/preset.js";
import { HttpDriver, type HttpDriverOptions } from "./http/http-driver.js";
import { loadScript, type Script } from "./scripted/script.js";
import { ScriptedDriver } from "./scripted/scripted-driver.js";

export interface DriverSpec {
  /** A preset name, `openai` or `scripted`. */
  name: string;
  /** A config file of user presets (agents.yaml); else PULSE_AGENTS_CONFIG when set. */
  configPath?: string;
  /** Overrides the preset's endpoint; required for `openai` (baseUrl and model). */
  endpoint?: Endpoint;
  /** For `scripted`: a script, or the path of its JSON/YAML file. */
  script?: Script | string;
  cli?: CliDriverOptions;
  http?: Partial<HttpDriverOptions>;
  env?: Readonly<Record<string, string | undefined>>;
}

export class DriverSpecError extends Error {}

export function availablePresets(configPath?: string, env: Readonly<Record<string, string | undefined>> = process.env): Record<string, ConfiguredPreset> {
  const path = configPath ?? env.PULSE_AGENTS_CONFIG;
  return path ? loadAgentsConfig(path) : builtinConfigured();
}

export function createDriver(spec: DriverSpec): AgentDriver {
  const env = spec.env ?? process.env;
  if (spec.name === "scripted") {
    if (!spec.script) throw new DriverSpecError("the scripted driver needs a script (--script FILE)");
    return new ScriptedDriver(typeof spec.script === "string" ? loadScript(spec.script) : spec.script, { parentEnv: env });
  }
  if (spec.name === "openai") {
    const baseUrl = spec.endpoint?.baseUrl ?? env.OPENAI_BASE_URL;
    const model = spec.endpoint?.model ?? env.OPENAI_MODEL;
    if (!baseUrl || !model) throw new DriverSpecError("the openai driver needs an endpoint: baseUrl and model (or OPENAI_BASE_URL and OPENAI_MODEL)");
    const apiKey = spec.endpoint?.apiKey ?? (spec.endpoint?.apiKeyEnv ? env[spec.endpoint.apiKeyEnv] : env.OPENAI_API_KEY);
    return new HttpDriver({ baseUrl, model, ...(apiKey ? { apiKey } : {}), parentEnv: env, ...spec.http });
  }
  const presets = availablePresets(spec.configPath, env);
  const configured = presets[spec.name];
  if (!configured) throw new DriverSpecError(`unknown driver ${JSON.stringify(spec.name)}: the drivers are ${[...Object.keys(presets), "openai", "scripted"].join(", ")}`);
  const endpoint = spec.endpoint ?? configured.endpoint;
  return new CliDriver(configured.preset, {
    parentEnv: env,
    ...(endpoint ? { endpoint } : {}),
    ...(configured.passEnv ? { passEnv: configured.passEnv } : {}),
    ...(configured.timeoutMs ? { timeoutMs: configured.timeoutMs } : {}),
    ...(configured.silenceTimeoutMs ? { silenceTimeoutMs: configured.silenceTimeoutMs } : {}),
    ...spec.cli,
  });
}
