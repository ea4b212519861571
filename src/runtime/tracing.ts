/**
 * OpenTelemetry spans for iterations and phases. The iteration's W3C trace id is ours (generated
 * even without an SDK); with an SDK registered, the iteration span joins that trace and each
 * phase is a child span. Without one, the API's no-op tracer costs next to nothing.
 */
import { context, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Span, type Tracer } from "@opentelemetry/api";
import { VERSION } from "../version.js";

let tracer: Tracer | undefined;

function getTracer(): Tracer {
  tracer ??= trace.getTracer("pulse", VERSION);
  return tracer;
}

/** Forget the cached tracer (tests register a provider after the first use). */
export function resetTracer(): void {
  tracer = undefined;
}

export function startIterationSpan(traceId: string, parentSpanId: string, attributes: Attributes): Span {
  const parent = trace.setSpanContext(context.active(), { traceId, spanId: parentSpanId, traceFlags: TraceFlags.SAMPLED, isRemote: true });
  return getTracer().startSpan("pulse.iteration", { kind: SpanKind.INTERNAL, attributes }, parent);
}

export function startPhaseSpan(iteration: Span, loopId: string, phaseId: string, kind: string, attempt: number): Span {
  // Without a recording SDK the iteration span is a no-op, and so would every phase span be.
  if (!iteration.isRecording()) return iteration;
  const attributes: Attributes = { "pulse.loop_id": loopId, "pulse.phase_id": phaseId, "pulse.phase_kind": kind, "pulse.attempt": attempt };
  return getTracer().startSpan(`pulse.phase ${phaseId}`, { kind: SpanKind.INTERNAL, attributes }, trace.setSpan(context.active(), iteration));
}

export function endSpan(span: Span, error?: { code: string; message: string }): void {
  if (!span.isRecording()) return;
  if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: `${error.code}: ${error.message}` });
  span.end();
}
