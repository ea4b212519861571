import { describe, expect, it } from "vitest";
import { auditShape, manifestWith, setup, TRACE } from "./harness.js";
import { InvariantViolation, type RuntimeEvent } from "../../src/runtime/index.js";
import type { TopologyContext } from "../../src/tokens/types.js";

function topology(maxKappa: number): TopologyContext {
  return { token: "TopologyContext", version: "0.1", trace_id: TRACE, max_kappa: maxKappa, routing: maxKappa > 0 ? "deliberate" : "fast" };
}

function deliberation(confidence: number) {
  return { token: "DeliberationResult", version: "0.1", trace_id: TRACE, verdict: "approve", confidence };
}

async function violations(loop: { subscribe: (l: (e: RuntimeEvent) => void) => () => void }) {
  const seen: Extract<RuntimeEvent, { type: "invariant.violated" }>[] = [];
  loop.subscribe((e) => e.type === "invariant.violated" && seen.push(e));
  return seen;
}

describe("feedback path: a learn without a preceding act is rejected (§12 test 2)", () => {
  it("rejects learn before any act with PHASE_ORDER_VIOLATION, and audits no transition for it", async () => {
    const { loop, audit } = await setup();
    const r = await loop.invokePhase("learn", { traceId: TRACE });
    expect(r.outcome.kind).toBe("failed");
    const error = r.outcome.kind === "failed" ? r.outcome.error : undefined;
    expect(error).toBeInstanceOf(InvariantViolation);
    expect(error?.code).toBe("PHASE_ORDER_VIOLATION");
    expect(auditShape(await audit(TRACE))).toEqual(["invariant.violated learn", "phase.failed learn"]);
  });

  it("accepts act then learn in the same iteration (the control)", async () => {
    const { loop } = await setup();
    expect((await loop.invokePhase("apply", { traceId: TRACE })).outcome.kind).toBe("completed");
    expect((await loop.invokePhase("learn", { traceId: TRACE })).outcome.kind).toBe("completed");
  });

  it("accepts a learn grounded on an OutcomeSignal about an act this workspace committed", async () => {
    const { loop } = await setup();
    loop.handle("apply", () => ({ action_id: "act_42", causal_parent_ids: [] }));
    await loop.runIteration({ workspace: "w" });
    const outcome = (id: string) => ({ token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: id, status: "success" });
    expect((await loop.invokePhase("learn", { workspace: "w", input: outcome("act_42") })).outcome.kind).toBe("completed");
    const unknown = await loop.invokePhase("learn", { workspace: "w", input: outcome("act_99") });
    expect(unknown.outcome.kind === "failed" && unknown.outcome.error.message).toMatch(/names action act_99, which no act phase of this workspace committed/);
    const elsewhere = await loop.invokePhase("learn", { workspace: "other", input: outcome("act_42") });
    expect(elsewhere.outcome.kind).toBe("failed");
  });
});

describe("feedback_immutability (§7.2)", () => {
  it("refuses a learn phase that consolidates (rewrites) memory", async () => {
    const { loop } = await setup();
    const seen = await violations(loop);
    loop.handle("learn", async ({ substrates }) => substrates.memory.consolidate({}));
    const r = await loop.runIteration();
    expect(r.error?.message).toMatch(/^feedback_immutability \(§7\.2\) refused in loop test\.loop, phase learn: consolidate merges and rewrites nodes/);
    expect(seen.map((v) => [v.invariant, v.phase_id, v.section])).toEqual([["feedback_immutability", "learn", "§7.2"]]);
  });

  it("refuses a learn phase that overwrites an existing node, allows appends and confidence updates", async () => {
    const { loop, substrates } = await setup();
    loop.handle("apply", async ({ substrates: s }) => {
      const n = await s.memory.store_node({ node: { id: "belief_1", content: "sky is blue", confidence: 0.5 } });
      return { action_id: "act_1", causal_parent_ids: [n.node_id] };
    });
    loop.handle("learn", async ({ substrates: s, trace_id }) => {
      await s.memory.store_node({ node: { id: "observation_1", content: "new" } });
      await s.memory.learn_from_outcome({ outcome: { token: "OutcomeSignal", version: "0.1", trace_id, action_id: "act_1", status: "success", causal_parent_ids: ["belief_1"] } });
      return {};
    });
    expect((await loop.runIteration({ workspace: "w" })).status).toBe("completed");
    const beliefs = substrates.memory.inspect("w").nodes.map((n) => [n.node.id, n.node.confidence]);
    expect(beliefs).toEqual([["belief_1", 0.55], ["observation_1", 0.5]]);

    loop.handle("learn", async ({ substrates: s }) => s.memory.store_node({ node: { id: "belief_1", content: "sky is green" } }));
    const r = await loop.runIteration({ workspace: "w" });
    expect(r.error?.code).toBe("INVARIANT_VIOLATION");
    expect(r.error?.message).toMatch(/would rewrite an existing node/);
  });

  it("is not enforced when the manifest declares it false", async () => {
    const { loop } = await setup(manifestWith((m) => (m.invariants.feedback_immutability = false)));
    loop.handle("learn", async ({ substrates }) => substrates.memory.consolidate({}));
    expect((await loop.runIteration()).status).toBe("completed");
  });
});

