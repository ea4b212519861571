/** A small valid manifest to mutate in tests: every test states only what it changes. */
export function baseManifest(): Record<string, any> {
  return {
    pulse_protocol_version: "0.1",
    loop_id: "test.loop",
    version: "1.0.0",
    phases: [
      { id: "fetch", kind: "retrieve", outputs: { to: "phase:decide" } },
      { id: "decide", kind: "route" },
      { id: "apply", kind: "act", outputs: { to: "substrate:memory" } },
      { id: "learn", kind: "learn" },
    ],
    closure: { from_phase: "learn", to_phase: "fetch", via: "substrate:memory", guarantee: "next_tick" },
    cadence: { type: "manual" },
    substrates: { memory: "memory://m", policy: "memory://p", audit: "memory://a", auth: "memory://u" },
    invariants: {
      phase_atomicity: true,
      feedback_immutability: true,
      append_only_audit: true,
      kappa_routing: false,
      quorum_before_commit: false,
      outcome_grounding: true,
      trace_id_propagation: true,
    },
  };
}
