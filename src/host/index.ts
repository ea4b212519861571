/** Hosting loops: cadences, cross-loop signals, nesting (issue 4). */
export { createHost, Host, type HostOptions, type HostEvent } from "./host.js";
export type { Escalation, EscalationEnvelope } from "./escalation.js";
export { RateLimitedError } from "./cadence/rate-limit.js";
export { recordingHandler, type RecordedCall } from "./recording-handlers.js";
export { tokenFor } from "./signals.js";
export { EXTENSIONS } from "../connections/envelope.js";
