/**
 * The wire protocol shared by the HTTP client and server (docs/substrates-http.md):
 * `POST {base}/v1/{slot}/{operation}` with `{"args", "context"}`, answered by `{"result"}` or
 * `{"error": {"code", "message"}}`.
 */
import { randomBytes } from "node:crypto";
import { SUBSTRATE_OPERATIONS } from "../../src/substrates/contracts.js";
import type { SubstrateSlotName } from "../../src/substrates/contracts.js";

export const API_PREFIX = "/v1";
export const HEALTH_PATH = `${API_PREFIX}/health`;
export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

export const SLOT_NAMES = Object.keys(SUBSTRATE_OPERATIONS) as SubstrateSlotName[];

/** Operations whose result is void in TypeScript and `null` on the wire. */
export const VOID_OPERATIONS: ReadonlySet<string> = new Set(["commit_transaction", "rollback_transaction"]);

/** Error codes that mean "the request was fine but the state forbids it": HTTP 409. */
export const CONFLICT_CODES: ReadonlySet<string> = new Set(["NODE_EXISTS", "UNKNOWN_TX", "TX_CONFLICT", "DUPLICATE_EVENT_ID"]);

export interface WireContext {
  trace_id: string;
  workspace_id: string;
  tx_id?: string;
}

export interface WireRequest {
  args: Record<string, unknown>;
  context: WireContext;
}

export interface WireError {
  code: string;
  message: string;
}

export function isSlotName(value: string): value is SubstrateSlotName {
  return Object.prototype.hasOwnProperty.call(SUBSTRATE_OPERATIONS, value);
}

export function isOperationOf(slot: SubstrateSlotName, operation: string): boolean {
  return (SUBSTRATE_OPERATIONS[slot] as readonly string[]).includes(operation);
}

/** HTTP status for a SubstrateRequestError code: 409 for conflicts, 400 for everything else. */
export function statusForCode(code: string): number {
  return CONFLICT_CODES.has(code) ? 409 : 400;
}

// Later traceparent versions may append fields after the flags; version 00 may not.
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** A W3C traceparent for one substrate call: the iteration's trace id and a fresh span id. */
export function traceparentFor(traceId: string): string {
  let spanId: string;
  do spanId = randomBytes(8).toString("hex");
  while (spanId === "0000000000000000");
  return `00-${traceId}-${spanId}-01`;
}

/** The trace id of a well-formed traceparent (W3C Trace Context level 1), or undefined. */
export function traceIdOfTraceparent(header: string): string | undefined {
  const match = TRACEPARENT.exec(header.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, , rest] = match as unknown as [string, string, string, string, string, string | undefined];
  if (version === "ff" || (version === "00" && rest !== undefined) || traceId === "0".repeat(32) || spanId === "0".repeat(16)) return undefined;
  return traceId;
}
