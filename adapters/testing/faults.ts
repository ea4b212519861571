/**
 * Makes substrates fail on command, to test what the runtime does when one is down: the circuit
 * breaker, phase timeouts, on_failure policies. Each slot can be told to fail the next `count`
 * calls (or every call until healed) in one of three ways:
 * - "unavailable": throws SubstrateUnavailableError, like a refused connection or a 503;
 * - "hang": never answers; the call rejects with the signal's reason once ctx.signal aborts
 *   (a call without a signal hangs for good, as a dead peer would);
 * - "error": throws SubstrateRequestError with code "INJECTED_FAULT", like a 4xx refusal.
 * Every call is counted per slot and operation, failed or not.
 */
import { SUBSTRATE_OPERATIONS, SubstrateRequestError, SubstrateUnavailableError } from "../../src/substrates/contracts.js";
import type { CallContext, SubstrateSet, SubstrateSlotName } from "../../src/substrates/contracts.js";
import { wrapSubstrates } from "./wrap.js";

export type FaultMode = "unavailable" | "hang" | "error";

export interface FaultInjector<T extends SubstrateSet = SubstrateSet> {
  substrates: T;
  /** Fail the next `count` calls to the slot (all calls until heal when count is omitted). */
  fail(slot: SubstrateSlotName, mode: FaultMode, count?: number): void;
  heal(slot: SubstrateSlotName): void;
  /** Calls received per slot and operation, including the ones that failed. */
  calls: Record<SubstrateSlotName, Record<string, number>>;
}

interface Fault {
  mode: FaultMode;
  remaining: number;
}

export function withFaults<T extends SubstrateSet>(set: T): FaultInjector<T> {
  const faults = new Map<SubstrateSlotName, Fault>();
  const calls = Object.fromEntries(
    Object.entries(SUBSTRATE_OPERATIONS).map(([slot, operations]) => [slot, Object.fromEntries(operations.map((op) => [op, 0]))]),
  ) as Record<SubstrateSlotName, Record<string, number>>;

  const substrates = wrapSubstrates(set, (slot, operation, _args, ctx, proceed) => {
    calls[slot][operation] = (calls[slot][operation] ?? 0) + 1;
    const fault = faults.get(slot);
    if (!fault) return proceed();
    if (--fault.remaining <= 0) faults.delete(slot);
    return inject(fault.mode, slot, operation, ctx);
  });

  return {
    substrates,
    fail(slot, mode, count) {
      if (count !== undefined && (!Number.isInteger(count) || count < 1)) throw new RangeError(`fail(${slot}): count must be an integer ≥ 1, got ${count}`);
      faults.set(slot, { mode, remaining: count ?? Number.POSITIVE_INFINITY });
    },
    heal(slot) {
      faults.delete(slot);
    },
    calls,
  };
}

function inject(mode: FaultMode, slot: SubstrateSlotName, operation: string, ctx: CallContext): Promise<never> {
  switch (mode) {
    case "unavailable":
      return Promise.reject(new SubstrateUnavailableError(slot, `${operation}: injected fault: ${slot} is unavailable`));
    case "error":
      return Promise.reject(new SubstrateRequestError(slot, "INJECTED_FAULT", `${operation}: injected fault: ${slot} refused the call`));
    case "hang":
      return new Promise<never>((_, reject) => {
        const signal = ctx.signal;
        if (!signal) return;
        if (signal.aborted) reject(signal.reason);
        else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
  }
}