describe("kappa_routing (§7.4)", () => {
  const kappa = manifestWith((m) => (m.invariants.kappa_routing = true));

  it.each([
    [0, "fast", "completed"],
    [0, "deliberate", "completed"],
    [0.001, "deliberate", "completed"],
    [0.001, "fast", "failed"],
    [2, undefined, "failed"],
  ])("max_kappa %s with decision %s: %s", async (k, decision, status) => {
    const { loop } = await setup(kappa);
    loop.handle("fetch", () => ({ nodes: [], topology: topology(k) }));
    loop.handle("decide", () => (decision === undefined ? {} : { decision }));
    const r = await loop.runIteration();
    expect(r.status).toBe(status);
    if (status === "failed") expect(r.error?.message).toMatch(/kappa_routing \(§7\.4\).*max_kappa .* > 0, so the route decision must be "deliberate"/);
    // The caller gets the invariant as data, not only inside the message.
    if (status === "failed") expect(r.error).toMatchObject({ code: "INVARIANT_VIOLATION", invariant: "kappa_routing", section: "§7.4" });
    else expect(r.error).toBeUndefined();
  });

  it("sees a TopologyContext the memory substrate returned during the iteration", async () => {
    const { loop } = await setup(kappa);
    loop.handle("fetch", async ({ substrates }) => {
      const a = await substrates.memory.store_node({ node: { content: "a" } });
      const b = await substrates.memory.store_node({ node: { content: "b" } });
      await substrates.memory.store_edge({ src: a.node_id, dst: b.node_id, type: "causal" });
      await substrates.memory.store_edge({ src: b.node_id, dst: a.node_id, type: "causal" });
      return { ids: [a.node_id, b.node_id] };
    });
    loop.handle("decide", async ({ substrates, input }) => {
      const t = await substrates.memory.topology_analyze({ node_ids: (input as { ids: string[] }).ids });
      expect(t.max_kappa).toBeGreaterThan(0);
      return { decision: "fast" };
    });
    expect((await loop.runIteration()).error?.message).toMatch(/kappa_routing/);
  });

  it("refuses a token that does not match its schema where it enters", async () => {
    const { loop } = await setup(kappa);
    loop.handle("fetch", () => ({ topology: { token: "TopologyContext", version: "0.1", trace_id: TRACE } }));
    const r = await loop.runIteration();
    expect(r.error?.code).toBe("TOKEN_INVALID");
    expect(r.error?.message).toMatch(/schema\/tokens\/TopologyContext\.v0\.1\.json/);
  });
});

describe("quorum_before_commit (§7.5)", () => {
  const quorum = manifestWith((m) => (m.invariants.quorum_before_commit = true));

  it.each([
    [0.65, "failed"],
    [0.66, "completed"],
    [0.9, "completed"],
  ])("a DeliberationResult with confidence %s: %s", async (confidence, status) => {
    const { loop, substrates } = await setup(quorum);
    loop.handle("decide", () => ({ decision: "deliberate", result: deliberation(confidence) }));
    loop.handle("apply", async ({ substrates: s }) => {
      await s.memory.store_node({ node: { content: "committed?" } });
      return { causal_parent_ids: [] };
    });
    const r = await loop.runIteration({ workspace: "w" });
    expect(r.status).toBe(status);
    expect(substrates.memory.inspect("w").nodes).toHaveLength(status === "completed" ? 1 : 0);
    if (status === "failed") expect(r.error?.message).toMatch(/confidence 0\.65 < quorum_threshold 0\.66; the act cannot commit/);
  });

  it("refuses an act when no DeliberationResult was reached, and honours a host threshold", async () => {
    const { loop } = await setup(quorum);
    expect((await loop.runIteration()).error?.message).toMatch(/no DeliberationResult has been reached/);
    const strict = await setup(manifestWith((m) => ((m.invariants.quorum_before_commit = true), (m.loop_id = "test.strict"))), { load: { quorumThreshold: 0.95 } });
    strict.loop.handle("decide", () => ({ result: deliberation(0.9) }));
    expect((await strict.loop.runIteration()).error?.message).toMatch(/0\.9 < quorum_threshold 0\.95/);
  });
});

