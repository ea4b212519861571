/**
 * The harness's side of the driver protocol: one Driver abstraction, three transports (a
 * subprocess over stdio, a running adapter over HTTP, our runtime in process), as the MCP SDK
 * has one Transport and several implementations. Tests call `driver.call(method, params)`.
 */
import type { Method, Methods } from "./protocol.js";

/** The runtime answered with a JSON-RPC error: a normal outcome tests assert on (by code). */
export class RuntimeError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "RuntimeError";
  }
}

/** The adapter broke the protocol (crashed, hung, wrote garbage, answered the wrong id): exit 3. */
export class DriverFailure extends Error {
  /**
   * The adapter's last stderr lines, kept when the driver that saw them is already closed (a
   * failure while starting): often the only explanation, e.g. "can't open file".
   */
  stderrTail?: string[];
  /** Where the run was when it failed: the test and its step (set by the runner). */
  during?: string;

  constructor(message: string) {
    super(message);
    this.name = "DriverFailure";
  }
}

/** Checks each message both ways when --validate-protocol is on (see protocol-check.ts). */
export type MessageCheck = (direction: "request" | "response", method: string, message: unknown) => void;

export interface Driver {
  call<M extends Method>(method: M, params: Methods[M][0], options?: { timeoutMs?: number }): Promise<Methods[M][1]>;
  /** The last lines the adapter wrote to stderr (evidence for failures). */
  stderrTail(): string[];
  close(): Promise<void>;
  /** A description for reports and repro lines: "in-process", "--driver '<cmd>'", "--attach <url>". */
  readonly describe: string;
}

export const DEFAULT_CALL_TIMEOUT_MS = 15_000;
/**
 * Real time one test may take before the run stops as a driver failure: three times the longest
 * loop-time bound of a test (30 s), which a real-clock run spends in real time.
 */
export const DEFAULT_TEST_TIMEOUT_MS = 90_000;
