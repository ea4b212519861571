/**
 * Stopping and starting a host again: stop() is bounded by a deadline (a receiver that never
 * acknowledges cannot hold the host), a host started again after a stop sends and takes signals
 * again, and a stopped host refuses signals in a way senders retry.
 */
import { describe, expect, it } from "vitest";
import { ReceiverUnavailableError, type Ack, type Transport } from "../../src/connections/contracts.js";
import { buildEnvelope } from "../../src/connections/envelope.js";
import { DEFAULT_STOP_TIMEOUT_MS } from "../../src/host/host.js";
import { initSignatures } from "../../src/runtime/index.js";
import type { PulseCloudEvent } from "../../src/tokens/types.js";
import { TRACE } from "../runtime/harness.js";
import { START, SwitchedTransport, connectionTo, oneHost, ofType, receiverManifest, trailOf, twoHosts } from "./signals-harness.js";

/** Host A's signals go straight into host B's receive(): what an HTTP hop does, minus the network. */
const direct = (receive: (loopId: string, envelope: unknown) => Promise<Ack>): Transport => ({ send: (envelope, toLoop) => receive(toLoop, envelope) });

describe("host.stop() deadline", () => {
  it("gives up on a receiver that never answers: the signal is dropped (audited) and stop resolves at the deadline", async () => {
    const { clock, a, received } = await twoHosts(connectionTo(), (receive) => new SwitchedTransport(receive));
    const r = await a.host.trigger("t.a", { input: { n: 1 } });
    let result: Awaited<ReturnType<typeof a.host.stop>> | undefined;
    const stopping = a.host.stop({ timeoutMs: 5_000 }).then((x) => (result = x));
    await clock.advance(4_999);
    expect(result).toBeUndefined(); // still retrying within the deadline
    await clock.advance(1);
    await stopping;
    expect(result).toEqual({ timedOut: true, signalsDropped: 1, iterationsRunning: 0 });
    expect(received.actions).toEqual([]);
    expect(ofType(a.events, "signal.dropped").map((e) => e.detail)).toEqual(["stopped"]);
    expect(ofType(a.events, "host.note").map((e) => e.message)).toContainEqual(expect.stringMatching(/^stop: 5000 ms passed with work left: 1 undelivered signal\(s\) dropped/));
    const trail = await trailOf(a.audit, r.trace_id);
    expect(trail.filter((e) => e.event_type === "signal.dropped").map((e) => e.data)).toEqual([expect.objectContaining({ reason: "stopped", to_loop: "t.b" })]);
  });

  it("waits for a receiver that answers before the deadline: delivered, nothing dropped", async () => {
    const { clock, a, received, transport } = await twoHosts(connectionTo(), (receive) => new SwitchedTransport(receive));
    await a.host.trigger("t.a", { input: { n: 1 } });
    const stopping = a.host.stop({ timeoutMs: 5_000 });
    await clock.advance(2_000);
    (transport as SwitchedTransport).up = true;
    await clock.advance(1_000);
    expect(await stopping).toEqual({ timedOut: false, signalsDropped: 0, iterationsRunning: 0 });
    expect(received.actions).toEqual(["act_1"]);
    expect(ofType(a.events, "signal.dropped")).toEqual([]);
  });

  it("defaults to 10 s", async () => {
    expect(DEFAULT_STOP_TIMEOUT_MS).toBe(10_000);
    const { clock, a } = await twoHosts(connectionTo(), (receive) => new SwitchedTransport(receive));
    await a.host.trigger("t.a", { input: { n: 1 } });
    let done = false;
    const stopping = a.host.stop().then(() => (done = true));
    await clock.advance(9_999);
    expect(done).toBe(false);
    await clock.advance(1);
    await stopping;
    expect(done).toBe(true);
  });

  it("reports an iteration still running at the deadline, and resolves anyway", async () => {
    const { clock, host, events } = await oneHost(connectionTo());
    let release = () => {};
    host.loop("t.b")!.handle("fetch", () => new Promise((resolve) => (release = () => resolve({}))));
    host.start();
    const running = host.trigger("t.b", {});
    const result = host.stop({ timeoutMs: 1_000 });
    await clock.advance(1_000);
    expect(await result).toEqual({ timedOut: true, signalsDropped: 0, iterationsRunning: 1 });
    expect(ofType(events, "host.note").at(-1)?.message).toMatch(/1 iteration\(s\) still running/);
    release();
    await running;
  });
});

describe("a host started again after stop()", () => {
  it("sends signals again (in process): none is dropped as 'stopped'", async () => {
    const { host, events, received } = await oneHost(connectionTo());
    host.start();
    await host.trigger("t.a", { input: { n: 1 } });
    await host.stop();
    host.start();
    await host.trigger("t.a", { input: { n: 2 } });
    await host.settled();
    await host.stop();
    expect(received.actions).toEqual(["act_1", "act_2"]);
    expect(ofType(events, "signal.dropped")).toEqual([]);
  });

  it("while stopped, refuses signals as unavailable (not rejected); the sender retries and delivers once it is back", async () => {
    const { clock, a, b, received } = await twoHosts(connectionTo(), direct);
    b.host.start();
    await b.host.stop();
    await a.host.trigger("t.a", { input: { n: 1 } });
    await clock.advance(500);
    expect(received.actions).toEqual([]);
    const retrying = ofType(a.events, "signal.retrying");
    expect(retrying.length).toBeGreaterThan(0);
    expect(retrying[0]).toMatchObject({ type: "signal.retrying" });
    expect(ofType(a.events, "signal.dropped")).toEqual([]);
    b.host.start();
    await clock.advance(1_000);
    await b.host.settled();
    expect(received.actions).toEqual(["act_1"]);
    expect(ofType(a.events, "signal.delivered").map((e) => e.detail)).toEqual(["accepted"]);
  });

  it("a stopped host throws ReceiverUnavailableError from receive(); a running one accepts the same envelope", async () => {
    const { host } = await oneHost(connectionTo());
    await initSignatures();
    const envelope = buildEnvelope({ connection: connectionTo(), token: { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: "act_9", status: "success" } as never, loopId: "t.a", phaseId: "learn", workspaceId: "default", traceId: TRACE, spanId: "00f067aa0ba902b7", signature: `blake3:${"9".repeat(64)}`, time: START });
    host.start();
    await host.stop();
    await expect(host.receive("t.b", envelope)).rejects.toBeInstanceOf(ReceiverUnavailableError);
    host.start();
    expect(await host.receive("t.b", envelope)).toMatchObject({ outcome: "accepted" });
    await host.stop();
  });
});

describe("a stopped loop", () => {
  it("rejects a signal, and the event stream does not report it as accepted", async () => {
    const { host, events, received } = await oneHost(connectionTo());
    await initSignatures();
    const envelope: PulseCloudEvent = buildEnvelope({ connection: connectionTo(), token: { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: "act_7", status: "success" } as never, loopId: "t.a", phaseId: "learn", workspaceId: "default", traceId: TRACE, spanId: "00f067aa0ba902b7", signature: `blake3:${"7".repeat(64)}`, time: START });
    host.loop("t.b")!.stop();
    expect(await host.receive("t.b", envelope)).toEqual({ outcome: "rejected", reason: "loop t.b is stopped" });
    expect(await host.receive("t.b", envelope)).toEqual({ outcome: "rejected", reason: "loop t.b is stopped" });
    expect(ofType(events, "signal.received")).toEqual([]);
    await host.settled();
    expect(received.actions).toEqual([]);
  });
});
