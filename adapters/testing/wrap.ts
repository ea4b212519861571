/**
 * Wraps every operation of every slot of a SubstrateSet with one interceptor, keeping `this`
 * bound to the original substrate. Used by the fault injector and the call recorder.
 */
import { SUBSTRATE_OPERATIONS } from "../../src/substrates/contracts.js";
import type { CallContext, SubstrateSet, SubstrateSlotName } from "../../src/substrates/contracts.js";

export type Interceptor = (slot: SubstrateSlotName, operation: string, args: unknown, ctx: CallContext, proceed: () => Promise<unknown>) => Promise<unknown>;

type Operation = (args: unknown, ctx: CallContext) => Promise<unknown>;

export function wrapSubstrates<T extends SubstrateSet>(set: T, intercept: Interceptor): T {
  const wrapped: Record<string, unknown> = {};
  for (const slot of Object.keys(SUBSTRATE_OPERATIONS) as SubstrateSlotName[]) {
    const substrate = set[slot] as unknown as Record<string, Operation> | undefined;
    if (!substrate) continue;
    const facade: Record<string, Operation> = {};
    for (const operation of SUBSTRATE_OPERATIONS[slot] as readonly string[]) {
      const original = substrate[operation];
      if (typeof original !== "function") continue;
      facade[operation] = async (args, ctx) => intercept(slot, operation, args, ctx, () => original.call(substrate, args, ctx));
    }
    wrapped[slot] = facade;
  }
  return wrapped as unknown as T;
}
