// A host that lost a loop's fleet lease (Host.release) starts no phase of it: a signal taken for
// that loop meanwhile does not run there, and its `committed` rejects, so a broker gives the
// signal to the lease's next holder instead of acknowledging it. The near miss: the same signal on
// a host holding the lease commits.
import { describe, expect, it } from "vitest";
import { buildEnvelope } from "../../src/connections/envelope.js";
import { initSignatures } from "../../src/runtime/index.js";
import type { PulseCloudEvent } from "../../src/tokens/types.js";
import { TRACE } from "../runtime/harness.js";
import { connectionTo, oneHost } from "./signals-harness.js";

async function envelope(): Promise<PulseCloudEvent> {
  await initSignatures();
  return buildEnvelope({
    connection: connectionTo(),
    token: { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: "act_1", status: "success" },
    loopId: "t.a",
    phaseId: "learn",
    workspaceId: "default",
    traceId: TRACE,
    spanId: "00f067aa0ba902b7",
    signature: `blake3:${"c".repeat(64)}`,
    time: Date.UTC(2026, 3, 10),
  });
}

describe("a signal for a loop whose lease this host lost", () => {
  it("does not run here and is not acknowledged as committed; on a host holding the lease it commits", async () => {
    const fenced = await oneHost(connectionTo());
    fenced.host.release("t.b", "test: another host took its lease over");
    const ack = await fenced.host.receive("t.b", await envelope());
    expect(ack.outcome).toBe("accepted");
    await expect(ack.committed).rejects.toThrow(/no longer this host's/);
    expect(fenced.received.inputs).toEqual([]);

    const holding = await oneHost(connectionTo());
    const ok = await holding.host.receive("t.b", await envelope());
    expect(ok.outcome).toBe("accepted");
    await expect(ok.committed).resolves.toBeUndefined();
    expect(holding.received.inputs).toHaveLength(1);
  });
});
