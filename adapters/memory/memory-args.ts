/**
 * Shape checks for the memory operations' arguments. Everything a caller hands in is copied as
 * plain JSON first, so what is checked is exactly what gets stored.
 */
import type { MemoryNode } from "../../src/substrates/contracts.js";
import type { OutcomeSignal } from "../../src/tokens/types.js";
import { OUTCOME_STATUSES } from "../../src/tokens/types.js";
import { cloneJson, NotJsonError } from "../shared/json.js";
import { badRequest, describe } from "../shared/validate.js";

const SLOT = "memory";

export function validNode(value: unknown): MemoryNode {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw badRequest(SLOT, `store_node: node must be an object, got ${describe(value)}`);
  const node = jsonArgument(value, "store_node: node") as MemoryNode;
  for (const field of ["id", "signature"] as const) {
    const v = node[field];
    if (v !== undefined && (typeof v !== "string" || v.length === 0)) throw badRequest(SLOT, `store_node: node.${field} must be a non-empty string when present, got ${describe(v)}`);
  }
  if (node.type !== undefined && typeof node.type !== "string") throw badRequest(SLOT, `store_node: node.type must be a string when present, got ${describe(node.type)}`);
  const c = node.confidence;
  if (c !== undefined && (typeof c !== "number" || c < 0 || c > 1)) throw badRequest(SLOT, `store_node: node.confidence must be a number in [0, 1], got ${describe(c)}`);
  if (node.causal_parent_ids !== undefined) stringArray(node.causal_parent_ids, "store_node: node.causal_parent_ids");
  return node;
}

export function validOutcome(value: unknown): OutcomeSignal {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw badRequest(SLOT, `learn_from_outcome: outcome must be an OutcomeSignal object, got ${describe(value)}`);
  const outcome = jsonArgument(value, "learn_from_outcome: outcome") as OutcomeSignal;
  if (typeof outcome.action_id !== "string" || outcome.action_id.length === 0) throw badRequest(SLOT, `learn_from_outcome: outcome.action_id must be a non-empty string, got ${describe(outcome.action_id)}`);
  if (!(OUTCOME_STATUSES as readonly unknown[]).includes(outcome.status)) {
    throw badRequest(SLOT, `learn_from_outcome: outcome.status must be one of ${OUTCOME_STATUSES.join(", ")}, got ${describe(outcome.status)}`);
  }
  if (outcome.causal_parent_ids !== undefined) stringArray(outcome.causal_parent_ids, "learn_from_outcome: outcome.causal_parent_ids");
  return outcome;
}

export function jsonArgument(value: unknown, what: string): unknown {
  try {
    return cloneJson(value);
  } catch (error) {
    if (error instanceof NotJsonError) throw badRequest(SLOT, `${what}: ${error.message}`);
    throw error;
  }
}

export function stringArray(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) throw badRequest(SLOT, `${what} must be an array of strings, got ${describe(value)}`);
  return value as string[];
}

export function scopeNodeIds(scope: unknown): Set<string> | undefined {
  if (scope === undefined || scope === null) return undefined;
  if (typeof scope !== "object" || Array.isArray(scope)) throw badRequest(SLOT, `consolidate: scope must be an object when present, got ${describe(scope)}`);
  const ids = (scope as Record<string, unknown>).node_ids;
  return ids === undefined ? undefined : new Set(stringArray(ids, "consolidate: scope.node_ids"));
}
