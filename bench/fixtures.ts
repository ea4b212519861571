/** Small manifests for benchmarks. */
export function baseManifestFor(loopId: string, cadence: Record<string, unknown>): Record<string, unknown> {
  return {
    pulse_protocol_version: "0.1",
    loop_id: loopId,
    version: "1.0.0",
    phases: [
      { id: "fetch", kind: "retrieve" },
      { id: "decide", kind: "route" },
      { id: "apply", kind: "act" },
      { id: "learn", kind: "learn" },
    ],
    closure: { from_phase: "learn", to_phase: "fetch" },
    cadence,
    substrates: { memory: "memory://bench", policy: "memory://bench", audit: "memory://bench", auth: "memory://bench" },
    invariants: { phase_atomicity: true, append_only_audit: true, outcome_grounding: true, trace_id_propagation: true },
  };
}
