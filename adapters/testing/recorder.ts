/**
 * Records every substrate call in the order it was made, with its arguments, context and answer:
 * what a test needs to check trace propagation (§7.7) or the order of a phase's writes.
 */
import type { CallContext, SubstrateSet, SubstrateSlotName } from "../../src/substrates/contracts.js";
import { wrapSubstrates } from "./wrap.js";

export interface RecordedCall {
  slot: SubstrateSlotName;
  operation: string;
  /** A copy taken when the call was made (the original when it cannot be copied). */
  args: unknown;
  /** trace_id, workspace_id and tx_id; the signal is left out. */
  context: Omit<CallContext, "signal">;
  /** Set when the call resolved. */
  result?: unknown;
  /** Set when the call rejected. */
  error?: unknown;
}

export interface CallRecorder<T extends SubstrateSet = SubstrateSet> {
  substrates: T;
  calls: RecordedCall[];
}

export function recordCalls<T extends SubstrateSet>(set: T): CallRecorder<T> {
  const calls: RecordedCall[] = [];
  const substrates = wrapSubstrates(set, async (slot, operation, args, ctx, proceed) => {
    const context: Omit<CallContext, "signal"> = { trace_id: ctx?.trace_id, workspace_id: ctx?.workspace_id };
    if (ctx?.tx_id !== undefined) context.tx_id = ctx.tx_id;
    const call: RecordedCall = { slot, operation, args: snapshot(args), context };
    calls.push(call);
    try {
      call.result = await proceed();
      return call.result;
    } catch (error) {
      call.error = error;
      throw error;
    }
  });
  return { substrates, calls };
}

function snapshot(value: unknown): unknown {
  try {
    return structuredClone(value);
  } catch {
    return value;
  }
}
