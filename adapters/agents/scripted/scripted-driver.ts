/**
 * The scripted driver, for tests and demos: answers each call with the first unused step of its
 * script that matches the call's loop, phase and iteration, doing the step's file effects, shell
 * commands and commit for real in the workspace, so a loop's git evidence is real too.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { randomUUID } from "node:crypto";
import type { AgentDriver, AgentEvent, AgentRequest, AgentResult, RunOptions, ToolCall } from "../../../src/agents/contract.js";
import { commit, git } from "../../../src/coding/git.js";
import { Workspace } from "../http/workspace.js";
import { buildEnv } from "../cli/env.js";
import { runProcess } from "../cli/run-process.js";
import { validateScript, type Script, type ScriptStep } from "./script.js";

export interface ScriptedDriverOptions {
  /**
   * The environment shell steps take their allowlisted names from (PATH, HOME, locale…), as the
   * CLI drivers do: never the whole of pulse's, which holds tokens and keys.
   */
  parentEnv?: Readonly<Record<string, string | undefined>>;
  /** Wall-clock limit of one shell step (default 60 s); its whole process group is killed after it. */
  shellTimeoutMs?: number;
}

export class ScriptedDriver implements AgentDriver {
  readonly name = "scripted";
  readonly capabilities = { toolCalls: "native", resume: true, usage: true, costUsd: true, maxTurns: false } as const;
  private readonly script: Script;
  private readonly used = new Set<number>();
  private last: ScriptStep | undefined;
  /** Every call, in order, for tests to assert on. */
  readonly calls: AgentRequest[] = [];

  constructor(
    script: Script,
    private readonly options: ScriptedDriverOptions = {},
  ) {
    this.script = validateScript(script);
  }

  async run(request: AgentRequest, options: RunOptions = {}): Promise<AgentResult> {
    const started = performance.now();
    this.calls.push(request);
    const emit = (e: AgentEvent) => options.onEvent?.(e);
    const base = (status: AgentResult["status"], extra: Partial<AgentResult> = {}): AgentResult => ({ status, text: "", transcript: "", toolCalls: [], durationMs: performance.now() - started, warnings: [], ...extra });

    const index = this.script.steps.findIndex((s, i) => !this.used.has(i) && matches(s, request));
    let step: ScriptStep | undefined;
    if (index >= 0) {
      this.used.add(index);
      step = this.script.steps[index];
    } else if (this.script.mode === "repeat-last" && this.last) {
      step = this.last;
    }
    if (!step) {
      const where = [request.loopId && `loop ${request.loopId}`, request.phaseId && `phase ${request.phaseId}`, request.iteration !== undefined && `iteration ${request.iteration}`].filter(Boolean).join(", ");
      return base("error", { error: { kind: "process", message: `the script has no step left for this call${where ? ` (${where})` : ""}: add one, or set mode "repeat-last"` } });
    }
    this.last = step;

    const sessionId = step.sessionId ?? request.resumeSessionId ?? randomUUID();
    emit({ type: "session", sessionId, ...(step.model ? { model: step.model } : {}) });
    if (step.delayMs) {
      const stopped = await sleep(step.delayMs, options.signal);
      if (stopped) return base("aborted", { sessionId, error: { kind: "process", message: "stopped by the caller" } });
    }

    switch (step.outcome) {
      case "hang": {
        // Like an agent that never answers: only the caller's signal or the request's timeout ends it.
        const stopped = await sleep(request.timeoutMs ?? 2 ** 31 - 1, options.signal);
        return stopped ? base("aborted", { sessionId, error: { kind: "process", message: "stopped by the caller" } }) : base("timeout", { sessionId, error: { kind: "process", message: `no result after ${request.timeoutMs} ms (wall-clock limit)` } });
      }
      case "timeout":
        return base("timeout", { sessionId, error: { kind: "process", message: "the agent timed out (scripted)" } });
      case "rate_limit": {
        const message = step.error ?? "rate limited (scripted)";
        emit({ type: "error", kind: "rate_limit", message, ...(step.retryAfterMs !== undefined ? { retryAfterMs: step.retryAfterMs } : {}) });
        return base("rate_limited", { sessionId, error: { kind: "rate_limit", message }, ...(step.retryAfterMs !== undefined ? { retryAfterMs: step.retryAfterMs } : {}) });
      }
    }

    try {
      await applyEffects(step, request.cwd, { parentEnv: this.options.parentEnv ?? process.env, timeoutMs: this.options.shellTimeoutMs ?? 60_000, ...(options.signal ? { signal: options.signal } : {}), ...(options.onSpawn ? { onSpawn: options.onSpawn } : {}), ...(options.marker ? { marker: options.marker } : {}) });
    } catch (e) {
      return base("error", { sessionId, error: { kind: "process", message: (e as Error).message } });
    }
    if (step.outcome === "crash") return base("error", { sessionId, exit: { code: 1, signal: null }, error: { kind: "process", message: step.error ?? "the agent crashed (scripted)" } });

    const toolCalls: ToolCall[] = (step.toolCalls ?? []).map((c, i) => ({ id: `scripted_${i}`, name: c.name, arguments: fromPrompt(c.arguments ?? {}, request.prompt) }));
    if (step.text) emit({ type: "text", text: step.text });
    for (const call of toolCalls) emit({ type: "tool_call", call });
    if (step.usage) emit(step.costUsd !== undefined ? { type: "usage", usage: step.usage, costUsd: step.costUsd } : { type: "usage", usage: step.usage });
    const result = base(step.outcome === "max_turns" ? "max_turns" : "ok", { text: step.text ?? "", transcript: step.text ?? "", toolCalls, sessionId });
    if (step.usage) result.usage = step.usage;
    if (step.costUsd !== undefined) result.costUsd = step.costUsd;
    if (step.model) result.model = step.model;
    return result;
  }
}

