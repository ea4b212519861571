import { describe, expect, it } from "vitest";
import { InMemoryAuth, InMemoryPolicy, InMemoryTime } from "../../adapters/memory/index.js";
import { ctx, rejection } from "./helpers.js";

describe("InMemoryPolicy", () => {
  it("allows by default", async () => {
    expect(await new InMemoryPolicy().check_policy({ actor: "a", action: "write", resource: "r" }, ctx())).toEqual({ decision: "allow" });
  });

  it("applies the first matching rule; an absent field or * matches anything", async () => {
    const policy = new InMemoryPolicy([
      { actor: "agent_7", action: "write", decision: "deny", reason: "agent_7 is read-only" },
      { action: "write", resource: "memory", decision: "allow" },
      { action: "*", resource: "memory", decision: "deny", reason: "memory is write-only here" },
    ]);
    const check = (actor: string, action: string, resource: string) => policy.check_policy({ actor, action, resource }, ctx());
    expect(await check("agent_7", "write", "memory")).toEqual({ decision: "deny", reason: "agent_7 is read-only" });
    expect(await check("agent_8", "write", "memory")).toEqual({ decision: "allow" });
    expect(await check("agent_8", "read", "memory")).toEqual({ decision: "deny", reason: "memory is write-only here" });
    expect(await check("agent_8", "read", "audit")).toEqual({ decision: "allow" });
  });

  it("can change its rules at run time", async () => {
    const policy = new InMemoryPolicy();
    policy.setRules([{ decision: "deny" }]);
    expect((await policy.check_policy({ actor: "a", action: "b", resource: "c" }, ctx())).decision).toBe("deny");
    expect(() => policy.setRules([{ decision: "maybe" as never }])).toThrow(/decision/);
  });

  it("compute_effective lists the rules that apply to the organisation", async () => {
    const policy = new InMemoryPolicy([{ org_id: "acme", decision: "deny" }, { decision: "allow", action: "read" }, { org_id: "other", decision: "deny" }]);
    expect(await policy.compute_effective({ org_id: "acme" }, ctx())).toEqual({
      org_id: "acme",
      default_decision: "allow",
      rules: [{ org_id: "acme", decision: "deny" }, { decision: "allow", action: "read" }],
    });
  });

  it("refuses missing arguments and bad contexts", async () => {
    const policy = new InMemoryPolicy();
    expect(await rejection(policy.check_policy({ actor: "a", action: "b" } as never, ctx()))).toMatchObject({ slot: "policy", code: "BAD_REQUEST" });
    expect(await rejection(policy.compute_effective({ org_id: "o" }, { trace_id: "x", workspace_id: "w" }))).toMatchObject({ code: "BAD_CONTEXT" });
  });
});

describe("InMemoryAuth", () => {
  it("allows by default and applies the first matching grant", async () => {
    const auth = new InMemoryAuth([{ agent_id: "rogue", decision: "deny" }, { operation: "act", decision: "deny" }, { agent_id: "admin", decision: "allow" }]);
    expect(await auth.permission_check({ agent_id: "anyone", operation: "retrieve" }, ctx())).toBe("allow");
    expect(await auth.permission_check({ agent_id: "rogue", operation: "retrieve" }, ctx())).toBe("deny");
    expect(await auth.permission_check({ agent_id: "admin", operation: "act" }, ctx())).toBe("deny");
    auth.setGrants([]);
    expect(await auth.permission_check({ agent_id: "rogue", operation: "act" }, ctx())).toBe("allow");
  });

  it("reports configured lifecycle states and 'active' otherwise", async () => {
    const auth = new InMemoryAuth([], { old_agent: "retired" });
    expect(await auth.agent_lifecycle({ agent_id: "old_agent" }, ctx())).toEqual({ state: "retired" });
    expect(await auth.agent_lifecycle({ agent_id: "new_agent" }, ctx())).toEqual({ state: "active" });
    expect(await rejection(auth.agent_lifecycle({ agent_id: "" }, ctx()))).toMatchObject({ slot: "auth", code: "BAD_REQUEST" });
  });
});

describe("InMemoryTime", () => {
  const clock = () => new Date("2026-04-10T12:00:00Z");
  it("reports the clock at a named timescale and refuses unknown timescales", async () => {
    const time = new InMemoryTime(clock);
    expect(await time.at_timescale({ timescale: "slow" }, ctx())).toEqual({ timescale: "slow", now: "2026-04-10T12:00:00.000Z" });
    expect(await rejection(time.at_timescale({ timescale: "sometimes" }, ctx()))).toMatchObject({ slot: "time", code: "BAD_REQUEST" });
  });

  it("returns an empty forecast rather than an invented one", async () => {
    const time = new InMemoryTime(clock);
    expect(await time.forecast({ stream: "cpu", horizon: "1h" }, ctx())).toEqual({ stream: "cpu", horizon: "1h", points: [] });
    expect(await rejection(time.forecast({ stream: "cpu" } as never, ctx()))).toMatchObject({ code: "BAD_REQUEST" });
  });
});
