/**
 * Cross-loop signalling (§3.5, §10) as the host sees it. A connection's signals are CloudEvents
 * 1.0 envelopes (decisions.md) handed to a Transport, which carries them to the host running the
 * target loop, whose SignalReceiver accepts each one once. Transports (in-process, CloudEvents
 * over HTTP) implement one contract, as the MCP SDK's transports do.
 */
import type { Connection } from "../manifest/types.js";
import type { PulseCloudEvent, Token } from "../tokens/types.js";

/** What the receiving side did with an envelope. Anything but "rejected" acknowledges it. */
export type ReceiveOutcome = "accepted" | "duplicate" | "rejected";

export interface Ack {
  outcome: ReceiveOutcome;
  /** Why it was rejected (no such loop, invalid token, …): rejection is final, never retried. */
  reason?: string;
  /**
   * Receiving side: settles when the iteration the signal started has committed
   * (finished, and with a durable store, written). A broker transport acknowledges the message
   * only then, so a receiver that dies first gets the signal again; it rejects when the iteration
   * could not commit. Absent: the signal is safe once accepted. On a "duplicate", present while
   * the first delivery's iteration is still running (a redelivery waits for the same commit).
   */
  committed?: Promise<void>;
}

/**
 * The host side that takes delivered envelopes (the in-process transport calls it directly).
 * It throws ReceiverUnavailableError when it cannot take signals now (a stopped host): unlike a
 * rejection, that is not final, and the sender retries.
 */
export interface SignalReceiver {
  receive(envelope: PulseCloudEvent): Promise<Ack>;
}

/**
 * Carries one envelope to the host that runs `toLoop`. Resolves with the receiver's Ack; rejects
 * with TransportError when the envelope may not have arrived (unreachable, timeout, 5xx), which
 * at-least-once and exactly-once delivery retry.
 */
export interface Transport {
  send(envelope: PulseCloudEvent, toLoop: string): Promise<Ack>;
  close?(): Promise<void>;
}

export class TransportError extends Error {
  readonly code = "TRANSPORT_FAILED";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TransportError";
  }
}

/** The receiver cannot take signals now (its host is stopped); over HTTP, a 503. Retried. */
export class ReceiverUnavailableError extends Error {
  readonly code = "RECEIVER_UNAVAILABLE";
  constructor(message: string) {
    super(message);
    this.name = "ReceiverUnavailableError";
  }
}

/** The emitting side of one signal, from the phase that produced it. */
export interface Emission {
  connection: Connection;
  token: Token;
  loopId: string;
  phaseId: string;
  workspaceId: string;
  traceId: string;
  /** Span id for the W3C traceparent carried by the envelope. */
  spanId: string;
  /** The emitting phase's signature (§5.6): the envelope id derives from it (decisions.md). */
  signature: string;
  /** Clock time (ms) of the emission. */
  time: number;
}

/** Delivery progress the host audits (with the emitting iteration's trace id) and reports. */
export type DeliveryEvent =
  | { type: "signal.emitted"; emission: Emission; envelope: PulseCloudEvent }
  | { type: "signal.delivered"; emission: Emission; envelope: PulseCloudEvent; outcome: ReceiveOutcome; attempts: number; committed?: Promise<void> }
  | { type: "signal.retrying"; emission: Emission; envelope: PulseCloudEvent; attempt: number; delayMs: number; error: string }
  | { type: "signal.dropped"; emission: Emission; envelope: PulseCloudEvent; reason: "overflow" | "at_most_once_failed" | "rejected" | "stopped"; detail?: string }
  | { type: "signal.overflow"; emission: Emission; envelope: PulseCloudEvent; policy: "block" | "drop_oldest" | "drop_newest" | "escalate"; inflight: number };
