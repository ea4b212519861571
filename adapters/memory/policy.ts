/**
 * In-memory §9.2 policy substrate: an ordered rule list, first match wins, allow by default.
 * Rules are host configuration, not workspace data; calls never change them, so there is
 * nothing one workspace could leak to another.
 */
import type { CallContext, PolicyDecision, PolicySubstrate } from "../../src/substrates/contracts.js";
import { checkContext, requireArgs, requireString } from "../shared/validate.js";

const SLOT = "policy";

export interface PolicyRule {
  /** Each of actor, action, resource matches any value when absent or "*". */
  actor?: string;
  action?: string;
  resource?: string;
  /** Limits the rule to one organisation in compute_effective; absent means every organisation. */
  org_id?: string;
  decision: "allow" | "deny";
  reason?: string;
}

export class InMemoryPolicy implements PolicySubstrate {
  private rules: readonly PolicyRule[] = [];

  constructor(rules: readonly PolicyRule[] = []) {
    this.setRules(rules);
  }

  /** Replaces the rules (tests, live policy refresh). */
  setRules(rules: readonly PolicyRule[]): void {
    for (const [i, rule] of rules.entries()) {
      if (rule.decision !== "allow" && rule.decision !== "deny") throw new TypeError(`policy rule ${i}: decision must be "allow" or "deny", got ${JSON.stringify(rule.decision)}`);
    }
    this.rules = rules.map((rule) => ({ ...rule }));
  }

  async check_policy(args: { actor: string; action: string; resource: string }, ctx: CallContext): Promise<PolicyDecision> {
    checkContext(SLOT, ctx);
    const a = requireArgs(SLOT, "check_policy", args);
    const request = {
      actor: requireString(SLOT, "check_policy", a, "actor"),
      action: requireString(SLOT, "check_policy", a, "action"),
      resource: requireString(SLOT, "check_policy", a, "resource"),
    };
    const rule = this.rules.find((r) => matches(r.actor, request.actor) && matches(r.action, request.action) && matches(r.resource, request.resource));
    if (!rule) return { decision: "allow" };
    return rule.reason === undefined ? { decision: rule.decision } : { decision: rule.decision, reason: rule.reason };
  }

  /** The rules that apply to the organisation, in evaluation order, and the default decision. */
  async compute_effective(args: { org_id: string }, ctx: CallContext): Promise<Record<string, unknown>> {
    checkContext(SLOT, ctx);
    const orgId = requireString(SLOT, "compute_effective", requireArgs(SLOT, "compute_effective", args), "org_id");
    const rules = this.rules.filter((r) => r.org_id === undefined || r.org_id === orgId).map((rule) => ({ ...rule }));
    return { org_id: orgId, default_decision: "allow", rules };
  }
}

function matches(pattern: string | undefined, value: string): boolean {
  return pattern === undefined || pattern === "*" || pattern === value;
}