/**
 * A string argument `{{prompt:REGEX}}` becomes the first match of REGEX in the prompt: a scripted
 * agent echoes what it was told (the pending replan event id), as a real one would.
 */
function fromPrompt(args: Record<string, unknown>, prompt: string): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args).map(([k, v]) => {
      const m = typeof v === "string" ? /^\{\{prompt:(.+)\}\}$/s.exec(v) : null;
      return [k, m ? (new RegExp(m[1]!).exec(prompt)?.[0] ?? "") : v];
    }),
  );
}

function matches(step: ScriptStep, r: AgentRequest): boolean {
  const m = step.match;
  if (!m) return true;
  return (m.loop === undefined || m.loop === r.loopId) && (m.phase === undefined || m.phase === r.phaseId) && (m.iteration === undefined || m.iteration === r.iteration);
}

interface ShellContext {
  parentEnv: Readonly<Record<string, string | undefined>>;
  timeoutMs: number;
  signal?: AbortSignal;
  onSpawn?: RunOptions["onSpawn"];
  marker?: string;
}

async function applyEffects(step: ScriptStep, cwd: string, shell: ShellContext): Promise<void> {
  const ws = new Workspace(cwd);
  for (const [path, content] of Object.entries(step.files ?? {})) {
    const abs = ws.resolve(path);
    if (content === null) rmSync(abs, { force: true });
    else {
      mkdirSync(dirname(abs), { recursive: true });
      writeFileSync(abs, content);
    }
  }
  for (const command of step.shell ?? []) await run(command, cwd, shell);
  if (step.commit !== undefined) {
    await git(cwd, ["add", "-A"]);
    await commit(cwd, step.commit, { allowEmpty: true });
  }
}

/** A shell step as an agent's process: closed stdin, its own process group, a timeout, the allowlisted environment. */
async function run(command: string, cwd: string, shell: ShellContext): Promise<void> {
  const env = buildEnv({ parent: shell.parentEnv, passThrough: [], set: {}, cwd });
  const out = await runProcess({ command: "bash", args: ["-c", command], cwd, env, timeoutMs: shell.timeoutMs, killGraceMs: 1_000 }, { ...(shell.signal ? { signal: shell.signal } : {}), ...(shell.onSpawn ? { onSpawn: shell.onSpawn } : {}), ...(shell.marker ? { marker: shell.marker } : {}) });
  if (out.reason === "exited" && out.code === 0) return;
  const why = out.reason === "timeout" ? `timed out after ${shell.timeoutMs} ms (its process group was killed)` : out.reason === "aborted" ? "stopped by the caller" : out.reason === "spawn_error" ? (out.error ?? "could not start bash") : (out.stderr.trim().split("\n").at(-1) || `exit ${out.code ?? out.signal}`);
  throw new Error(`shell command failed: ${command}: ${why}`);
}

/** Resolves true when aborted first. */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(true);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(false);
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      resolve(true);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
