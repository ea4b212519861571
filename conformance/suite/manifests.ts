/** The suite's own loops: small manifests, each with the invariants its test exercises turned on. */

/** The workspace tests run in unless they need several. */
export const WS = "ws_conformance";

/** A script for an act phase that commits with no causal parents (§7.6 needs the field). */
export const ACT = { output: { causal_parent_ids: [] } };

type Phase = Record<string, unknown> & { id: string; kind: string };

export function loop(loopId: string, phases: Phase[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  const first = phases[0]!.id;
  const last = phases[phases.length - 1]!.id;
  return {
    pulse_protocol_version: "0.1",
    loop_id: loopId,
    version: "1.0.0",
    phases,
    closure: { from_phase: last, to_phase: first, via: "substrate:memory", guarantee: "next_tick" },
    cadence: { type: "manual" },
    substrates: { memory: "memory://conformance", policy: "memory://conformance", audit: "memory://conformance", auth: "memory://conformance" },
    invariants: {
      phase_atomicity: true,
      feedback_immutability: true,
      append_only_audit: true,
      kappa_routing: true,
      quorum_before_commit: false,
      outcome_grounding: true,
      trace_id_propagation: true,
    },
    ...extra,
  };
}

/** retrieve → route → act → learn: the §3.2 shape most tests use. */
export function standardLoop(loopId: string, extra: Record<string, unknown> = {}, overrides: Partial<Record<"fetch" | "decide" | "apply" | "learn", Record<string, unknown>>> = {}): Record<string, unknown> {
  return loop(
    loopId,
    [
      { id: "fetch", kind: "retrieve", ...overrides.fetch },
      { id: "decide", kind: "route", ...overrides.decide },
      { id: "apply", kind: "act", ...overrides.apply },
      { id: "learn", kind: "learn", ...overrides.learn },
    ],
    extra,
  );
}

export function token(name: string, traceId: string, fields: Record<string, unknown>): Record<string, unknown> {
  return { token: name, version: "0.1", trace_id: traceId, ...fields };
}
