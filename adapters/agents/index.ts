/**
 * The agent drivers (`pulse/agents`): the CLI driver and its presets, the OpenAI-compatible
 * HTTP driver, the scripted driver, record/replay, and createDriver to pick one by name. The
 * contract they implement is in src/agents.
 */
export * from "../../src/agents/index.js";
export { CliDriver, DEFAULT_AGENT_TIMEOUT_MS, DEFAULT_SILENCE_TIMEOUT_MS, type CliDriverOptions } from "./cli/cli-driver.js";
export { BUILTIN_PRESETS, BUILTIN_PRESET_NAMES } from "./cli/presets.js";
export { presetFlags, type CliPreset, type Endpoint, type EndpointTemplate, type PromptVia } from "./cli/preset.js";
export { loadAgentsConfig, AgentsConfigError, type ConfiguredPreset } from "./cli/preset-config.js";
export { probePreset, findOnPath, type ProbeReport } from "./cli/probe.js";
export { BASE_ENV_ALLOWLIST } from "./cli/env.js";
export { runProcess, type ProcessSpec, type ProcessOutcome } from "./cli/run-process.js";
export { HttpDriver, DEFAULT_SYSTEM_PROMPT, type HttpDriverOptions } from "./http/http-driver.js";
export { chatCompletion, ChatError } from "./http/chat-client.js";
export { TOOL_DEFINITIONS, ToolRunner } from "./http/tools.js";
export { ScriptedDriver } from "./scripted/scripted-driver.js";
export { loadScript, validateScript, ScriptError, type Script, type ScriptStep, type StepOutcome } from "./scripted/script.js";
export { recordingDriver, replayDriver, ReplayError, type RecordedCall, type ReplayOptions } from "./record/record-replay.js";
export { createDriver, availablePresets, DriverSpecError, type DriverSpec } from "./create-driver.js";
