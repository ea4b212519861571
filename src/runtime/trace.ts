/**
 * W3C Trace Context identifiers. Every iteration gets a real trace id even when no
 * OpenTelemetry SDK is registered (the API alone hands out all-zero ids).
 */
import { randomFillSync } from "node:crypto";

const pool = Buffer.alloc(4096);
let offset = pool.length;

function randomHex(bytes: number): string {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString("hex", offset, offset + bytes);
  offset += bytes;
  return hex;
}

const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

export function newTraceId(): string {
  for (;;) {
    const id = randomHex(16);
    if (id !== ZERO_TRACE) return id;
  }
}

export function newSpanId(): string {
  for (;;) {
    const id = randomHex(8);
    if (id !== ZERO_SPAN) return id;
  }
}

export function isTraceId(value: unknown): value is string {
  return typeof value === "string" && /^[0-9a-f]{32}$/.test(value) && value !== ZERO_TRACE;
}

export function isSpanId(value: unknown): value is string {
  return typeof value === "string" && /^[0-9a-f]{16}$/.test(value) && value !== ZERO_SPAN;
}

export function formatTraceparent(traceId: string, spanId: string, sampled = true): string {
  return `00-${traceId}-${spanId}-${sampled ? "01" : "00"}`;
}

export function parseTraceparent(header: string | undefined | null): { traceId: string; spanId: string; sampled: boolean } | undefined {
  const m = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(header?.trim() ?? "");
  if (!m || m[1] === "ff" || !isTraceId(m[2]) || !isSpanId(m[3])) return undefined;
  return { traceId: m[2] as string, spanId: m[3] as string, sampled: (parseInt(m[4] as string, 16) & 1) === 1 };
}
