/** One conformance test: its §12 number and name, and what it does with a TestContext. */
import type { TestContext } from "../harness/context.js";
import type { TestName } from "../report/types.js";
import type { ObservedCall } from "../driver/protocol.js";

export interface ConformanceTest {
  number: number;
  name: TestName;
  /** What the test exercises, for --list and the docs. */
  summary: string;
  run(ctx: TestContext): Promise<void>;
}

/**
 * The order in which writes became visible: a write outside a transaction when it arrived, a
 * transactional write when its transaction committed (never, if it was rolled back).
 */
export function effectiveWrites(calls: ObservedCall[], isWrite: (c: ObservedCall) => boolean): ObservedCall[] {
  const pending = new Map<string, ObservedCall[]>();
  const visible: ObservedCall[] = [];
  for (const c of calls) {
    if (c.error) continue;
    if (c.slot === "memory" && c.operation === "commit_transaction") {
      const tx = (c.args as { tx_id?: string })?.tx_id ?? "";
      visible.push(...(pending.get(tx) ?? []));
      pending.delete(tx);
    } else if (c.slot === "memory" && c.operation === "rollback_transaction") {
      pending.delete((c.args as { tx_id?: string })?.tx_id ?? "");
    } else if (isWrite(c)) {
      if (c.context.tx_id) pending.set(c.context.tx_id, [...(pending.get(c.context.tx_id) ?? []), c]);
      else visible.push(c);
    }
  }
  return visible;
}

export function nodeIdOf(c: ObservedCall): string | undefined {
  return (c.args as { node?: { id?: string } })?.node?.id;
}

/** The audit event types that record a phase transition (a route phase's is phase.routed, §5.3). */
export const TRANSITIONS: ReadonlySet<string> = new Set(["phase.completed", "phase.routed"]);
