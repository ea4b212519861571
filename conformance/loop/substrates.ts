/**
 * The substrates a loop under certification runs on: pulse's in-memory ones, every call recorded
 * as it arrives (with the phase whose handler made it), made unavailable on command, and bent the
 * way a test needs: a TopologyContext with a chosen κ from memory reads, or writes held back long
 * enough for two invocations of a phase to overlap.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { inMemorySubstrates, withFaults, wrapSubstrates, type FaultInjector } from "../../adapters/index.js";
import type { SubstrateSet, SubstrateSlotName } from "../../src/index.js";
import type { ObservedCall } from "../driver/protocol.js";

/**
 * An observed call, and the loop, phase and trace of the handler invocation that made it (absent
 * for the runtime's own calls: audit events, transactions, policy checks).
 */
export interface LoopCall extends ObservedCall {
  handler?: HandlerRun;
}

export interface HandlerRun {
  loop_id: string;
  phase_id: string;
  trace_id: string;
  workspace_id: string;
}

/** The handler invocation running: set by the handler wrapper, read by the substrates it calls. */
export const runningPhase = new AsyncLocalStorage<HandlerRun>();

/** Memory operations that change what memory holds. */
export const MUTATIONS: ReadonlySet<string> = new Set(["store_node", "store_edge", "learn_from_outcome", "consolidate"]);

export class LoopSubstrates {
  readonly calls: LoopCall[] = [];
  readonly set: SubstrateSet;
  /** When set, memory reads report a TopologyContext with this max_kappa. */
  kappa: number | undefined;
  /** Real milliseconds each memory mutation made by a handler waits before it proceeds. */
  holdWritesMs = 0;
  private readonly faults: FaultInjector;

  constructor(now: () => number) {
    this.faults = withFaults(inMemorySubstrates());
    this.set = wrapSubstrates(this.faults.substrates, async (slot, operation, args, ctx, proceed) => {
      const phase = runningPhase.getStore();
      const call: LoopCall = { slot, operation, args, context: { trace_id: ctx.trace_id, workspace_id: ctx.workspace_id, ...(ctx.tx_id ? { tx_id: ctx.tx_id } : {}) }, at: now(), ...(phase ? { handler: phase } : {}) };
      this.calls.push(call);
      if (slot === "memory" && MUTATIONS.has(operation) && phase && this.holdWritesMs > 0) await new Promise((r) => setTimeout(r, this.holdWritesMs));
      try {
        return this.bend(slot, operation, await proceed());
      } catch (e) {
        call.error = (e as Error).message;
        throw e;
      }
    });
  }

  private bend(slot: string, operation: string, result: unknown): unknown {
    if (slot !== "memory" || this.kappa === undefined) return result;
    const topology = (t: Record<string, unknown>) => ({ ...t, max_kappa: this.kappa, routing: this.kappa! > 0 ? "deliberate" : "fast" });
    if (operation === "retrieve_context") return { ...(result as Record<string, unknown>), topology: topology((result as { topology: Record<string, unknown> }).topology) };
    if (operation === "topology_analyze") return topology(result as Record<string, unknown>);
    return result;
  }

  fail(slot: SubstrateSlotName): void {
    this.faults.fail(slot, "unavailable");
  }

  heal(slot: SubstrateSlotName): void {
    this.faults.heal(slot);
  }
}
