/**
 * What a caller asks of an iteration (IterationRequest) and what it gets back (IterationResult,
 * with a PhaseReport per phase visited and failures as data).
 */
import type { Token } from "../tokens/types.js";
import { InvariantViolation, type InvariantName, type PulseError } from "./errors.js";
import type { IterationStatus } from "./events.js";

export interface IterationRequest {
  /** Workspace (tenant) the iteration runs in; "default" when omitted. */
  workspace?: string;
  /** Input of the entry phase. */
  input?: unknown;
  /** W3C trace id to use (32 lowercase hex); a new one when omitted. */
  traceId?: string;
  /** Start at this phase instead of phases[0] (first iteration) or closure.to_phase (later ones). */
  entry?: string;
  /** Tokens that reached this iteration from outside (a signal, an inner loop's result). */
  tokens?: Token[];
  /** The agent on whose behalf the iteration acts (policy actor, auth agent): else input.agent_id, else the runtime's. */
  agentId?: string;
  /** What started the iteration (a signal, an event), recorded in its iteration.started audit event. */
  cause?: Record<string, unknown>;
}

/** A failure as data: the invariant and spec section too when an invariant refused the phase. */
export interface ErrorReport {
  code: string;
  message: string;
  invariant?: InvariantName;
  section?: string;
}

export function errorReport(error: PulseError): ErrorReport {
  if (error instanceof InvariantViolation) return { code: error.code, message: error.message, invariant: error.invariant, section: error.section };
  return { code: error.code, message: error.message };
}

export interface PhaseReport {
  phase_id: string;
  status: "completed" | "replayed" | "failed" | "skipped";
  signature: string;
  routed_to?: string;
  error?: ErrorReport;
}

/** A committed phase's report; `routed_to` only when it routed (assigned, not spread: every phase makes one). */
export function phaseReport(phase_id: string, status: "completed" | "replayed", signature: string, routedTo: string | undefined): PhaseReport {
  const report: PhaseReport = { phase_id, status, signature };
  if (routedTo) report.routed_to = routedTo;
  return report;
}

export interface IterationResult {
  loop_id: string;
  workspace_id: string;
  trace_id: string;
  iteration: number;
  status: IterationStatus;
  /** Whether the iteration reached closure.from_phase and returned to closure.to_phase. */
  closed: boolean;
  phases: PhaseReport[];
  /** The last completed phase's output. */
  output: unknown;
  error?: ErrorReport;
  audit_events: number;
  /** The latest token of each kind the iteration saw (a nested loop's results reach its parent this way). */
  tokens: Token[];
}
