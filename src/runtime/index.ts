/**
 * The runtime's API, without the embedded default adapters: `createRuntime`, which binds them,
 * is exported by the package entry (src/index.ts, from the composition root src/embedded.ts).
 */
export { Runtime, DEFAULT_QUORUM_THRESHOLD, type RuntimeOptions, type LoadOptions } from "./runtime.js";
export { Loop, type LoopHooks } from "./loop.js";
export type { IterationRequest, IterationResult, PhaseReport, ErrorReport } from "./iteration-result.js";
export type { LoopSnapshot } from "./snapshot.js";
export type { PhaseContext, PhaseHandler } from "./handler-context.js";
export type { IterationContext } from "./iteration-context.js";
export type { PhaseOutcome } from "./phase-runner.js";
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
