/**
 * The agent driver contract: how a coding loop asks a coding agent (a CLI such as claude or
 * codex, an OpenAI-compatible model, a script) to do one turn of work in a workspace. Loops
 * depend on this file only; the drivers live in adapters/agents and are bound where the
 * program is assembled.
 */

/** How a driver lets the agent end its turn with a structured result instead of text. */
export type ToolCallSupport = "native" | "mcp" | "text" | "none";

export interface AgentCapabilities {
  /** `native`: the driver owns the tools (HTTP driver); `mcp`: tools reach the agent through an MCP config; `text`: only the text grammar. */
  toolCalls: ToolCallSupport;
  /** The driver can continue a previous session by its id. */
  resume: boolean;
  /** The driver reports token usage. */
  usage: boolean;
  /** The driver (or its CLI) reports cost in US dollars. */
  costUsd: boolean;
  /** The driver enforces `maxTurns`. */
  maxTurns: boolean;
}

/** A tool a loop offers the agent to end or steer its turn (`pulse_signal`, `complete_pulse`, …). */
export interface TerminalTool {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export interface AgentRequest {
  /** What the agent is asked to do. */
  prompt: string;
  /** The workspace (usually a git worktree) the agent works in; it must exist. */
  cwd: string;
  /** Which loop, phase and iteration ask: the scripted driver matches its steps on them. */
  loopId?: string;
  phaseId?: string;
  iteration?: number;
  /** A session id from an earlier result, to continue that conversation. */
  resumeSessionId?: string;
  model?: string;
  /** Upper bound on agent turns (model round trips), where the driver supports it. */
  maxTurns?: number;
  /** Wall-clock limit of the whole call. */
  timeoutMs?: number;
  /** The call fails as `timeout` when the agent prints nothing for this long. */
  silenceTimeoutMs?: number;
  /** Tools the loop answers itself (HTTP driver: offered natively; CLI driver: needs an MCP config). */
  terminalTools?: TerminalTool[];
  /** Extra environment variables for this call (names must still pass the driver's allowlist). */
  env?: Record<string, string>;
}

export type AgentErrorKind = "rate_limit" | "permission_denied" | "api" | "process" | "parse";

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type AgentEvent =
  | { type: "session"; sessionId: string; model?: string }
  | { type: "text"; text: string }
  | { type: "tool_call"; call: ToolCall }
  | { type: "tool_result"; id: string; name?: string; ok: boolean; output: string }
  | { type: "usage"; usage: Usage; costUsd?: number }
  | { type: "error"; kind: AgentErrorKind; message: string; retryAfterMs?: number };

/**
 * `ok`: the agent finished its turn. `rate_limited`: the provider refused at the moment; the loop
 * waits (`retryAfterMs`) and this does not count as a failure. `max_turns`/`budget`: a limit the
 * agent itself enforced. `timeout`: wall clock or silence. `error`: it failed. `aborted`: the
 * caller's signal.
 */
export type AgentStatus = "ok" | "rate_limited" | "max_turns" | "budget" | "timeout" | "error" | "aborted";

export interface AgentResult {
  status: AgentStatus;
  /** The agent's final answer (the last assistant message), where there is one. */
  text: string;
  /** Everything the agent said, in order: what a signal resolver reads. */
  transcript: string;
  sessionId?: string;
  model?: string;
  usage?: Usage;
  /** Cost as the agent reported it; absent when it did not (the cost ledger prices it then). */
  costUsd?: number;
  toolCalls: ToolCall[];
  /** Why the status is not `ok`, in words a person can act on. */
  error?: { kind: AgentErrorKind; message: string };
  /** For `rate_limited`: when to try again, if the provider said. */
  retryAfterMs?: number;
  durationMs: number;
  /** CLI drivers: exit code or signal of the process, and its capped stderr. */
  exit?: { code: number | null; signal: string | null };
  stderr?: string;
  /** Capabilities the request asked for that this driver could not honour. */
  warnings: string[];
}

export interface RunOptions {
  /** Aborting it stops the agent at once (its whole process group, for CLI drivers). */
  signal?: AbortSignal;
  /** Every event as it arrives, for live views and recorders. */
  onEvent?: (event: AgentEvent) => void;
  /**
   * Each process the driver starts for the call (the agent, a shell step or tool), as it starts:
   * what a caller records so that a later pulse can find and stop it if this one dies.
   */
  onSpawn?: (info: SpawnInfo) => void;
  /**
   * The run marker set in the environment of every process the driver starts for the call (else
   * one of its own). A caller that records it before the call can find the call's processes by it
   * even if it dies between a spawn and its onSpawn record.
   */
  marker?: string;
}

/** A started agent process: `startTime` (clock ticks since boot) tells it from a later process given the same pid. */
export interface SpawnInfo {
  pid: number;
  /** Its process group (it leads one of its own). */
  pgid: number;
  startTime: number;
  /** The value of PULSE_AGENT_RUN in its environment, inherited by everything it starts. */
  marker: string;
}

export interface AgentDriver {
  /** Short name for logs and the ledger: `claude`, `codex`, `openai`, `scripted`, … */
  readonly name: string;
  readonly capabilities: AgentCapabilities;
  /** Runs one agent call. Never rejects for agent failures: they are a status in the result. */
  run(request: AgentRequest, options?: RunOptions): Promise<AgentResult>;
}

export function addUsage(a: Usage | undefined, b: Usage | undefined): Usage | undefined {
  if (!a) return b ? { ...b } : undefined;
  if (!b) return { ...a };
  const sum: Usage = { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
  const cacheRead = (a.cacheReadTokens ?? 0) + (b.cacheReadTokens ?? 0);
  const cacheWrite = (a.cacheWriteTokens ?? 0) + (b.cacheWriteTokens ?? 0);
  if (cacheRead) sum.cacheReadTokens = cacheRead;
  if (cacheWrite) sum.cacheWriteTokens = cacheWrite;
  return sum;
}

export function totalTokens(usage: Usage | undefined): number {
  return usage ? usage.inputTokens + usage.outputTokens : 0;
}
