/** Hosting loops: cadences, cross-loop signals, nesting (issue 4). `createHost` binds the embedded default adapters. */
export { createHost, openStore } from "../embedded.js";
export type { Store } from "../store/contracts.js";
export { Host, type HostOptions, type HostEvent } from "./host.js";
export type { Escalation, EscalationEnvelope } from "./escalation.js";
export { RateLimitedError } from "./cadence/rate-limit.js";
export { recordingHandler, type RecordedCall } from "./recording-handlers.js";
export { tokenFor } from "./signals.js";
export { EXTENSIONS } from "../connections/envelope.js";
export { DEFAULT_STOP_TIMEOUT_MS, type StopOptions, type StopResult } from "./host.js";
// Transports, so a host can signal loops in other processes (HTTP) from this same entry point.
export { HttpTransport, createSignalServer, type HttpTransportOptions, type SignalServer, type SignalHandler } from "../transports/http.js";
export { InProcessTransport } from "../transports/in-process.js";
export { TransportError, ReceiverUnavailableError, type Transport, type Ack, type SignalReceiver } from "../connections/contracts.js";
