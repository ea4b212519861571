/**
 * The embedded default: every slot served in memory. `inMemorySubstrateFactory` plugs into the
 * SubstrateRegistry (which keeps one instance per slot and URI); `inMemorySubstrates` is a ready
 * set for tests and single-process hosts.
 */
import type { SubstrateSet } from "../../src/substrates/contracts.js";
import type { Slot, SlotImplementation, SubstrateFactory } from "../../src/substrates/registry.js";
import { InMemoryAudit } from "./audit.js";
import { InMemoryAuth } from "./auth.js";
import type { AuthGrant } from "./auth.js";
import { InMemoryMemory } from "./memory.js";
import { InMemoryPolicy } from "./policy.js";
import type { PolicyRule } from "./policy.js";
import { InMemoryTime } from "./time.js";

export { CountingAudit, InMemoryAudit } from "./audit.js";
export { InMemoryAuth } from "./auth.js";
export type { AuthGrant } from "./auth.js";
export { CONFIDENCE_DELTAS, DEFAULT_CONFIDENCE, DEFAULT_K, InMemoryMemory } from "./memory.js";
export type { EdgeRecord, Mutation, StoredNode } from "./graph.js";
export { InMemoryPolicy } from "./policy.js";
export type { PolicyRule } from "./policy.js";
export { InMemoryTime } from "./time.js";
export { kappa, stronglyConnectedComponents, topologyContext } from "./topology.js";

export interface InMemoryOptions {
  policyRules?: readonly PolicyRule[];
  authGrants?: readonly AuthGrant[];
  /** agent_id → lifecycle state; unlisted agents are "active". */
  agentStates?: Record<string, string>;
  clock?: () => Date;
}

export function createInMemory<S extends Slot>(slot: S, options: InMemoryOptions = {}): SlotImplementation[S] {
  const made: { [K in Slot]: () => SlotImplementation[K] } = {
    memory: () => new InMemoryMemory(),
    policy: () => new InMemoryPolicy(options.policyRules),
    audit: () => new InMemoryAudit(),
    auth: () => new InMemoryAuth(options.authGrants, options.agentStates),
    time: () => new InMemoryTime(options.clock),
  };
  const make = made[slot];
  if (!make) throw new Error(`no in-memory adapter for slot "${String(slot)}"`);
  return make();
}

/** A factory for SubstrateRegistry: a fresh in-memory adapter per (slot, URI). */
export function inMemorySubstrateFactory(options: InMemoryOptions = {}): SubstrateFactory {
  return (slot, _uri) => createInMemory(slot, options);
}

/** Every slot, typed as the concrete adapters so tests can reach their inspection methods. */
export interface InMemorySubstrateSet extends SubstrateSet {
  memory: InMemoryMemory;
  policy: InMemoryPolicy;
  audit: InMemoryAudit;
  auth: InMemoryAuth;
  time: InMemoryTime;
}

export function inMemorySubstrates(options: InMemoryOptions = {}): InMemorySubstrateSet {
  return {
    memory: new InMemoryMemory(),
    policy: new InMemoryPolicy(options.policyRules),
    audit: new InMemoryAudit(),
    auth: new InMemoryAuth(options.authGrants, options.agentStates),
    time: new InMemoryTime(options.clock),
  };
}
