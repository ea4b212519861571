/**
 * Typed errors of the runtime. Each has a stable `code` (tests and the conformance driver assert
 * on codes, never on message text) and a message that names what went wrong, where, and the
 * spec section that requires it.
 */
import type { Diagnostic } from "../validator/diagnostic.js";

export class PulseError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

export type InvariantName =
  | "phase_atomicity"
  | "feedback_immutability"
  | "append_only_audit"
  | "kappa_routing"
  | "quorum_before_commit"
  | "outcome_grounding"
  | "trace_id_propagation"
  | "feedback_path";

const SECTIONS: Record<InvariantName, string> = {
  phase_atomicity: "§7.1",
  feedback_immutability: "§7.2",
  append_only_audit: "§7.3",
  kappa_routing: "§7.4",
  quorum_before_commit: "§7.5",
  outcome_grounding: "§7.6",
  trace_id_propagation: "§7.7",
  feedback_path: "§3.2, §12 test 2",
};

/** An invariant the manifest declares (or the spec mandates) was about to be broken and was refused. */
export class InvariantViolation extends PulseError {
  readonly section: string;

  constructor(
    readonly invariant: InvariantName,
    readonly loopId: string,
    readonly phaseId: string | null,
    detail: string,
    code = invariant === "feedback_path" ? "PHASE_ORDER_VIOLATION" : "INVARIANT_VIOLATION",
  ) {
    const section = SECTIONS[invariant];
    super(code, `${invariant} (${section}) refused in loop ${loopId}${phaseId ? `, phase ${phaseId}` : ""}: ${detail}`);
    this.section = section;
  }
}

export class ManifestRejectedError extends PulseError {
  constructor(
    readonly file: string,
    readonly diagnostics: Diagnostic[],
  ) {
    const errors = diagnostics.filter((d) => d.severity === "error");
    const first = errors[0];
    super(
      "MANIFEST_INVALID",
      `${file}: the manifest is invalid (${errors.length} error${errors.length === 1 ? "" : "s"})${first ? `; first: ${first.line}:${first.column} ${first.message} [${first.rule}]` : ""}`,
    );
  }
}

export class PhaseTimeoutError extends PulseError {
  constructor(
    readonly phaseId: string,
    readonly timeoutMs: number,
  ) {
    super("PHASE_TIMEOUT", `phase ${phaseId} did not finish within timeout_ms ${timeoutMs} (§5.4)`);
  }
}

export class HandlerError extends PulseError {
  constructor(
    readonly phaseId: string,
    cause: unknown,
  ) {
    super("HANDLER_FAILED", `phase ${phaseId} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

export class PolicyDeniedError extends PulseError {
  constructor(phaseId: string, action: string, reason: string | undefined) {
    super("POLICY_DENIED", `the policy substrate denied act phase ${phaseId} (action ${action})${reason ? `: ${reason}` : ""} (§2, OS-006)`);
  }
}

export class PermissionDeniedError extends PulseError {
  constructor(phaseId: string, agentId: string, operation: string) {
    super("PERMISSION_DENIED", `the auth substrate denied agent ${agentId} the operation ${operation} for act phase ${phaseId} (§9.4)`);
  }
}

export class CircuitOpenError extends PulseError {
  constructor(
    readonly slot: string,
    readonly retryAt: number,
  ) {
    super("CIRCUIT_OPEN", `the ${slot} substrate is unavailable: its circuit is open, calls fail fast until a probe succeeds (§12 test 9)`);
  }
}

export class TokenInvalidError extends PulseError {
  constructor(token: string, where: string, problems: string) {
    super("TOKEN_INVALID", `${where}: the ${token} token does not match schema/tokens/${token}.v0.1.json: ${problems}`);
  }
}

export class NoHandlerError extends PulseError {
  constructor(loopId: string, phaseId: string, kind: string) {
    super("NO_HANDLER", `loop ${loopId} has no handler for phase ${phaseId}: register one with loop.handle("${phaseId}", fn), runtime.handle("${phaseId}", fn) or runtime.handleKind("${kind}", fn)`);
  }
}

export class LoopStoppedError extends PulseError {
  constructor(loopId: string, status: string) {
    super("LOOP_NOT_RUNNABLE", `loop ${loopId} is ${status}: no new iteration can start`);
  }
}

/**
 * The host no longer holds the fleet lease of the iteration's loop and workspace: it starts no
 * further phase and commits nothing more of the iteration, which the journal shows interrupted
 * at its last committed phase, for the lease's new holder to resume (Loop.fence).
 */
export class LeaseLostError extends PulseError {
  constructor(loopId: string, workspace: string, why: string) {
    super("LEASE_LOST", `loop ${loopId} in workspace ${workspace} is no longer this host's (${why}): its iteration stops here, to be resumed by the lease's new holder`);
  }
}

/** Errors that retrying cannot fix: refused by design, not by chance. */
export function isRetryable(error: unknown): boolean {
  return !(
    error instanceof InvariantViolation ||
    error instanceof PolicyDeniedError ||
    error instanceof PermissionDeniedError ||
    error instanceof CircuitOpenError ||
    error instanceof TokenInvalidError ||
    error instanceof NoHandlerError
  );
}