describe("outcome_grounding (§7.6)", () => {
  it("refuses an act without causal_parent_ids, accepts an empty list", async () => {
    const { loop, audit } = await setup();
    loop.handle("apply", () => ({ done: true }));
    const r = await loop.runIteration({ traceId: TRACE });
    expect(r.error?.message).toMatch(/outcome_grounding \(§7\.6\) refused in loop test\.loop, phase apply: the act output has no causal_parent_ids/);
    expect(auditShape(await audit(TRACE))).toContain("invariant.violated apply");
    loop.handle("apply", () => ({ causal_parent_ids: [] }));
    expect((await loop.runIteration()).status).toBe("completed");
  });

  it("records the causal parents in the act's audit event", async () => {
    const { loop, audit } = await setup();
    loop.handle("apply", () => ({ causal_parent_ids: ["node_5", "node_12"] }));
    await loop.runIteration({ traceId: TRACE });
    expect((await audit(TRACE)).find((e) => e.phase_id === "apply")?.data).toMatchObject({ causal_parent_ids: ["node_5", "node_12"] });
  });
});

describe("policy and permission before every act (§2, §9.2, §9.4)", () => {
  it("does not run an act the policy substrate denies", async () => {
    const { loop, substrates } = await setup();
    let ran = false;
    loop.handle("apply", () => ((ran = true), { causal_parent_ids: [] }));
    substrates.policy.setRules([{ action: "test.loop.apply", decision: "deny", reason: "frozen" }]);
    const r = await loop.runIteration();
    expect(ran).toBe(false);
    expect(r.error).toMatchObject({ code: "POLICY_DENIED" });
    expect(r.error?.message).toMatch(/frozen/);
    substrates.policy.setRules([{ action: "other", decision: "deny" }]);
    expect((await loop.runIteration()).status).toBe("completed");
  });

  it("asks the policy for the phase's policy_check action and the auth substrate for the agent", async () => {
    const m = manifestWith((m) => (m.phases[2].policy_check = "delegatic.check_policy"));
    const { loop, substrates } = await setup(m);
    substrates.policy.setRules([{ action: "delegatic.check_policy", actor: "mallory", decision: "deny" }]);
    expect((await loop.runIteration({ input: { agent_id: "mallory" } })).error?.code).toBe("POLICY_DENIED");
    substrates.auth.setGrants([{ agent_id: "eve", decision: "deny" }]);
    expect((await loop.runIteration({ input: { agent_id: "eve" } })).error?.code).toBe("PERMISSION_DENIED");
    expect((await loop.runIteration({ input: { agent_id: "alice" } })).status).toBe("completed");
  });
});

describe("trace_id_propagation (§7.7) and append-only audit (§7.3)", () => {
  it("every substrate call of an iteration carries its trace id", async () => {
    const { loop, substrates } = await setup();
    loop.handle("apply", async ({ substrates: s }) => {
      await s.memory.store_node({ node: { content: "x" } });
      return { causal_parent_ids: [] };
    });
    await loop.runIteration({ workspace: "w", traceId: TRACE });
    const mutations = substrates.memory.mutations("w");
    expect(mutations.length).toBeGreaterThan(0);
    expect(new Set(mutations.map((m) => m.trace_id))).toEqual(new Set([TRACE]));
  });

  it("refuses an audit event carrying another trace id; holds accepted ones until the phase commits", async () => {
    const { loop, audit } = await setup();
    loop.handle("apply", async ({ substrates: s, trace_id }) => {
      await s.audit.append_event({ event: { event_id: "x", event_type: "node.created", trace_id, loop_id: "test.loop", phase_id: "apply", workspace_id: "default", timestamp: "", signature: "", seq: 0 } });
      return { causal_parent_ids: [] };
    });
    await loop.runIteration({ traceId: TRACE });
    expect(auditShape(await audit(TRACE))).toContain("node.created apply");
    loop.handle("apply", async ({ substrates: s }) => {
      await s.audit.append_event({ event: { event_id: "y", event_type: "node.created", trace_id: "f".repeat(32), loop_id: "test.loop", phase_id: "apply", workspace_id: "default", timestamp: "", signature: "", seq: 0 } });
      return { causal_parent_ids: [] };
    });
    expect((await loop.runIteration()).error?.message).toMatch(/trace_id_propagation \(§7\.7\)/);
  });

  it("gives handlers an audit substrate with no way to update or delete", async () => {
    const { loop } = await setup();
    let keys: string[] = [];
    loop.handle("fetch", ({ substrates }) => ((keys = Object.keys(substrates.audit)), {}));
    await loop.runIteration();
    expect(keys.sort()).toEqual(["append_event", "query_by_trace"]);
  });
});

