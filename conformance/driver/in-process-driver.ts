/**
 * Our runtime in the harness's own process. Messages still go through JSON-RPC encoding, so
 * the in-process run checks exactly what a subprocess adapter would be asked. Every call is
 * bounded like a subprocess's (driver-protocol.md, "What is a driver failure"): a runtime that
 * never answers ends the run as a driver failure instead of holding the harness forever.
 */
import { PulseAdapter } from "../adapters/pulse/adapter.js";
import { answer } from "../adapters/pulse/rpc-server.js";
import { DEFAULT_CALL_TIMEOUT_MS, DriverFailure, type Driver, type MessageCheck } from "./driver.js";
import { request, resultOf } from "./jsonrpc.js";
import type { Method, Methods } from "./protocol.js";

export interface InProcessDriverOptions {
  /** Real milliseconds a call may take before the run stops as a driver failure (default 15 s). */
  callTimeoutMs?: number;
}

export class InProcessDriver implements Driver {
  readonly describe = "in-process";
  private readonly adapter = new PulseAdapter();
  private readonly callTimeoutMs: number;
  private nextId = 1;
  private failure: DriverFailure | undefined;

  constructor(
    private readonly check?: MessageCheck,
    options: InProcessDriverOptions = {},
  ) {
    this.callTimeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  }

  async call<M extends Method>(method: M, params: Methods[M][0], options: { timeoutMs?: number } = {}): Promise<Methods[M][1]> {
    if (this.failure) throw this.failure;
    const message = request(this.nextId++, method, params);
    this.check?.("request", method, message);
    const timeoutMs = options.timeoutMs ?? this.callTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        // Like a hung subprocess: the session is over, later calls fail the same way.
        this.failure ??= new DriverFailure(`pulse's runtime did not answer ${method} within ${timeoutMs} ms`);
        reject(this.failure);
      }, timeoutMs);
    });
    try {
      const response = await Promise.race([answer(this.adapter, JSON.stringify(message)), expired]);
      this.check?.("response", method, response);
      return resultOf(JSON.parse(JSON.stringify(response)), method) as Methods[M][1];
    } finally {
      clearTimeout(timer);
    }
  }

  stderrTail(): string[] {
    return [];
  }

  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    // A runtime that hung stops in the background; closing never waits on it for long.
    await Promise.race([this.adapter.handle("shutdown", {}), new Promise((resolve) => (timer = setTimeout(resolve, 2_000)))]);
    clearTimeout(timer);
  }
}
