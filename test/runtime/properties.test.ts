import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { inMemorySubstrates } from "../../adapters/memory/index.js";
import { canonicalJson, createRuntime, VirtualClock, type PhaseHandler } from "../../src/index.js";
import type { AuditEvent } from "../../src/substrates/contracts.js";

type Behaviour = "ok" | "throw" | "ungrounded" | "fast_on_kappa" | "rewrite" | "bad_token";

const kinds = fc.constantFrom("retrieve", "route", "act", "learn", "consolidate", "custom");
const phaseArb = fc.record({ kind: kinds, idempotent: fc.boolean(), on_failure: fc.constantFrom(undefined, "retry", "skip", "rollback", "escalate") });
const scenarioArb = fc.record({
  phases: fc.array(phaseArb, { minLength: 2, maxLength: 7 }),
  invariants: fc.record({ kappa_routing: fc.boolean(), outcome_grounding: fc.boolean(), feedback_immutability: fc.boolean(), quorum_before_commit: fc.constant(false) }),
  behaviours: fc.array(fc.array(fc.constantFrom<Behaviour>("ok", "ok", "ok", "throw", "ungrounded", "fast_on_kappa", "rewrite", "bad_token"), { minLength: 7, maxLength: 7 }), { minLength: 1, maxLength: 4 }),
  kappa: fc.constantFrom(0, 0, 1.5),
});

function manifestOf(s: fc.Arbitrary<unknown> extends never ? never : { phases: { kind: string; idempotent: boolean; on_failure?: string }[]; invariants: Record<string, boolean> }) {
  const phases = s.phases.map((p, i) => {
    const phase: Record<string, unknown> = { id: `p${i}`, kind: p.kind, idempotent: p.idempotent };
    if (p.kind === "custom") phase.custom_kind = "work";
    if (p.on_failure) phase.on_failure = p.on_failure;
    if (p.on_failure === "retry") phase.max_retries = 1;
    return phase;
  });
  return {
    pulse_protocol_version: "0.1",
    loop_id: "prop.loop",
    version: "1.0.0",
    phases,
    closure: { from_phase: `p${phases.length - 1}`, to_phase: "p0" },
    cadence: { type: "manual" },
    substrates: { memory: "m://", policy: "p://", audit: "a://", auth: "u://" },
    invariants: { phase_atomicity: true, append_only_audit: true, trace_id_propagation: true, ...s.invariants },
  };
}

function handlerFor(kind: string, behaviour: () => Behaviour, kappa: number): PhaseHandler {
  return async ({ substrates, trace_id, input }) => {
    const b = behaviour();
    if (b === "throw") throw new Error("handler failed");
    if (b === "bad_token") return { token: "OutcomeSignal", version: "0.1", trace_id };
    if (kind === "retrieve") return { topology: { token: "TopologyContext", version: "0.1", trace_id, max_kappa: kappa }, echo: input ?? null };
    if (kind === "route") return { decision: b === "fast_on_kappa" ? "fast" : kappa > 0 ? "deliberate" : "fast" };
    if (kind === "act") return b === "ungrounded" ? { done: true } : { causal_parent_ids: [], action_id: `a_${trace_id.slice(0, 6)}` };
    if (kind === "learn" && b === "rewrite") return substrates.memory.consolidate({});
    return { kind, n: 1 };
  };
}

describe("runtime properties", () => {
  it("never violates an invariant silently; the audit log is a strict, gap-free sequence per iteration", async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        const runtime = await createRuntime({ clock: new VirtualClock(0), retry: { baseMs: 1, maxMs: 1 } });
        const substrates = inMemorySubstrates();
        const loop = await runtime.load(manifestOf(s), { substrates });
        let iteration = 0;
        let call = 0;
        const behaviour = () => s.behaviours[iteration % s.behaviours.length]![call++ % 7]!;
        for (const k of ["retrieve", "route", "act", "learn", "consolidate", "custom"]) runtime.handleKind(k === "custom" ? "work" : k, handlerFor(k, behaviour, s.kappa));
        for (iteration = 0; iteration < s.behaviours.length; iteration++) {
          call = 0;
          const running = loop.runIteration({ input: { i: iteration } });
          await (runtime.clock as VirtualClock).runAll();
          const result = await running;
          const events: AuditEvent[] = await substrates.audit.query_by_trace({ trace_id: result.trace_id }, { trace_id: result.trace_id, workspace_id: "default" });

          // Gap-free, strictly ordered, one trace.
          expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
          expect(events[0]!.event_type).toBe("iteration.started");
          expect(events.at(-1)!.event_type).toMatch(/^iteration\.(completed|failed)$/);
          expect(events.every((e) => e.trace_id === result.trace_id && /^blake3:[0-9a-f]{64}$/.test(e.signature))).toBe(true);
          expect(result.audit_events).toBe(events.length);

          // Exactly one transition event per phase the iteration went through.
          const transitions = events.filter((e) => e.event_type.startsWith("phase."));
          expect(transitions.map((e) => e.phase_id)).toEqual(result.phases.map((p) => p.phase_id));

          // What completed satisfied the invariants in force.
          const kindOf = (id: string) => s.phases[Number(id.slice(1))]!.kind;
          let actDone = false;
          let topologySeen = false; // §7.4 applies once a retrieve has handed the iteration a TopologyContext
          const hasAct = s.phases.some((p) => p.kind === "act");
          for (const e of transitions) {
            if (e.event_type !== "phase.completed" && e.event_type !== "phase.routed") continue;
            const kind = kindOf(e.phase_id!);
            if (kind === "act") {
              actDone = true;
              if (s.invariants.outcome_grounding) expect(Array.isArray(e.data?.causal_parent_ids)).toBe(true);
            }
            if (kind === "learn" && hasAct && !e.data?.replayed) expect(actDone).toBe(true);
            if (kind === "route" && s.invariants.kappa_routing && s.kappa > 0 && topologySeen) expect(e.data?.decision).toBe("deliberate");
            if (kind === "retrieve") topologySeen = true;
          }
          // Every refusal is visible: an invariant violation is audited before its failed transition.
          for (const v of events.filter((e) => e.event_type === "invariant.violated")) {
            const next = events[v.seq + 1]!;
            expect(next.phase_id).toBe(v.phase_id);
            expect(next.event_type).toMatch(/^phase\.(failed|skipped|rolled_back|escalated)$/);
          }
          if (result.error?.code === "INVARIANT_VIOLATION" || result.error?.code === "PHASE_ORDER_VIOLATION") {
            expect(events.some((e) => e.event_type === "invariant.violated")).toBe(true);
          }
        }
      }),
      { numRuns: 120 },
    );
  });

  it("replays idempotent phases canonical-JSON identical to their first output", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.jsonValue(), async (output, input) => {
        const runtime = await createRuntime({ clock: new VirtualClock(0) });
        const loop = await runtime.load(manifestOf({ phases: [{ kind: "retrieve", idempotent: true }, { kind: "custom", idempotent: false }], invariants: {} }));
        let runs = 0;
        loop.handle("p0", () => (runs++, output));
        loop.handle("p1", () => ({}));
        const first = await loop.invokePhase("p0", { input });
        const second = await loop.invokePhase("p0", { input });
        expect(runs).toBe(1);
        const out = (o: typeof first) => (o.outcome.kind === "completed" ? o.outcome.output : undefined);
        expect(canonicalJson(out(second))).toBe(canonicalJson(out(first)));
        expect(canonicalJson(out(first))).toBe(canonicalJson(output));
      }),
      { numRuns: 150 },
    );
  });
});