describe("phase_atomicity (§7.1)", () => {
  it("refuses substrate calls a handler makes after its phase ended", async () => {
    const { loop } = await setup();
    let late: Promise<unknown> | undefined;
    loop.handle("fetch", ({ substrates }) => {
      late = new Promise((r) => setTimeout(r, 5)).then(() => substrates.memory.store_node({ node: { content: "late" } }));
      return {};
    });
    const seen = await violations(loop);
    await loop.runIteration();
    await expect(late).rejects.toThrow(/phase_atomicity \(§7\.1\).*called after the phase ended/);
    expect(seen.map((v) => v.invariant)).toEqual(["phase_atomicity"]);
  });
});

describe("phase_atomicity (§7.1): the near miss", () => {
  it("accepts every substrate call a handler makes and awaits before its phase ends", async () => {
    const { loop, substrates } = await setup();
    loop.handle("fetch", async ({ substrates: s }) => {
      const a = await s.memory.store_node({ node: { content: "in time" } });
      await s.memory.store_node({ node: { content: `after ${a.node_id}` } });
      return {};
    });
    const seen = await violations(loop);
    const r = await loop.runIteration({ workspace: "w" });
    expect(r.status).toBe("completed");
    expect(seen).toEqual([]);
    expect(substrates.memory.inspect("w").nodes).toHaveLength(2);
  });
});

describe("a replayed idempotent phase commits under this iteration's invariants and authorisation", () => {
  // Only `query` enters the signatures: later iterations replay with other tokens around them.
  const idempotent = (phase: number, mutate: (m: Record<string, any>) => void) =>
    manifestWith((m) => {
      Object.assign(m.phases[phase], { idempotent: true, signature: "hash(query)" });
      mutate(m);
    });

  it("a replayed route that decided fast fails once the iteration sees max_kappa > 0", async () => {
    const { loop } = await setup(idempotent(1, (m) => (m.invariants.kappa_routing = true)));
    let k = 0;
    let decided = 0;
    loop.handle("fetch", () => ({ query: "q", topology: topology(k) }));
    loop.handle("decide", ({ input }) => (decided++, { query: (input as { query: string }).query, decision: "fast" }));
    expect((await loop.runIteration({ input: { query: "q" } })).status).toBe("completed");
    k = 3;
    const replayed = await loop.runIteration({ input: { query: "q" } });
    expect(replayed.status).toBe("failed");
    expect(replayed.error?.message).toMatch(/kappa_routing \(§7\.4\).*max_kappa 3 > 0/);
    k = 0; // the near miss: the same replay with no cycle in sight commits
    const calm = await loop.runIteration({ input: { query: "q" } });
    expect(calm.status).toBe("completed");
    expect(calm.phases[1]).toMatchObject({ phase_id: "decide", status: "replayed" });
    expect(decided).toBe(1);
  });

  it("a replayed act needs this iteration's quorum", async () => {
    const { loop } = await setup(idempotent(2, (m) => (m.invariants.quorum_before_commit = true)));
    let confidence = 0.9;
    let acted = 0;
    loop.handle("fetch", () => ({ query: "q" }));
    loop.handle("decide", () => ({ query: "q", decision: "deliberate", result: deliberation(confidence) }));
    loop.handle("apply", () => (acted++, { query: "q", causal_parent_ids: [] }));
    expect((await loop.runIteration({ input: { query: "q" } })).status).toBe("completed");
    confidence = 0.1;
    const low = await loop.runIteration({ input: { query: "q" } });
    expect(low.error?.message).toMatch(/quorum_before_commit \(§7\.5\).*confidence 0\.1 < quorum_threshold 0\.66/);
    confidence = 0.7;
    const enough = await loop.runIteration({ input: { query: "q" } });
    expect(enough.phases[2]).toMatchObject({ phase_id: "apply", status: "replayed" });
    expect(enough.status).toBe("completed");
    expect(acted).toBe(1);
  });

  it("a replayed act is refused once the policy denies it, and allowed again after", async () => {
    const { loop, substrates } = await setup(idempotent(2, () => {}));
    let acted = 0;
    loop.handle("fetch", () => ({ query: "q" }));
    loop.handle("apply", () => (acted++, { causal_parent_ids: [] }));
    expect((await loop.runIteration({ input: { query: "q" } })).status).toBe("completed");
    substrates.policy.setRules([{ action: "test.loop.apply", decision: "deny", reason: "frozen" }]);
    const denied = await loop.runIteration({ input: { query: "q" } });
    expect(denied.error).toMatchObject({ code: "POLICY_DENIED" });
    substrates.policy.setRules([]);
    const allowed = await loop.runIteration({ input: { query: "q" } });
    expect(allowed.phases[2]).toMatchObject({ phase_id: "apply", status: "replayed" });
    expect(acted).toBe(1);
  });
});
