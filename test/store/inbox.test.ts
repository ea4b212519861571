/**
 * Signals that survive a restart: a receiver records the event id in its store's inbox in the
 * same unit as the iteration it starts, so the same signal delivered again after a restart (a
 * sender that never saw the ack) is recognised and runs nothing; another signal still runs.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteStore } from "../../adapters/sqlite/store.js";
import { buildEnvelope } from "../../src/connections/envelope.js";
import { initSignatures } from "../../src/runtime/signature.js";
import type { PulseCloudEvent } from "../../src/tokens/types.js";
import { TRACE } from "../runtime/harness.js";
import { connectionTo, ofType, oneHost } from "../host/signals-harness.js";
import { tempDir } from "./stores.js";

let dir = "";
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = "";
});

async function envelope(n: number): Promise<PulseCloudEvent> {
  await initSignatures();
  const e = buildEnvelope({
    connection: connectionTo(),
    token: { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: `act_${n}`, status: "success" },
    loopId: "t.a",
    phaseId: "learn",
    workspaceId: "default",
    traceId: TRACE,
    spanId: "00f067aa0ba902b7",
    signature: `blake3:${String(n).repeat(64).slice(0, 64)}`,
    time: Date.UTC(2026, 3, 10),
  });
  return JSON.parse(JSON.stringify(e)) as PulseCloudEvent;
}

describe("the inbox", () => {
  it("recognises a signal redelivered after a restart; a new one still starts an iteration", async () => {
    dir = tempDir();
    const path = join(dir, "pulse.db");
    const first = await envelope(1);

    let store = new SqliteStore(path);
    let h = await oneHost(connectionTo(), { host: { store } });
    expect(await h.host.receive("t.b", first)).toMatchObject({ outcome: "accepted" });
    await h.host.settled();
    expect(h.received.actions).toEqual(["act_1"]);
    await h.host.stop();
    await store.close();

    store = new SqliteStore(path);
    h = await oneHost(connectionTo(), { host: { store } });
    expect(await store.received("t.b", "default", first.id)).toBe(true);
    expect(await h.host.receive("t.b", first)).toEqual({ outcome: "duplicate" });
    const second = await envelope(2);
    expect(await h.host.receive("t.b", second)).toMatchObject({ outcome: "accepted" });
    await h.host.settled();
    expect(h.received.actions).toEqual(["act_2"]);
    expect(ofType(h.events, "signal.received").map((e) => e.outcome)).toEqual(["duplicate", "accepted"]);
    await h.host.stop();
    await store.close();
  });
});
