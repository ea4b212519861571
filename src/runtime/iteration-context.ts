/**
 * What the runtime knows about one iteration while it runs, shared by the phase runner, the
 * invariant checks and the host's hooks; discarded when the iteration ends.
 */
import type { Span } from "@opentelemetry/api";
import type { InvariantViolation } from "./errors.js";
import type { TokenLedger } from "./tokens.js";
import type { OutboxEntry } from "../store/contracts.js";

/** An act phase that committed in the iteration: what later learning is grounded on (§7.6). */
export interface ActRecord {
  phase_id: string;
  action_id: string;
  causal_parent_ids: string[];
}

export interface IterationContext {
  traceId: string;
  workspaceId: string;
  number: number;
  /** Actor of the policy check and agent of the permission check for this iteration's acts. */
  agentId: string;
  tokens: TokenLedger;
  acts: ActRecord[];
  /** Invariant violations not yet written to the audit trail. */
  violations: InvariantViolation[];
  span: Span;
  /** Recently committed acts of the workspace: a learn may ground on an OutcomeSignal about one. */
  knownAction: (actionId: string) => boolean;
  /**
   * With a journal: signals the phase emitted, written to the store's outbox with the phase, and
   * their deliveries, started once that unit committed (never before: an uncommitted phase sends nothing).
   */
  outbox?: { entries: OutboxEntry[]; deliver: (() => Promise<void>)[] };
}
