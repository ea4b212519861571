/**
 * Our runtime in the harness's own process. Messages still go through JSON-RPC encoding, so
 * the in-process run checks exactly what a subprocess adapter would be asked.
 */
import { PulseAdapter } from "../adapters/pulse/adapter.js";
import { answer } from "../adapters/pulse/rpc-server.js";
import type { Driver, MessageCheck } from "./driver.js";
import { request, resultOf } from "./jsonrpc.js";
import type { Method, Methods } from "./protocol.js";

export class InProcessDriver implements Driver {
  readonly describe = "in-process";
  private readonly adapter = new PulseAdapter();
  private nextId = 1;

  constructor(private readonly check?: MessageCheck) {}

  async call<M extends Method>(method: M, params: Methods[M][0]): Promise<Methods[M][1]> {
    const message = request(this.nextId++, method, params);
    this.check?.("request", method, message);
    const response = await answer(this.adapter, JSON.stringify(message));
    this.check?.("response", method, response);
    return resultOf(JSON.parse(JSON.stringify(response)), method) as Methods[M][1];
  }

  stderrTail(): string[] {
    return [];
  }

  async close(): Promise<void> {
    await this.adapter.handle("shutdown", {});
  }
}
