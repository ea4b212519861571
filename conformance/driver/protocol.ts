/**
 * The driver protocol: how pulse-conform talks to a runtime under test, in any language.
 * JSON-RPC 2.0, one message per line on the adapter's stdin/stdout (or the same bodies POSTed to
 * a running adapter). docs/conformance/driver-protocol.md is the normative description and
 * schema/conformance/driver/*.json the schemas; this file is the same contract as types.
 */

export const PROTOCOL_VERSION = "1";

/**
 * What a phase handler does, declared by the harness so that any runtime can play it: the
 * adapter registers a handler per phase id that, on each invocation, waits `delay_ms` on the
 * runtime's clock, makes `calls` through the runtime's bound substrates (so the harness sees them
 * arrive with the iteration's trace and workspace), fails its first `fail_times` invocations, and
 * returns `outputs[n]` for its n-th invocation in the workspace (the last one repeating), or `output`.
 * Strings "$input" and "$input.<field>" in calls and outputs are replaced by the phase's input
 * (or that field of it); "$trace" by the iteration's trace id; "$invocation" by the 1-based
 * invocation number (also inside longer strings: "node-$invocation").
 */
export interface PhaseScript {
  output?: unknown;
  outputs?: unknown[];
  calls?: { slot: "memory" | "policy" | "audit" | "auth" | "time"; operation: string; args: unknown; after_delay?: boolean }[];
  delay_ms?: number;
  fail_times?: number;
}

export interface HelloParams {
  protocol_version: string;
}
export interface HelloResult {
  protocol_version: string;
  runtime: { name: string; version: string; language: string; digest?: string };
  capabilities: {
    /** "virtual": the runtime's clock only moves on clock.advance. */
    clock: "virtual" | "real";
    /** "rebind": substrates can be bound to the harness's URL; "fault-injection": fault.* and calls.read instead. */
    substrates: ("rebind" | "fault-injection")[];
    /** Named mutants the adapter can switch on (selftest only). */
    mutants?: string[];
  };
}

export interface ConfigureParams {
  /** Base URL of the harness's recording substrate (HTTP substrate protocol); null: the runtime's own substrates. */
  substrate_url: string | null;
  clock: "virtual" | "real";
  /** Circuit breaker settings the test relies on (a runtime may have its own and say so in hello). */
  circuit?: { failure_threshold: number; cooldown_ms: number };
  mutant?: string;
}

export interface ManifestLoadParams {
  manifest: Record<string, unknown>;
  /** Phase scripts by phase id. Phases without one get a script with an empty output. */
  scripts?: Record<string, PhaseScript>;
}
export interface ManifestLoadResult {
  loop_id: string;
}

export interface IterationRunParams {
  loop_id: string;
  workspace: string;
  trace_id?: string;
  input?: unknown;
}
export interface PhaseReportWire {
  phase_id: string;
  status: "completed" | "failed" | "skipped";
  output?: unknown;
  signature?: string;
  replayed?: boolean;
  error?: WireError;
}
export interface IterationRunResult {
  trace_id: string;
  status: string;
  closed: boolean;
  phases: PhaseReportWire[];
  error?: WireError;
}

export interface PhaseInvokeParams {
  loop_id: string;
  workspace: string;
  trace_id: string;
  phase_id: string;
  input?: unknown;
}
export interface PhaseInvokeResult {
  status: "completed" | "failed";
  output?: unknown;
  signature?: string;
  replayed?: boolean;
  error?: WireError;
}

export interface ClockAdvanceParams {
  ms: number;
}
export interface ClockAdvanceResult {
  now: number;
}

export interface StatusGetParams {
  loop_id: string;
}
export interface StatusGetResult {
  status: string;
  circuits: Record<string, "closed" | "open" | "half_open">;
}

/** Substrate calls as the runtime's own substrates saw them (evidence class driver-fault-injection). */
export interface ObservedCall {
  slot: string;
  operation: string;
  args: unknown;
  context: { trace_id?: string; workspace_id?: string; tx_id?: string };
  /** Clock time (ms) of the call. */
  at: number;
  error?: string;
}
export interface FaultInjectParams {
  slot: string;
  mode: "unavailable";
}

export interface WireError {
  code: string;
  message: string;
  data?: unknown;
}

/** Stable error codes (JSON-RPC error.data.code, or error.code of a failed phase/iteration). */
export const ERROR_CODES = [
  "MANIFEST_INVALID",
  "PHASE_ORDER_VIOLATION",
  "INVARIANT_VIOLATION",
  "CIRCUIT_OPEN",
  "SUBSTRATE_UNAVAILABLE",
  "NOT_FOUND",
  "CONFLICT",
  "UNSUPPORTED",
  "BAD_PARAMS",
] as const;

export interface Methods {
  hello: [HelloParams, HelloResult];
  configure: [ConfigureParams, Record<string, never>];
  "manifest.load": [ManifestLoadParams, ManifestLoadResult];
  "iteration.run": [IterationRunParams, IterationRunResult];
  "phase.invoke": [PhaseInvokeParams, PhaseInvokeResult];
  "clock.advance": [ClockAdvanceParams, ClockAdvanceResult];
  "status.get": [StatusGetParams, StatusGetResult];
  "fault.inject": [FaultInjectParams, Record<string, never>];
  "fault.heal": [{ slot: string }, Record<string, never>];
  "calls.read": [{ since?: number }, { calls: ObservedCall[]; next: number }];
  shutdown: [Record<string, never>, Record<string, never>];
}
export type Method = keyof Methods;
export const METHODS = ["hello", "configure", "manifest.load", "iteration.run", "phase.invoke", "clock.advance", "status.get", "fault.inject", "fault.heal", "calls.read", "shutdown"] as const satisfies readonly Method[];

/** JSON-RPC error codes used by adapters: -32700…-32600 as JSON-RPC defines, -32000 for runtime errors (code in data). */
export const RPC = { parseError: -32700, invalidRequest: -32600, methodNotFound: -32601, invalidParams: -32602, runtimeError: -32000 } as const;
