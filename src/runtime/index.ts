/** The runtime's public API. */
export { createRuntime, Runtime, DEFAULT_QUORUM_THRESHOLD, type RuntimeOptions, type LoadOptions } from "./runtime.js";
export { Loop, type IterationRequest, type IterationResult, type PhaseReport, type ErrorReport, type LoopHooks, type LoopSnapshot } from "./loop.js";
export type { PhaseContext, PhaseHandler, IterationContext, PhaseOutcome } from "./phase-runner.js";
export type { RuntimeEvent, IterationStatus, CircuitState, Listener } from "./events.js";
export type { LoopStatus } from "./machine.js";
export type { LoopTelemetry, PhaseStats } from "./telemetry.js";
export { systemClock, VirtualClock, type Clock } from "./clock.js";
export {
  PulseError,
  InvariantViolation,
  ManifestRejectedError,
  PhaseTimeoutError,
  HandlerError,
  PolicyDeniedError,
  PermissionDeniedError,
  CircuitOpenError,
  TokenInvalidError,
  NoHandlerError,
  LoopStoppedError,
} from "./errors.js";
export { canonicalJson, CanonicalJsonError } from "../json/canonical-json.js";
export { initSignatures, blake3Hex, phaseSignature, signatureOf } from "./signature.js";
export { newTraceId, isTraceId, formatTraceparent, parseTraceparent } from "./trace.js";
