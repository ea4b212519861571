/** A scripted session over every operation of every slot, shared by the HTTP and docs tests. */
import type { InMemoryOptions } from "../../adapters/memory/index.js";
import type { CallContext, SubstrateSet, SubstrateSlotName } from "../../src/substrates/contracts.js";
import { auditEvent, TRACE } from "./helpers.js";

export const SCRIPT_OPTIONS: InMemoryOptions = {
  clock: () => new Date("2026-04-10T12:00:00Z"),
  policyRules: [{ action: "delete", decision: "deny", reason: "no deletes" }],
  authGrants: [{ agent_id: "rogue", decision: "deny" }],
  agentStates: { old: "retired" },
};

export type Call = { slot: SubstrateSlotName; operation: string; args: unknown; ctx: CallContext };

/** What a call came to: its result, or the slot and code it was refused with. */
export async function outcome(set: SubstrateSet, call: Call): Promise<unknown> {
  const substrate = set[call.slot] as unknown as Record<string, (args: unknown, ctx: CallContext) => Promise<unknown>>;
  try {
    return { result: await substrate[call.operation]!(call.args, call.ctx) };
  } catch (error) {
    const e = error as { name: string; slot?: string; code?: string };
    return { error: { name: e.name, slot: e.slot, code: e.code } };
  }
}

export const ws = (workspace_id: string, tx_id?: string): CallContext => (tx_id ? { trace_id: TRACE, workspace_id, tx_id } : { trace_id: TRACE, workspace_id });
const outcomeSignal = (action_id: string, status: string, parents: string[]) => ({ token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id, status, causal_parent_ids: parents });

/** A scripted session touching every operation of every slot, refusals included. */
export const SCRIPT: Call[] = [
  { slot: "memory", operation: "store_node", args: { node: { id: "a", type: "belief", content: "sky is blue", signature: "s-a" } }, ctx: ws("w1") },
  { slot: "memory", operation: "store_node", args: { node: { type: "belief", content: "sky is blue", confidence: 0.9 } }, ctx: ws("w1") },
  { slot: "memory", operation: "store_node", args: { node: { content: "dup", signature: "s-a" } }, ctx: ws("w1") },
  { slot: "memory", operation: "store_node", args: { node: { id: "a", content: "rewrite" } }, ctx: ws("w1") },
  { slot: "memory", operation: "store_node", args: { node: { confidence: 3 } }, ctx: ws("w1") },
  { slot: "memory", operation: "store_edge", args: { src: "a", dst: "node_1", type: "causal" }, ctx: ws("w1") },
  { slot: "memory", operation: "store_edge", args: { src: "node_1", dst: "a", type: "causal" }, ctx: ws("w1") },
  { slot: "memory", operation: "store_edge", args: { src: "a", dst: "ghost", type: "causal" }, ctx: ws("w1") },
  { slot: "memory", operation: "retrieve_context", args: { query: "SKY", k: 5 }, ctx: ws("w1") },
  { slot: "memory", operation: "topology_analyze", args: {}, ctx: ws("w1") },
  { slot: "memory", operation: "topology_analyze", args: { node_ids: ["a"] }, ctx: ws("w1") },
  { slot: "memory", operation: "learn_from_outcome", args: { outcome: outcomeSignal("act_1", "success", ["a", "node_1", "x"]) }, ctx: ws("w1") },
  { slot: "memory", operation: "learn_from_outcome", args: { outcome: outcomeSignal("act_1", "won", []) }, ctx: ws("w1") },
  { slot: "memory", operation: "begin_transaction", args: {}, ctx: ws("w1") },
  { slot: "memory", operation: "store_node", args: { node: { content: "staged" } }, ctx: ws("w1", "tx_1") },
  { slot: "memory", operation: "retrieve_context", args: { query: "staged" }, ctx: ws("w1", "tx_1") },
  { slot: "memory", operation: "retrieve_context", args: { query: "staged" }, ctx: ws("w1") },
  { slot: "memory", operation: "consolidate", args: { scope: {} }, ctx: ws("w1", "tx_1") },
  { slot: "memory", operation: "commit_transaction", args: { tx_id: "tx_1" }, ctx: ws("w1") },
  { slot: "memory", operation: "commit_transaction", args: { tx_id: "tx_1" }, ctx: ws("w1") },
  { slot: "memory", operation: "begin_transaction", args: {}, ctx: ws("w1") },
  { slot: "memory", operation: "store_node", args: { node: { content: "discarded" } }, ctx: ws("w1", "tx_2") },
  { slot: "memory", operation: "rollback_transaction", args: { tx_id: "tx_2" }, ctx: ws("w1") },
  { slot: "memory", operation: "retrieve_context", args: { query: "" }, ctx: ws("w1") },
  { slot: "memory", operation: "retrieve_context", args: { query: "" }, ctx: ws("w2") },
  { slot: "memory", operation: "retrieve_context", args: { query: "" }, ctx: { trace_id: "nope", workspace_id: "w1" } },
  { slot: "policy", operation: "check_policy", args: { actor: "x", action: "delete", resource: "r" }, ctx: ws("w1") },
  { slot: "policy", operation: "check_policy", args: { actor: "x", action: "read", resource: "r" }, ctx: ws("w1") },
  { slot: "policy", operation: "compute_effective", args: { org_id: "acme" }, ctx: ws("w1") },
  { slot: "policy", operation: "check_policy", args: { actor: "x" }, ctx: ws("w1") },
  { slot: "audit", operation: "append_event", args: { event: auditEvent({ workspace_id: "w1" }) }, ctx: ws("w1") },
  { slot: "audit", operation: "append_event", args: { event: auditEvent({ workspace_id: "w1" }) }, ctx: ws("w1") },
  { slot: "audit", operation: "append_event", args: { event: auditEvent({ workspace_id: "w1", seq: 9 }) }, ctx: ws("w1") },
  { slot: "audit", operation: "append_event", args: { event: auditEvent({ workspace_id: "w1", event_id: "e2", trace_id: "a".repeat(32) }) }, ctx: ws("w1") },
  { slot: "audit", operation: "query_by_trace", args: { trace_id: TRACE }, ctx: ws("w1") },
  { slot: "audit", operation: "query_by_trace", args: { trace_id: TRACE, since: "2030-01-01T00:00:00Z" }, ctx: ws("w1") },
  { slot: "auth", operation: "permission_check", args: { agent_id: "rogue", operation: "act" }, ctx: ws("w1") },
  { slot: "auth", operation: "permission_check", args: { agent_id: "good", operation: "act" }, ctx: ws("w1") },
  { slot: "auth", operation: "agent_lifecycle", args: { agent_id: "old" }, ctx: ws("w1") },
  { slot: "time", operation: "at_timescale", args: { timescale: "glacial" }, ctx: ws("w1") },
  { slot: "time", operation: "forecast", args: { stream: "cpu", horizon: "1h" }, ctx: ws("w1") },
  { slot: "time", operation: "at_timescale", args: { timescale: "never" }, ctx: ws("w1") },
];

