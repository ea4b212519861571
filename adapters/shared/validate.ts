/**
 * Checks every adapter applies before it touches state: the call context of §5.5/§7.7 and the
 * shape of the arguments. A malformed call is refused with a SubstrateRequestError, never
 * half-applied, so the HTTP server can map it to a 4xx without guessing.
 */
import { SubstrateRequestError } from "../../src/substrates/contracts.js";
import type { CallContext } from "../../src/substrates/contracts.js";

const TRACE_ID = /^[0-9a-f]{32}$/;
const ZERO_TRACE_ID = "0".repeat(32);

/** A W3C trace id: 32 lowercase hex digits, not all zero (the W3C spec calls all-zero invalid). */
export function isTraceId(value: unknown): value is string {
  // An iteration makes many calls with one trace id: the last one that passed needs no regex.
  if (value === lastTraceId && lastTraceId !== undefined) return true;
  if (typeof value !== "string" || !TRACE_ID.test(value) || value === ZERO_TRACE_ID) return false;
  lastTraceId = value;
  return true;
}

let lastTraceId: string | undefined;

/** Why `ctx` is not a valid call context, or undefined when it is. */
export function contextProblem(ctx: unknown): string | undefined {
  if (typeof ctx !== "object" || ctx === null || Array.isArray(ctx)) return "the call context must be an object";
  const { trace_id, workspace_id, tx_id } = ctx as Record<string, unknown>;
  if (!isTraceId(trace_id)) return `trace_id must be a W3C trace id (32 lowercase hex digits, not all zero), got ${describe(trace_id)}`;
  if (typeof workspace_id !== "string" || workspace_id.length === 0) return `workspace_id must be a non-empty string, got ${describe(workspace_id)}`;
  if (tx_id !== undefined && (typeof tx_id !== "string" || tx_id.length === 0)) return `tx_id must be a non-empty string when present, got ${describe(tx_id)}`;
  return undefined;
}

/**
 * Refuses a call whose context is malformed, or whose signal has already fired: a phase that
 * timed out must not go on writing after the runtime gave up on it.
 */
export function checkContext(slot: string, ctx: CallContext): void {
  const problem = contextProblem(ctx);
  if (problem) throw new SubstrateRequestError(slot, "BAD_CONTEXT", problem);
  if (ctx.signal?.aborted) throw ctx.signal.reason;
}

export function badRequest(slot: string, message: string): SubstrateRequestError {
  return new SubstrateRequestError(slot, "BAD_REQUEST", message);
}

export function requireArgs(slot: string, operation: string, args: unknown): Record<string, unknown> {
  if (typeof args !== "object" || args === null || Array.isArray(args)) throw badRequest(slot, `${operation}: arguments must be an object`);
  return args as Record<string, unknown>;
}

export function requireString(slot: string, operation: string, args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== "string" || value.length === 0) throw badRequest(slot, `${operation}: ${name} must be a non-empty string, got ${describe(value)}`);
  return value;
}

export function optionalString(slot: string, operation: string, args: Record<string, unknown>, name: string): string | undefined {
  const value = args[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw badRequest(slot, `${operation}: ${name} must be a string when present, got ${describe(value)}`);
  return value;
}

export function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (value === null || typeof value === "number" || typeof value === "boolean") return String(value);
  return Array.isArray(value) ? "an array" : `a ${typeof value}`;
}
