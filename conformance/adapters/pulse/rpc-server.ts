/** Answers one JSON-RPC 2.0 message with the adapter: shared by the stdio and in-process paths. */
import { RPC } from "../../driver/protocol.js";
import { rpcError, type RpcResponse } from "../../driver/jsonrpc.js";
import { errorOf, type PulseAdapter } from "./adapter.js";

export async function answer(adapter: PulseAdapter, line: string): Promise<RpcResponse> {
  let message: { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };
  try {
    message = JSON.parse(line);
  } catch {
    return rpcError(null, RPC.parseError, "parse error: not JSON");
  }
  const id = typeof message?.id === "number" || typeof message?.id === "string" ? message.id : null;
  if (message?.jsonrpc !== "2.0" || typeof message.method !== "string" || id === null) return rpcError(id, RPC.invalidRequest, "not a JSON-RPC 2.0 request with an id");
  try {
    const result = await adapter.handle(message.method, message.params);
    return { jsonrpc: "2.0", id, result: result ?? {} };
  } catch (e) {
    const err = errorOf(e);
    if (err.code === "METHOD_NOT_FOUND") return rpcError(id, RPC.methodNotFound, err.message);
    return rpcError(id, RPC.runtimeError, err.message, { code: err.code, ...(err.data ?? {}) });
  }
}
