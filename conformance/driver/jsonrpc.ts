/** JSON-RPC 2.0 framing shared by the transports: building requests, reading responses. */
import { DriverFailure, RuntimeError } from "./driver.js";
import { RPC } from "./protocol.js";

export interface RpcRequest {
  jsonrpc: "2.0";
  id: number;
  method: string;
  params: unknown;
}

export interface RpcResponse {
  jsonrpc: "2.0";
  id: number | string | null;
  result?: unknown;
  error?: { code: number; message: string; data?: { code?: string; [k: string]: unknown } };
}

export function request(id: number, method: string, params: unknown): RpcRequest {
  return { jsonrpc: "2.0", id, method, params };
}

/** Parses one line from an adapter; anything but a JSON-RPC 2.0 response is a protocol failure. */
export function parseResponse(line: string): RpcResponse {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new DriverFailure(`the adapter wrote something that is not JSON on stdout: ${JSON.stringify(line.slice(0, 120))} (stdout is for protocol messages only; log to stderr)`);
  }
  const r = value as RpcResponse;
  if (r === null || typeof r !== "object" || r.jsonrpc !== "2.0" || !("id" in r) || ("result" in r) === ("error" in r)) {
    throw new DriverFailure(`the adapter wrote a message that is not a JSON-RPC 2.0 response: ${line.slice(0, 120)}`);
  }
  return r;
}

/** The result of a response, or the RuntimeError / DriverFailure it stands for. */
export function resultOf(r: RpcResponse, method: string): unknown {
  if (!r.error) return r.result;
  if (typeof r.error.code !== "number" || typeof r.error.message !== "string") throw new DriverFailure(`${method}: malformed JSON-RPC error ${JSON.stringify(r.error).slice(0, 120)}`);
  if (r.error.code === RPC.methodNotFound) throw new RuntimeError("UNSUPPORTED", `the adapter does not implement ${method}`);
  const code = typeof r.error.data?.code === "string" ? r.error.data.code : `RPC_${r.error.code}`;
  throw new RuntimeError(code, r.error.message, r.error.data);
}

export function rpcError(id: number | string | null, code: number, message: string, data?: unknown): RpcResponse {
  return { jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data: data as RpcResponse["error"] extends { data?: infer D } ? D : never } };
}
