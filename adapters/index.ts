/**
 * The substrate adapters a host binds (`pulse/adapters`): the in-memory set (the embedded
 * default), the HTTP client and server of docs/substrates-http.md, and wrappers for tests that
 * make substrates fail on command or record their calls. The runtime imports none of them: it
 * depends on the contracts only, and src/embedded.ts binds these defaults.
 */
export * from "./memory/index.js";
export { DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT_MS, httpSubstrate, httpSubstrateFactory, httpSubstrates, type HttpSubstrateOptions } from "./http/client.js";
export { createSubstrateServer, DEFAULT_MAX_BODY_BYTES, type SubstrateCall, type SubstrateServer, type SubstrateServerOptions } from "./http/server.js";
export { withFaults, type FaultInjector, type FaultMode } from "./testing/faults.js";
export { recordCalls, type CallRecorder, type RecordedCall } from "./testing/recorder.js";
export { wrapSubstrates, type Interceptor } from "./testing/wrap.js";
