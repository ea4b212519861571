/**
 * Drives an adapter that is already running: each request is POSTed as one JSON-RPC body. Its
 * answers are read up to a bound (a broken adapter's endless answer fails the call, not the
 * machine) and redirects are not followed.
 */
import { readBoundedText, ResponseTooLargeError } from "../../src/transports/bounded-body.js";
import { DEFAULT_CALL_TIMEOUT_MS, DriverFailure, type Driver, type MessageCheck } from "./driver.js";
import { parseResponse, request, resultOf } from "./jsonrpc.js";
import type { Method, Methods } from "./protocol.js";

/** 64 MiB: far above any answer the driver protocol produces, far below what would exhaust memory. */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export class HttpDriver implements Driver {
  readonly describe: string;
  private nextId = 1;

  constructor(
    private readonly url: string,
    private readonly check?: MessageCheck,
    /** Largest answer read (pulse-conform --max-response-bytes). */
    private readonly maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES,
  ) {
    this.describe = `--attach ${url}`;
  }

  async call<M extends Method>(method: M, params: Methods[M][0], options: { timeoutMs?: number } = {}): Promise<Methods[M][1]> {
    const message = request(this.nextId++, method, params);
    this.check?.("request", method, message);
    let text: string;
    try {
      const response = await fetch(this.url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(message),
        signal: AbortSignal.timeout(options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS),
        redirect: "manual",
      });
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel().catch(() => undefined);
        throw new DriverFailure(`${method}: the adapter at ${this.url} answered ${response.status}, redirecting to ${JSON.stringify(response.headers.get("location"))}; --attach the adapter's own URL`);
      }
      text = await readBoundedText(response, this.maxResponseBytes);
    } catch (e) {
      if (e instanceof DriverFailure) throw e;
      if (e instanceof ResponseTooLargeError) throw new DriverFailure(`${method}: the adapter at ${this.url}: ${e.message} (--max-response-bytes)`);
      throw new DriverFailure(`${method}: could not reach the adapter at ${this.url}: ${(e as Error).message}`);
    }
    const parsed = parseResponse(text.trim());
    if (parsed.id !== message.id) throw new DriverFailure(`${method}: the adapter answered id ${JSON.stringify(parsed.id)} to request ${message.id}`);
    this.check?.("response", method, parsed);
    return resultOf(parsed, method) as Methods[M][1];
  }

  stderrTail(): string[] {
    return [];
  }

  async close(): Promise<void> {}
}
