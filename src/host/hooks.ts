/**
 * The runtime hooks a host installs in every loop it runs: inner loops run inside the phase that
 * triggers them (nesting.ts), connections emit after their phase committed (signals.ts), and an
 * escalating phase reaches the parent loop or the human channel.
 */
import type { AuditTrail } from "../runtime/audit-trail.js";
import type { Clock } from "../runtime/clock.js";
import type { PulseError } from "../runtime/errors.js";
import type { IterationResult } from "../runtime/iteration-result.js";
import type { Loop, LoopHooks } from "../runtime/loop.js";
import type { MutantName } from "../runtime/mutants.js";
import type { Emission } from "../connections/contracts.js";
import { runInnerLoops } from "./nesting.js";
import { emitConnections, type ConnectionEmitter } from "./signals.js";

export interface HookDeps {
  clock: Clock;
  maxInnerIterations: number;
  loopById(loopId: string): Loop | undefined;
  emittersOf(loopId: string): ReadonlyMap<string, ConnectionEmitter> | undefined;
  /** Keeps track of an iteration the host does not wait for (fire_forget, an expired bounded wait). */
  background(loopId: string, workspace: string, running: Promise<IterationResult>): void;
  /** Remembers which trail an emission's delivery events belong to. */
  remember(emission: Emission, trail: AuditTrail): void;
  note(message: string, loopId: string): void;
  escalate(e: { loopId: string; phaseId: string; traceId: string; signature: string; reason: string; error?: PulseError }): Promise<void>;
  mutant: MutantName | undefined;
}

export function hostHooks(deps: HookDeps): Required<LoopHooks> {
  return {
    duringPhase: async (e) => {
      if (e.loop.compiled.innerLoops.length === 0) return;
      await runInnerLoops(
        {
          clock: deps.clock,
          maxInnerIterations: deps.maxInnerIterations,
          loopById: deps.loopById,
          background: (running) => deps.background(e.loop.id, e.iteration.workspaceId, running as Promise<IterationResult>),
          note: deps.note,
          mutant: deps.mutant,
        },
        e.loop,
        e.phase,
        e.input,
        e.output,
        e.iteration,
      );
    },
    afterPhase: async (e) => {
      const emitters = deps.emittersOf(e.loop.id);
      if (!emitters || emitters.size === 0) return;
      await emitConnections(e.loop, e.phase.id, e.input, e.output, e.signature, e.iteration, e.audit, emitters, deps.remember, deps.clock.now());
    },
    escalate: async (e) => {
      await deps.escalate({ loopId: e.loop.id, phaseId: e.phase.id, traceId: e.iteration.traceId, signature: e.signature, reason: e.error.message, error: e.error });
    },
  };
}
