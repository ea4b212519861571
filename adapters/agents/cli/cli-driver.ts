/**
 * The CLI driver: runs any agent CLI from a preset, with the process hygiene of
 * run-process.ts, parses its stream into AgentEvents and an AgentResult. An exit code of 0 proves
 * nothing for these CLIs: a JSON-streaming agent that ends without its final event has failed.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { AgentDriver, AgentRequest, AgentResult, AgentStatus, RunOptions } from "../../../src/agents/contract.js";
import { buildEnv, isEnvName } from "./env.js";
import { STREAM_FORMATS, StreamState } from "./parsers/index.js";
import { looksRateLimited } from "./parsers/stream-state.js";
import { endpointRoot, fill, fillAll, type CliPreset, type Endpoint, type PromptVia } from "./preset.js";
import { runProcess, type ProcessOutcome } from "./run-process.js";
import { installHooks } from "./hook-install.js";

/** One word for `sh -c`, whatever it holds. */
function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

export interface CliDriverOptions {
  /** Point the CLI at another model endpoint (a proxy, a local model, a mock). */
  endpoint?: Endpoint;
  /** The executable to run instead of the preset's command (a path, or another name on PATH). */
  command?: string;
  /** Extra names passed through from pulse's environment. */
  passEnv?: string[];
  /** Variables set for every run. */
  env?: Record<string, string>;
  /** Arguments added before the prompt. */
  extraArgs?: string[];
  /** Override the preset's way of giving the prompt. */
  promptVia?: PromptVia;
  /**
   * Give the agent a private HOME and XDG folders even without an endpoint (always with one), so
   * the user's own CLI settings and logins are not used. One per driver, kept across its runs so
   * sessions can be resumed; removed by close(). `homeDir` names a folder to use (and keep) instead.
   */
  isolateHome?: boolean;
  homeDir?: string;
  /** Defaults of each call: wall clock 15 min, silence 5 min. */
  timeoutMs?: number;
  silenceTimeoutMs?: number;
  killGraceMs?: number;
  pipeGraceMs?: number;
  maxOutputBytes?: number;
  /** After its final event, how long the agent may take to exit before it is stopped (10 s). */
  lingerMs?: number;
  /** pulse's environment (tests pass their own). */
  parentEnv?: Readonly<Record<string, string | undefined>>;
  /** MCP servers handed to the agent through the preset's `mcp` flags. */
  mcpServers?: Record<string, unknown>;
  /**
   * The guidance hook command (`pulse guidance hook`): installed, for each run only, through the
   * preset's `hooks` flags, called with the event and `-C <cwd>`. A preset without hooks warns.
   */
  guidanceHook?: { command: string; args: string[] };
}

export const DEFAULT_AGENT_TIMEOUT_MS = 15 * 60_000;
export const DEFAULT_SILENCE_TIMEOUT_MS = 5 * 60_000;
export const DEFAULT_LINGER_MS = 10_000;
/** Prompts longer than this go by stdin or file where the CLI allows: one argument may not exceed 128 KiB on Linux. */
const MAX_ARG_PROMPT = 100_000;
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

/** Private homes of drivers not closed yet: a program that never calls close() still leaves none behind. */
const openHomes = new Set<string>();
process.once("exit", () => {
  for (const dir of openHomes) rmSync(dir, { recursive: true, force: true });
});

export class CliDriver implements AgentDriver {
  readonly name: string;
  readonly capabilities;

  private privateHome: string | undefined;
  /** A CLI without hooks is said to be steered at boundaries only once per driver, not every turn. */
  private hooklessWarned = false;

  constructor(
    readonly preset: CliPreset,
    private readonly options: CliDriverOptions = {},
  ) {
    this.name = preset.name;
    this.capabilities = { ...preset.capabilities };
    if (options.endpoint) endpointRoot(options.endpoint.baseUrl); // refuse a bad URL now, not at the first call
    for (const name of options.passEnv ?? []) if (!isEnvName(name)) throw new Error(`passEnv: ${JSON.stringify(name)} is not an environment variable name`);
  }

