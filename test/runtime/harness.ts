/** A runtime on virtual time with in-memory substrates the test can inspect. */
import { inMemorySubstrates, type InMemorySubstrateSet } from "../../adapters/memory/index.js";
import { createRuntime, VirtualClock, type LoadOptions, type PhaseHandler, type RuntimeOptions } from "../../src/index.js";
import type { AuditEvent } from "../../src/substrates/contracts.js";
import { baseManifest } from "../helpers/manifests.js";

export const TRACE = "0af7651916cd43dd8448eb211c80319c";
export const TRACE_2 = "4bf92f3577b34da6a3ce929d0e0e4736";

/** Handlers that satisfy every invariant: acts ground themselves, routes decide "fast". */
export function validHandlers(calls: string[] = []): Record<string, PhaseHandler> {
  return {
    retrieve: ({ phase, input }) => (calls.push(phase.id), { seen: input ?? null }),
    route: ({ phase }) => (calls.push(phase.id), { decision: "fast" }),
    act: ({ phase }) => (calls.push(phase.id), { action_id: `a_${phase.id}`, causal_parent_ids: [] }),
    learn: ({ phase }) => (calls.push(phase.id), { learned: true }),
    consolidate: ({ phase }) => (calls.push(phase.id), { consolidated: true }),
    custom: ({ phase }) => (calls.push(phase.id), { custom: phase.id }),
  };
}

export async function setup(
  manifest: Record<string, unknown> = baseManifest(),
  options: { runtime?: RuntimeOptions; load?: LoadOptions; handlers?: Record<string, PhaseHandler>; calls?: string[] } = {},
) {
  const clock = new VirtualClock(Date.UTC(2026, 3, 10));
  const runtime = await createRuntime({ clock, ...options.runtime });
  const calls = options.calls ?? [];
  for (const [kind, handler] of Object.entries(options.handlers ?? validHandlers(calls))) runtime.handleKind(kind, handler);
  const substrates: InMemorySubstrateSet = inMemorySubstrates();
  const loop = await runtime.load(manifest, { substrates, ...options.load });
  const audit = async (traceId: string, workspace = "default"): Promise<AuditEvent[]> => substrates.audit.query_by_trace({ trace_id: traceId }, { trace_id: traceId, workspace_id: workspace });
  return { runtime, loop, clock, substrates, calls, audit };
}

/** The audit events of an iteration as "type phase" strings. */
export function auditShape(events: AuditEvent[]): string[] {
  return events.map((e) => `${e.event_type}${e.phase_id ? ` ${e.phase_id}` : ""}`);
}

export function manifestWith(mutate: (m: Record<string, any>) => void): Record<string, any> {
  const m = baseManifest();
  mutate(m);
  return m;
}
