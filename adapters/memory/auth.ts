/**
 * In-memory §9.4 auth substrate: ordered grants, first match wins, allow by default; agent
 * lifecycle states are configured per agent and "active" otherwise.
 */
import type { AuthSubstrate, CallContext } from "../../src/substrates/contracts.js";
import { checkContext, requireArgs, requireString } from "../shared/validate.js";

const SLOT = "auth";

export interface AuthGrant {
  /** Matches any agent / operation when absent or "*". */
  agent_id?: string;
  operation?: string;
  decision: "allow" | "deny";
}

export class InMemoryAuth implements AuthSubstrate {
  private grants: readonly AuthGrant[] = [];
  private lifecycle = new Map<string, string>();

  constructor(grants: readonly AuthGrant[] = [], lifecycle: Record<string, string> = {}) {
    this.setGrants(grants);
    this.setLifecycle(lifecycle);
  }

  setGrants(grants: readonly AuthGrant[]): void {
    for (const [i, grant] of grants.entries()) {
      if (grant.decision !== "allow" && grant.decision !== "deny") throw new TypeError(`auth grant ${i}: decision must be "allow" or "deny", got ${JSON.stringify(grant.decision)}`);
    }
    this.grants = grants.map((grant) => ({ ...grant }));
  }

  /** agent_id → lifecycle state (e.g. "suspended"); unlisted agents are "active". */
  setLifecycle(states: Record<string, string>): void {
    this.lifecycle = new Map(Object.entries(states));
  }

  async permission_check(args: { agent_id: string; operation: string }, ctx: CallContext): Promise<"allow" | "deny"> {
    checkContext(SLOT, ctx);
    const a = requireArgs(SLOT, "permission_check", args);
    const agentId = requireString(SLOT, "permission_check", a, "agent_id");
    const operation = requireString(SLOT, "permission_check", a, "operation");
    const grant = this.grants.find((g) => matches(g.agent_id, agentId) && matches(g.operation, operation));
    return grant?.decision ?? "allow";
  }

  async agent_lifecycle(args: { agent_id: string }, ctx: CallContext): Promise<{ state: string }> {
    checkContext(SLOT, ctx);
    const agentId = requireString(SLOT, "agent_lifecycle", requireArgs(SLOT, "agent_lifecycle", args), "agent_id");
    return { state: this.lifecycle.get(agentId) ?? "active" };
  }
}

function matches(pattern: string | undefined, value: string): boolean {
  return pattern === undefined || pattern === "*" || pattern === value;
}
