import { describe, expect, it } from "vitest";
import { inMemorySubstrates } from "../../adapters/memory/index.js";
import { substrateAuditSink } from "../../src/coding/audit-sink.js";
import { CostLedger, costOf, priceOf } from "../../src/coding/cost-ledger.js";

describe("cost ledger", () => {
  it("prices by exact name or longest prefix; an unknown model is never $0", () => {
    expect(priceOf("claude-sonnet-4-5").source).toBe("price_table");
    expect(priceOf("gpt-4o-mini-2024").price.input).toBe(0.15); // longest prefix wins over gpt-4o*
    const unknown = priceOf("my-local-llama");
    expect(unknown.source).toBe("default_price");
    expect(costOf({ inputTokens: 1000, outputTokens: 1000 }, unknown.price)).toBeGreaterThan(0);
    expect(costOf({ inputTokens: 1_000_000, outputTokens: 0, cacheReadTokens: 1_000_000 }, { input: 3, output: 15, cacheRead: 0.3 })).toBeCloseTo(3.3);
  });

  it("uses the driver's figure when it has one, but not a $0 for real tokens", async () => {
    const ledger = new CostLedger();
    expect((await ledger.record({ loopId: "l", sessionId: "s", iteration: 1, driver: "claude", model: "claude-sonnet-4-5", usage: { inputTokens: 10, outputTokens: 5 }, costUsd: 0.5 })).costSource).toBe("driver");
    const zero = await ledger.record({ loopId: "l", sessionId: "s", iteration: 2, driver: "opencode", model: "local", usage: { inputTokens: 1000, outputTokens: 100 }, costUsd: 0 });
    expect(zero.costSource).toBe("default_price");
    expect(zero.costUsd).toBeGreaterThan(0);
  });

  it("totals per iteration, session and loop, and records audit events through the audit substrate", async () => {
    const substrates = inMemorySubstrates();
    const call = { trace_id: "0af7651916cd43dd8448eb211c80319c", workspace_id: "ws" };
    const ledger = new CostLedger({ audit: substrateAuditSink(substrates.audit, call, { loopId: "coding.pulse_session", phaseId: "dispatch_agent" }) });
    await ledger.record({ loopId: "L", sessionId: "s1", iteration: 1, driver: "codex", model: "gpt-5", usage: { inputTokens: 1000, outputTokens: 100 } });
    await ledger.record({ loopId: "L", sessionId: "s1", iteration: 1, driver: "codex", model: "gpt-5", usage: { inputTokens: 1000, outputTokens: 100 } });
    await ledger.record({ loopId: "L", sessionId: "s2", iteration: 1, driver: "claude", usage: { inputTokens: 10, outputTokens: 10 }, costUsd: 1 });
    expect(ledger.total({ sessionId: "s1" })).toEqual({ tokens: 2200, costUsd: expect.closeTo(2 * (1000 * 1.25 + 100 * 10) / 1e6, 10), calls: 2 });
    expect(ledger.total({ loopId: "L" }).calls).toBe(3);
    expect(ledger.by("iteration").get("s1#1")?.calls).toBe(2);
    expect(ledger.by("session").get("s2")?.costUsd).toBe(1);
    const events = await substrates.audit.query_by_trace({ trace_id: call.trace_id }, call);
    expect(events.map((e) => [e.event_type, e.seq, (e.data as { sessionId: string }).sessionId, (e.data as { costSource: string }).costSource])).toEqual([
      ["agent.usage", 0, "s1", "price_table"],
      ["agent.usage", 1, "s1", "price_table"],
      ["agent.usage", 2, "s2", "driver"],
    ]);
  });
});