  async run(request: AgentRequest, runOptions: RunOptions = {}): Promise<AgentResult> {
    const started = performance.now();
    const warnings: string[] = [];
    const preset = this.preset;
    const o = this.options;
    const fail = (message: string): AgentResult => ({ status: "error", text: "", transcript: "", toolCalls: [], error: { kind: "process", message }, durationMs: performance.now() - started, warnings });
    try {
      if (!statSync(request.cwd).isDirectory()) return fail(`workspace ${request.cwd} is not a directory`);
    } catch {
      return fail(`workspace ${request.cwd} does not exist`);
    }

    const parentEnv = o.parentEnv ?? process.env;
    const runDir = mkdtempSync(join(tmpdir(), `pulse-agent-${preset.name}-`));
    let hookDir: string | undefined;
    try {
      const privateHome = o.homeDir ?? (o.endpoint || o.isolateHome ? this.home() : undefined);
      if (privateHome) for (const d of ["", ".config", ".local/share", ".cache", ".local/state"]) mkdirSync(join(privateHome, d), { recursive: true });

      const values: Record<string, string | undefined> = { cwd: request.cwd, home: privateHome, maxTurns: request.maxTurns?.toString() };
      if (o.endpoint) {
        const root = endpointRoot(o.endpoint.baseUrl);
        values.baseUrl = root;
        values.openaiBaseUrl = `${root}/v1`;
        values.apiKey = o.endpoint.apiKey ?? (o.endpoint.apiKeyEnv ? parentEnv[o.endpoint.apiKeyEnv] : undefined) ?? "pulse-no-key";
      }
      values.model = request.model ?? o.endpoint?.model;

      // Resume: only a session id that looks like one (a corrupt one would start a fresh session silently or fail oddly).
      let resuming = false;
      if (request.resumeSessionId !== undefined) {
        if (!preset.capabilities.resume) warnings.push(`${preset.name} cannot resume a session: starting a new one`);
        else if (!SESSION_ID.test(request.resumeSessionId)) warnings.push(`session id ${JSON.stringify(request.resumeSessionId.slice(0, 80))} is not valid: starting a new session`);
        else {
          resuming = true;
          values.sessionId = request.resumeSessionId;
        }
      }
      if (request.maxTurns !== undefined && !preset.maxTurns) warnings.push(`${preset.name} has no turn limit flag: maxTurns ${request.maxTurns} is not enforced`);
      // A CLI without MCP flags signals in text, as its preset says; one that could take the tools but was given no server is worth a word.
      if (request.terminalTools?.length && preset.mcp && !o.mcpServers) warnings.push(`${preset.name}: terminal tools need an MCP server (mcpServers); the agent will signal in text`);

      // The prompt: by argument unless too long for one, then stdin or a file where the CLI takes them.
      let via: PromptVia = o.promptVia ?? preset.prompt.via;
      if (via === "arg" && request.prompt.length > MAX_ARG_PROMPT) via = preset.prompt.stdin ? "stdin" : preset.prompt.file ? "file" : "arg";
      const templates = preset.prompt[via];
      if (!templates) return fail(`${preset.name} cannot take the prompt by ${via} (it takes: ${(["arg", "stdin", "file"] as const).filter((v) => preset.prompt[v]).join(", ")})`);
      if (via === "file") {
        values.promptFile = join(runDir, "prompt.md");
        writeFileSync(values.promptFile, request.prompt);
      }
      values.prompt = request.prompt;

      const set: Record<string, string> = { ...preset.env };
      if (typeof process.getuid === "function" && process.getuid() === 0) Object.assign(set, preset.rootEnv);
      if (o.endpoint && preset.endpoint) {
        for (const [name, template] of Object.entries(preset.endpoint.env ?? {})) {
          const v = fill(template, values);
          if (v !== undefined) set[name] = v;
        }
        for (const file of preset.endpoint.files ?? []) {
          const path = join(privateHome!, file.path);
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, fill(file.content, values) ?? fill(file.content, { ...values, model: "default" })!);
        }
      } else if (o.endpoint) {
        warnings.push(`${preset.name} has no endpoint settings: the endpoint ${o.endpoint.baseUrl} is not used`);
      }
      Object.assign(set, o.env, request.env);

      let mcpArgs: string[] = [];
      if (preset.mcp && o.mcpServers) {
        values.mcpConfig = join(runDir, "mcp.json");
        writeFileSync(values.mcpConfig, JSON.stringify({ mcpServers: o.mcpServers }));
        mcpArgs = fillAll(preset.mcp, values) ?? [];
      }

      let hookArgs: string[] = [];
      if (o.guidanceHook && preset.hooks) {
        const hook = o.guidanceHook;
        const installed = installHooks(preset.hooks.format, runDir, (event) => [hook.command, ...hook.args, event, "-C", request.cwd].map(shellQuote).join(" "), privateHome ?? parentEnv.HOME ?? homedir(), parentEnv);
        hookDir = installed.cleanup;
        if (installed.warning) warnings.push(installed.warning);
        Object.assign(values, installed.values);
        hookArgs = fillAll(preset.hooks.args, values) ?? [];
        for (const [name, template] of Object.entries(preset.hooks.env ?? {})) {
          const v = fill(template, values);
          if (v !== undefined) set[name] = v;
        }
      } else if (o.guidanceHook && !this.hooklessWarned) {
        this.hooklessWarned = true;
        warnings.push(`${preset.name} has no hooks pulse installs: a guidance change reaches it at the next iteration, not during its turn`);
      }

      const useEndpointModel = Boolean(o.endpoint && preset.endpoint?.replacesModelArgs);
      const args = [
        ...(fillAll(resuming && preset.resumeArgs ? preset.resumeArgs : preset.args, values) ?? []),
        ...((!useEndpointModel && fillAll(preset.model, values)) || []),
        ...((resuming && !preset.resumeArgs && fillAll(preset.resume, values)) || []),
        ...((request.maxTurns !== undefined && fillAll(preset.maxTurns, values)) || []),
        ...((o.endpoint && fillAll(preset.endpoint?.args, values)) || []),
        ...mcpArgs,
        ...hookArgs,
        ...(o.extraArgs ?? []),
        ...(fillAll(templates, values) ?? []),
      ];

      const env = buildEnv({ parent: parentEnv, passThrough: [...(o.endpoint ? [] : (preset.passEnv ?? [])), ...(o.passEnv ?? [])], set, cwd: request.cwd, ...(privateHome ? { privateHome } : {}) });
      const state = new StreamState((event) => runOptions.onEvent?.(event));
      const parser = STREAM_FORMATS[preset.format](state);
      const stderrLines: string[] = [];
      const outcome = await runProcess(
        {
          command: o.command ?? preset.command,
          args,
          cwd: request.cwd,
          env,
          ...(via === "stdin" ? { stdin: request.prompt } : {}),
          timeoutMs: request.timeoutMs ?? o.timeoutMs ?? DEFAULT_AGENT_TIMEOUT_MS,
          silenceTimeoutMs: request.silenceTimeoutMs ?? o.silenceTimeoutMs ?? DEFAULT_SILENCE_TIMEOUT_MS,
          ...(o.killGraceMs !== undefined ? { killGraceMs: o.killGraceMs } : {}),
          ...(o.pipeGraceMs !== undefined ? { pipeGraceMs: o.pipeGraceMs } : {}),
          ...(o.maxOutputBytes !== undefined ? { maxOutputBytes: o.maxOutputBytes } : {}),
          lingerMs: o.lingerMs ?? DEFAULT_LINGER_MS,
        },
        {
          onStdoutLine: (line) => {
            const before = state.final;
            parser.line(line);
            return before === undefined && state.final !== undefined;
          },
          onStderrLine: (line) => {
            if (stderrLines.length < 200) stderrLines.push(line);
          },
          ...(runOptions.signal ? { signal: runOptions.signal } : {}),
          ...(runOptions.onSpawn ? { onSpawn: runOptions.onSpawn } : {}),
          ...(runOptions.marker ? { marker: runOptions.marker } : {}),
        },
      );
      return this.toResult(outcome, state, stderrLines, warnings, started);
    } finally {
      rmSync(runDir, { recursive: true, force: true });
      if (hookDir) rmSync(hookDir, { recursive: true, force: true });
    }
  }

  /** Removes the driver's private home (sessions kept there can no longer be resumed). */
  close(): void {
    if (this.privateHome) {
      rmSync(this.privateHome, { recursive: true, force: true });
      openHomes.delete(this.privateHome);
    }
    this.privateHome = undefined;
  }

  private home(): string {
    if (!this.privateHome) {
      const dir = mkdtempSync(join(tmpdir(), `pulse-agent-home-${this.preset.name}-`));
      this.privateHome = dir;
      openHomes.add(dir);
    }
    return this.privateHome;
  }

  private toResult(outcome: ProcessOutcome, state: StreamState, stderrLines: string[], warnings: string[], started: number): AgentResult {
    const preset = this.preset;
    const transcript = state.texts.join("\n");
    const result: AgentResult = {
      status: "ok",
      text: state.final?.text ?? state.texts.at(-1) ?? "",
      transcript,
      toolCalls: state.toolCalls,
      durationMs: performance.now() - started,
      exit: { code: outcome.code, signal: outcome.signal },
      stderr: outcome.stderr,
      warnings,
    };
    if (preset.format === "text") result.text = transcript;
    if (state.sessionId) result.sessionId = state.sessionId;
    if (state.model) result.model = state.model;
    if (state.usage) result.usage = state.usage;
    if (state.costUsd !== undefined) result.costUsd = state.costUsd;
    if (outcome.truncated.stdout > 0) warnings.push(`${outcome.truncated.stdout} bytes of the agent's output were dropped from the middle (cap)`);

    const set = (status: AgentStatus, kind: NonNullable<AgentResult["error"]>["kind"], message: string) => {
      result.status = status;
      result.error = { kind, message };
    };
    const stderrTail = stderrLines.filter((l) => l.trim()).slice(-5).join("\n");
    const exitText = outcome.signal ? `was killed by ${outcome.signal}` : `exited with code ${outcome.code}`;
    switch (outcome.reason) {
      case "spawn_error":
        set("error", "process", `could not start ${this.options.command ?? preset.command}: ${outcome.error} (is it installed and on PATH? \`pulse drivers\` lists what is found)`);
        return result;
      case "aborted":
        set("aborted", "process", "stopped by the caller");
        return result;
      case "timeout":
        set("timeout", "process", `no result after ${Math.round(outcome.durationMs / 1000)} s (wall-clock limit): the agent and its processes were stopped`);
        return result;
      case "silence":
        set("timeout", "process", `the agent printed nothing for too long (silence limit) and was stopped after ${Math.round(outcome.durationMs / 1000)} s`);
        return result;
    }
    if (outcome.reason === "lingered") warnings.push(`${preset.name} printed its final event but did not exit: it was stopped`);
    const final = state.final;
    if (final) {
      result.status = final.status;
      if (final.error) result.error = final.error;
      if (final.status === "rate_limited" && state.rateLimit?.retryAfterMs !== undefined) result.retryAfterMs = state.rateLimit.retryAfterMs;
      return result;
    }
    if (state.rateLimit || (outcome.code !== 0 && looksRateLimited(stderrTail))) {
      set("rate_limited", "rate_limit", state.rateLimit?.message ?? stderrTail);
      if (state.rateLimit?.retryAfterMs !== undefined) result.retryAfterMs = state.rateLimit.retryAfterMs;
      return result;
    }
    const mapped = outcome.code !== null ? preset.exitCodes?.[String(outcome.code)] : undefined;
    if (mapped) {
      set(mapped, "process", `${preset.name} ${exitText}${stderrTail ? `: ${stderrTail}` : ""}`);
      return result;
    }
    if (outcome.code !== 0) {
      set("error", "process", `${preset.name} ${exitText}${stderrTail ? `: ${stderrTail}` : ""}`);
      return result;
    }
    if (preset.format !== "text") {
      set("error", "parse", `${preset.name} exited 0 without its final ${preset.format} event${state.unparsed ? ` (${state.unparsed} line(s) of its output were not JSON)` : ""}${stderrTail ? `: ${stderrTail}` : ""}`);
    }
    return result;
  }
}
