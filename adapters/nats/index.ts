/** Signals over NATS JetStream (`pulse/adapters/nats`): docs/connections.md, "NATS JetStream". */
export { NatsTransport, NatsUnavailableError, type NatsTransportOptions, type SignalHost } from "./transport.js";
export type { ConsumerOptions, NatsReceiveNote } from "./receiver.js";
export { decodeSignal, encodeSignal, UndecodableSignal } from "./codec.js";
export { consumerName, loopSubject, parseNatsUrl, streamName, DEFAULT_SYSTEM, NatsNameError, type NatsAddress } from "./names.js";
