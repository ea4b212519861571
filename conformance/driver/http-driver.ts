/** Drives an adapter that is already running: each request is POSTed as one JSON-RPC body. */
import { DEFAULT_CALL_TIMEOUT_MS, DriverFailure, type Driver, type MessageCheck } from "./driver.js";
import { parseResponse, request, resultOf } from "./jsonrpc.js";
import type { Method, Methods } from "./protocol.js";

export class HttpDriver implements Driver {
  readonly describe: string;
  private nextId = 1;

  constructor(
    private readonly url: string,
    private readonly check?: MessageCheck,
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
      });
      text = await response.text();
    } catch (e) {
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
