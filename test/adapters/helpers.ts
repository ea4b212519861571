import { randomBytes } from "node:crypto";
import type { CallContext } from "../../src/substrates/contracts.js";
import type { AuditEvent } from "../../src/substrates/contracts.js";

export function traceId(): string {
  return randomBytes(16).toString("hex");
}

export const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

export function ctx(workspace_id = "ws_a", extra: Partial<CallContext> = {}): CallContext {
  return { trace_id: TRACE, workspace_id, ...extra };
}

/** Resolves to the error a promise rejected with (fails the test when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to be refused, but it succeeded");
}

export function auditEvent(overrides: Partial<AuditEvent> = {}): AuditEvent {
  return {
    event_id: "evt_1",
    event_type: "phase.completed",
    trace_id: TRACE,
    loop_id: "test.loop",
    phase_id: "fetch",
    workspace_id: "ws_a",
    timestamp: "2026-04-10T12:00:00Z",
    signature: "blake3:" + "ab".repeat(32),
    seq: 0,
    ...overrides,
  };
}
