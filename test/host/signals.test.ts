import { CloudEvent } from "cloudevents";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SignalChannel } from "../../src/connections/channel.js";
import type { Ack, DeliveryEvent, Transport } from "../../src/connections/contracts.js";
import { buildEnvelope, envelopeId, readEnvelope } from "../../src/connections/envelope.js";
import type { Escalation } from "../../src/host/index.js";
import type { Connection } from "../../src/manifest/types.js";
import { VirtualClock, initSignatures } from "../../src/runtime/index.js";
import { withMutant } from "../../src/runtime/mutants.js";
import type { PulseCloudEvent, Token } from "../../src/tokens/types.js";
import { TRACE } from "../runtime/harness.js";
import {
  START,
  ScheduledTransport,
  SlowTransport,
  SwitchedTransport,
  trailOf,
  connectionTo,
  oneHost,
  ofType,
  receiverManifest,
  signalNumber,
  twoHosts,
  type Fate,
  type Step,
} from "./signals-harness.js";

const learnSignature = (r: { phases: { phase_id: string; signature: string }[] }) => r.phases.find((p) => p.phase_id === "learn")?.signature as string;

describe("in-process delivery (§3.5, §8.5)", () => {
  const fromA = (params: Record<string, string>) => receiverManifest((m) => (m.cadence = { type: "cross_loop_signal", params: { from_loop: "t.a", ...params } }));

  it.each([
    ["a cross_loop_signal cadence matching loop, phase and token", fromA({ from_phase: "learn", token: "OutcomeSignal" }), "decide", "fetch"],
    ["a cross_loop_signal cadence naming only the loop", fromA({}), "decide", "fetch"],
    ["a cadence for another phase of t.a: the connection's to_phase", fromA({ from_phase: "apply" }), "decide", "decide"],
    ["a cadence for another token: the connection's to_phase", fromA({ token: "TopologyContext" }), "decide", "decide"],
    ["a cadence for another loop: the connection's to_phase", receiverManifest((m) => (m.cadence = { type: "cross_loop_signal", params: { from_loop: "t.other" } })), "decide", "decide"],
    ["no matching cadence and no to_phase: the normal entry", receiverManifest(), undefined, "fetch"],
  ])("%s", async (_name, receiver, toPhase, entry) => {
    const { host, events, received, auditB } = await oneHost(connectionTo(toPhase ? { to_phase: toPhase } : {}), { receiver });
    host.start();
    const r = await host.trigger("t.a", { input: { n: 1 } });
    await host.settled();

    const started = ofType(events, "iteration.started").filter((e) => e.loop_id === "t.b");
    expect(started.map((e) => e.entry)).toEqual([entry]);
    // The entry phase is given the token itself.
    expect(received.inputs).toEqual([{ token: "OutcomeSignal", version: "0.1", trace_id: r.trace_id, action_id: "act_1", status: "success" }]);
    // The receiving iteration records the signal (and the emitting trace) as its cause.
    const [first] = await trailOf(auditB, started[0]!.trace_id);
    expect(first).toMatchObject({ event_type: "iteration.started", data: { entry, cause: { signal: envelopeId("a_to_b", learnSignature(r), r.trace_id), source: "loop:t.a/phase:learn", trace_id: r.trace_id } } });
    await host.stop();
  });

  it("sync delivers before the emitting iteration continues; async does not wait", async () => {
    for (const cadence of ["sync", "async"] as const) {
      const log: string[] = [];
      const { clock, a, drain } = await twoHosts(connectionTo({ emit_phase: "apply", cadence }), (receive, c) => new SlowTransport(c, 1_000, receive, log));
      a.host.loop("t.a")!.handle("learn", () => (log.push(`t.a learn at +${clock.now() - START}ms`), { learned: true }));
      const running = a.host.trigger("t.a", { input: { n: 1 } });
      await clock.runAll();
      expect((await running).status).toBe("completed");
      await drain();
      expect(log, cadence).toEqual(cadence === "sync" ? ["t.b received act_1", "t.a learn at +1000ms"] : ["t.a learn at +0ms", "t.b received act_1"]);
    }
  });

  it("a paused receiver holds signals (acknowledged) and runs them, in order, on resume", async () => {
    const { host, events, received } = await oneHost(connectionTo());
    host.start();
    host.pause("t.b");
    await host.trigger("t.a", { input: { n: 1 } });
    await host.trigger("t.a", { input: { n: 2 } });
    await host.settled();
    expect(received.actions).toEqual([]);
    expect(ofType(events, "signal.delivered").map((e) => e.detail)).toEqual(["accepted", "accepted"]);

    host.resume("t.b");
    await host.settled();
    expect(received.actions).toEqual(["act_1", "act_2"]);
    // Resumed, it takes signals at once again.
    await host.trigger("t.a", { input: { n: 3 } });
    await host.settled();
    expect(received.actions).toEqual(["act_1", "act_2", "act_3"]);
    await host.stop();
  });

  it("the drops-signal mutant acknowledges signals without delivering them (the unmodified host delivers)", async () => {
    for (const mutant of [undefined, "drops-signal"] as const) {
      const { host, events, received } = await oneHost(connectionTo(), { host: withMutant({}, mutant) });
      host.start();
      await host.trigger("t.a", { input: { n: 1 } });
      await host.stop();
      // The sender cannot tell: both report the signal delivered.
      expect(ofType(events, "signal.delivered"), String(mutant)).toHaveLength(1);
      expect(received.actions, String(mutant)).toEqual(mutant ? [] : ["act_1"]);
      expect(ofType(events, "signal.received"), String(mutant)).toHaveLength(mutant ? 0 : 1);
    }
  });
});

describe("envelope (§10.1, decisions.md)", () => {
  function emission(overrides: Record<string, unknown> = {}) {
    return {
      connection: connectionTo({ to_phase: "decide" }),
      token: { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: "act_1", status: "success" },
      loopId: "t.a",
      phaseId: "learn",
      workspaceId: "ws_1",
      traceId: TRACE,
      spanId: "00f067aa0ba902b7",
      signature: `blake3:${"a".repeat(64)}`,
      time: START,
      ...overrides,
    } as Parameters<typeof buildEnvelope>[0];
  }

  it("is what a receiver gets: CloudEvents 1.0 attributes from the emitting phase, its trace and the token as data", async () => {
    const seen: PulseCloudEvent[] = [];
    const { clock, a, drain } = await twoHosts(connectionTo({ to_phase: "decide" }), (receive) => ({ send: (e, to) => (seen.push(e), receive(to, e)) }));
    await clock.advance(1_234);
    const r = await a.host.trigger("t.a", { input: { n: 7 } });
    await drain();
    expect(seen).toHaveLength(1);
    const envelope = seen[0]!;
    expect(envelope).toEqual({
      specversion: "1.0",
      type: "org.opensentience.pulse.OutcomeSignal",
      source: "loop:t.a/phase:learn",
      subject: `trace_id:${r.trace_id}`,
      id: envelopeId("a_to_b", learnSignature(r), r.trace_id),
      time: new Date(START + 1_234).toISOString(),
      datacontenttype: "application/json",
      traceparent: expect.stringMatching(new RegExp(`^00-${r.trace_id}-[0-9a-f]{16}-01$`)),
      pulsetoloop: "t.b",
      pulsetophase: "decide",
      pulseworkspace: "default",
      pulseconnection: "a_to_b",
      data: { token: "OutcomeSignal", version: "0.1", trace_id: r.trace_id, action_id: "act_7", status: "success" },
    });
    expect(envelope.id).toMatch(/^evt_[0-9a-f]{32}$/);
    // No dataschema: the type names the token and its schema (decisions.md).
    expect("dataschema" in envelope).toBe(false);
    // Handed to every transport as is: nobody downstream can alter what was audited.
    expect(Object.isFrozen(envelope) && Object.isFrozen(envelope.data)).toBe(true);
  });

  it("is a CloudEvent the cloudevents SDK accepts as it is", async () => {
    await initSignatures();
    const envelope = buildEnvelope(emission());
    // Strict validation on: the SDK throws on anything CloudEvents 1.0 does not allow.
    const event = new CloudEvent(envelope as never, true);
    expect(JSON.parse(JSON.stringify(event))).toEqual(JSON.parse(JSON.stringify(envelope)));
  });

  it("leaves the emitting phase's output as it was: the next phase may still change its input", async () => {
    const { host, received } = await oneHost(connectionTo({ emit_phase: "apply" }));
    const a = host.loop("t.a")!;
    // apply returns the token itself, which is also learn's input.
    a.handle("apply", ({ trace_id }) => ({ token: "OutcomeSignal", version: "0.1", trace_id, action_id: "act_1", status: "success", causal_parent_ids: [] }));
    a.handle("learn", ({ input }) => ((input as Record<string, unknown>).seen = true, { learned: true }));
    const r = await host.trigger("t.a", { input: { n: 1 } });
    await host.settled();
    expect(r.status).toBe("completed");
    // The signal carries the token as it was emitted, before learn changed it.
    expect(received.inputs).toEqual([{ token: "OutcomeSignal", version: "0.1", trace_id: r.trace_id, action_id: "act_1", status: "success", causal_parent_ids: [] }]);
  });

  it("keeps its id when the same phase run is sent again, and changes it with the signature or the connection", async () => {
    await initSignatures();
    const first = buildEnvelope(emission());
    expect(buildEnvelope(emission({ spanId: "b7ad6b7169203331", time: START + 60_000 })).id).toBe(first.id);
    expect(buildEnvelope(emission({ signature: `blake3:${"b".repeat(64)}` })).id).not.toBe(first.id);
    expect(buildEnvelope(emission({ connection: connectionTo({ id: "a_to_b_2" }) })).id).not.toBe(first.id);
  });

  it("cannot be built around a token that fails its schema", async () => {
    await initSignatures();
    const { status: _status, ...noStatus } = emission().token as unknown as Record<string, unknown>;
    expect(() => buildEnvelope(emission({ token: noStatus }))).toThrow(expect.objectContaining({ code: "TOKEN_INVALID", message: expect.stringMatching(/status/) }));
    expect(buildEnvelope(emission()).data).toMatchObject({ status: "success" });
  });

  describe("reading an arriving envelope", () => {
    const valid = async () => (await initSignatures(), { ...buildEnvelope(emission()) } as Record<string, unknown>);
    const without = (e: Record<string, unknown>, key: string) => Object.fromEntries(Object.entries(e).filter(([k]) => k !== key));

    it.each(["specversion", "type", "source", "subject", "id", "time", "datacontenttype", "data"])("refuses an envelope without %s", async (attribute) => {
      const envelope = without(await valid(), attribute);
      expect(() => readEnvelope(envelope)).toThrow(expect.objectContaining({ code: "ENVELOPE_INVALID", message: expect.stringContaining(`'${attribute}'`) }));
    });

    it.each([
      ["a specversion other than 1.0", (e: Record<string, unknown>) => ({ ...e, specversion: "0.3" }), "ENVELOPE_INVALID", /specversion/],
      ["a type naming another token than data", (e: Record<string, unknown>) => ({ ...e, type: "org.opensentience.pulse.TopologyContext" }), "ENVELOPE_INVALID", /data\/token/],
      ["data failing the token's schema", (e: Record<string, unknown>) => ({ ...e, data: without(e.data as Record<string, unknown>, "action_id") }), "TOKEN_INVALID", /action_id/],
      ["a time that is not RFC 3339", (e: Record<string, unknown>) => ({ ...e, time: "yesterday" }), "ENVELOPE_INVALID", /time/],
      ["a dataschema that is not a URI", (e: Record<string, unknown>) => ({ ...e, dataschema: "OutcomeSignal schema" }), "ENVELOPE_INVALID", /dataschema/],
      ["an extension name with capitals", (e: Record<string, unknown>) => ({ ...e, pulseTrace: "x" }), "ENVELOPE_INVALID", /pattern/],
      ["a source that is not loop:<id>/phase:<id>", (e: Record<string, unknown>) => ({ ...e, source: "t.a/learn" }), "ENVELOPE_INVALID", /source/],
    ])("refuses %s", async (_name, change, code, message) => {
      const envelope = change(await valid());
      expect(() => readEnvelope(envelope)).toThrow(expect.objectContaining({ code, message: expect.stringMatching(message) }));
    });

    it.each([
      ["the envelope as sent", (e: Record<string, unknown>) => e],
      ["a dataschema URI", (e: Record<string, unknown>) => ({ ...e, dataschema: "https://opensentience.org/schemas/tokens/OutcomeSignal.v0.1.json" })],
      ["a time with an offset", (e: Record<string, unknown>) => ({ ...e, time: "2026-04-10T14:00:00+02:00" })],
      ["an unknown lowercase extension and a tracestate", (e: Record<string, unknown>) => ({ ...e, partitionkey: "p1", tracestate: "congo=t61rcWkgMzE" })],
      ["data with fields beyond the token's", (e: Record<string, unknown>) => ({ ...e, data: { ...(e.data as object), evidence: { run: 3 } } })],
      ["no traceparent and no routing extensions", (e: Record<string, unknown>) => without(without(without(e, "traceparent"), "pulsetoloop"), "pulsetophase")],
    ])("accepts %s", async (_name, change) => {
      const envelope = change(await valid());
      expect(readEnvelope(envelope)).toEqual(envelope);
    });

    it.each([null, [], "evt", 42])("refuses %j, which is not an envelope", (value) => {
      expect(() => readEnvelope(value)).toThrow(expect.objectContaining({ code: "ENVELOPE_INVALID" }));
    });
  });

  it("a receiving host rejects an invalid envelope with the reason, without using up its id", async () => {
    const { host, received } = await oneHost(connectionTo());
    await initSignatures();
    const envelope = { ...buildEnvelope(emission({ loopId: "t.a" })) } as Record<string, unknown>;
    const { action_id: _a, ...data } = envelope.data as Record<string, unknown>;
    expect(await host.receive("t.b", { ...envelope, data })).toEqual({ outcome: "rejected", reason: expect.stringMatching(/OutcomeSignal .*action_id/) });
    expect(await host.receive("t.nowhere", envelope)).toEqual({ outcome: "rejected", reason: "no loop t.nowhere in this host" });
    // The valid envelope with the same id is still new to t.b, and only once.
    const first = await host.receive("t.b", envelope);
    expect(first).toEqual({ outcome: "accepted", committed: expect.any(Promise) });
    // While the first delivery's iteration runs, a redelivery is a duplicate waiting for the same commit.
    expect(await host.receive("t.b", envelope)).toEqual({ outcome: "duplicate", committed: first.committed });
    await first.committed;
    await host.settled();
    // Once it committed, a duplicate is answered at once.
    expect(await host.receive("t.b", envelope)).toEqual({ outcome: "duplicate" });
    expect(received.actions).toEqual(["act_1"]);
  });

  it("a signal held for a paused loop is acknowledged only once its iteration commits; one that never ran (the host stopped) is taken again later", async () => {
    const { host, received } = await oneHost(connectionTo());
    await initSignatures();
    const envelope = { ...buildEnvelope(emission({ loopId: "t.a" })) } as Record<string, unknown>;
    host.start();
    host.pause("t.b");
    const held = await host.receive("t.b", envelope);
    expect(held).toEqual({ outcome: "accepted", committed: expect.any(Promise) });
    let settled: string | undefined;
    held.committed?.then(
      () => (settled = "committed"),
      (e: Error) => (settled = e.message),
    );
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBeUndefined();
    await host.stop();
    await new Promise((r) => setTimeout(r, 0));
    expect(settled).toMatch(/the host stopped before t\.b, paused, took the signal/);
    expect(received.actions).toEqual([]);
    // Started again: the id was forgotten with the failed commit, so the redelivery runs (not a duplicate).
    host.start();
    host.resume("t.b");
    const again = await host.receive("t.b", envelope);
    expect(again).toEqual({ outcome: "accepted", committed: expect.any(Promise) });
    await again.committed;
    expect(received.actions).toEqual(["act_1"]);
    // The near-miss: paused, then resumed, a held signal commits and is acknowledged.
    const other = { ...buildEnvelope(emission({ loopId: "t.a", traceId: "2".repeat(32) })) } as Record<string, unknown>;
    host.pause("t.b");
    const later = await host.receive("t.b", other);
    host.resume("t.b");
    await expect(later.committed).resolves.toBeUndefined();
    expect(received.actions).toHaveLength(2);
    await host.stop();
  });

  it("a rejection is final: the sender drops the signal, audits why, and never retries it", async () => {
    for (const tamper of [true, false]) {
      let sends = 0;
      const link = (receive: (loopId: string, e: unknown) => Promise<Ack>): Transport => ({
        send: (e, to) => {
          sends++;
          const { action_id: _a, ...data } = e.data as unknown as Record<string, unknown>;
          return receive(to, tamper ? { ...e, data } : e);
        },
      });
      const { clock, a, received, drain } = await twoHosts(connectionTo(), link);
      const r = await a.host.trigger("t.a", { input: { n: 1 } });
      await clock.advance(60_000);
      await drain();
      expect(sends).toBe(1);
      expect(received.actions).toEqual(tamper ? [] : ["act_1"]);
      const signals = (await trailOf(a.audit, r.trace_id)).filter((e) => e.event_type.startsWith("signal."));
      expect(signals.map((e) => [e.event_type, e.data?.reason ?? e.data?.outcome])).toEqual([
        ["signal.emitted", undefined],
        tamper ? ["signal.dropped", "rejected"] : ["signal.delivered", "accepted"],
      ]);
      if (tamper) expect(signals[1]!.data?.detail).toMatch(/action_id/);
    }
  });
});

describe("delivery modes (§10.2) over a network that delays, reorders, duplicates and fails", () => {
  const step = fc.record({ delayMs: fc.integer({ min: 0, max: 50 }), fate: fc.constantFrom<Fate>("ok", "lost", "ack_lost", "duplicated") });
  // plans[n][k]: what happens to attempt k of signal n; past the plan the network works.
  const plans = fc.array(fc.array(step, { maxLength: 4 }), { minLength: 8, maxLength: 8 });
  const planOf = (p: Step[][]) => (n: number, attempt: number): Step => p[n]?.[attempt] ?? { delayMs: 0, fate: "ok" };

  async function run(delivery: NonNullable<Connection["delivery"]>, p: Step[][], triggers: number[]) {
    let transport: ScheduledTransport | undefined;
    const pair = await twoHosts(connectionTo({ delivery }), (receive, clock) => (transport = new ScheduledTransport(clock, receive, planOf(p))));
    for (const n of triggers) await pair.a.host.trigger("t.a", { input: { n } });
    await pair.drain();
    const net = transport as ScheduledTransport;
    const count = (list: string[], item: string) => list.filter((x) => x === item).length;
    return { ...pair, net, count };
  }

  it("at_least_once loses nothing; the receiving loop runs each emission once however often the network repeats it (event-id dedupe)", async () => {
    await fc.assert(
      fc.asyncProperty(plans, fc.array(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 10 }), async (p, triggers) => {
        const { a, received, net, count } = await run("at_least_once", p, triggers);
        // A repeated run of the same phase (same signature, another iteration) is another event:
        // emitted and run again. Its redeliveries are recognised by id and run nothing.
        expect(ofType(a.events, "signal.emitted")).toHaveLength(triggers.length);
        expect(ofType(a.events, "signal.delivered")).toHaveLength(triggers.length);
        expect(ofType(a.events, "signal.dropped")).toEqual([]);
        for (const n of new Set(triggers)) {
          expect(net.deliveries.filter((d) => d.n === n).length).toBeGreaterThanOrEqual(1);
          expect(count(received.actions, `act_${n}`), `act_${n}`).toBe(count(triggers.map(String), String(n)));
        }
        expect(received.actions).toHaveLength(triggers.length);
        expect(new Set(ofType(a.events, "signal.emitted").map((e) => e.event_id)).size).toBe(triggers.length);
      }),
      { numRuns: 30 },
    );
  });

  it("exactly_once delivers each signal exactly once and never emits a signal id twice", async () => {
    await fc.assert(
      fc.asyncProperty(plans, fc.array(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 10 }), async (p, triggers) => {
        const { a, received, net, count } = await run("exactly_once", p, triggers);
        const distinct = [...new Set(triggers)];
        expect(ofType(a.events, "signal.emitted")).toHaveLength(distinct.length);
        expect(ofType(a.events, "signal.delivered")).toHaveLength(distinct.length);
        for (const n of distinct) {
          expect(net.deliveries.filter((d) => d.n === n && d.outcome === "accepted")).toHaveLength(1);
          expect(count(received.actions, `act_${n}`), `act_${n}`).toBe(1);
        }
        expect(received.actions).toHaveLength(distinct.length);
      }),
      { numRuns: 30 },
    );
  });

  it("at_most_once sends each signal once: never delivered twice, lost when that one send fails", async () => {
    await fc.assert(
      fc.asyncProperty(plans, fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 8 }), async (p, triggers) => {
        const { a, received, net, count } = await run("at_most_once", p, triggers);
        expect([...net.sends].sort()).toEqual([...triggers].sort());
        for (const n of triggers) {
          const fate = planOf(p)(n, 0).fate;
          // ack_lost reached the receiver although the sender saw a failure: still at most once.
          expect(count(received.actions, `act_${n}`), `act_${n} (${fate})`).toBe(fate === "lost" ? 0 : 1);
        }
        const failed = triggers.filter((n) => ["lost", "ack_lost"].includes(planOf(p)(n, 0).fate));
        expect(ofType(a.events, "signal.dropped").map((e) => e.detail)).toEqual(failed.map(() => "at_most_once_failed"));
      }),
      { numRuns: 30 },
    );
  });

  it("at_least_once retries with exponential backoff until the receiver answers", async () => {
    const { clock, a, received, transport, drain } = await twoHosts(connectionTo(), (receive) => new SwitchedTransport(receive));
    await a.host.trigger("t.a", { input: { n: 1 } });
    await clock.advance(2_000);
    expect(received.actions).toEqual([]);
    (transport as SwitchedTransport).up = true;
    await drain();
    expect(received.actions).toEqual(["act_1"]);
    // signalRetry { baseMs: 100, maxMs: 1000 }: 100, 200, 400, 800, then capped.
    expect(ofType(a.events, "signal.retrying").map((e) => e.at - START).slice(0, 5)).toEqual([0, 100, 300, 700, 1_500]);
    expect(ofType(a.events, "signal.delivered")).toHaveLength(1);
  });
});

describe("backpressure (§10.3): max_inflight 2 while the receiver is down, five signals", () => {
  it.each([
    ["block", 2, [0, 1, 2, 3, 4], []],
    ["drop_oldest", 2, [3, 4], [0, 1, 2]],
    ["drop_newest", 2, [0, 1], [2, 3, 4]],
    ["escalate", 2, [0, 1], [2, 3, 4]],
    ["drop_newest", 5, [0, 1, 2, 3, 4], []],
  ] as const)("overflow_policy %s, max_inflight %d: %j delivered, %j dropped", async (policy, maxInflight, survivors, dropped) => {
    const escalations: Escalation[] = [];
    const { clock, a, received, transport, drain } = await twoHosts(connectionTo({ max_inflight: maxInflight, overflow_policy: policy }), (receive) => new SwitchedTransport(receive), {
      sender: { onEscalation: (e) => void escalations.push(e) },
    });
    const finished: number[] = [];
    const traces: string[] = [];
    const triggering = (async () => {
      for (let n = 0; n < 5; n++) {
        const r = await a.host.trigger("t.a", { input: { n } });
        traces.push(r.trace_id);
        finished.push(n);
      }
    })();
    await clock.advance(5_000);
    const overflowing = policy === "block" && maxInflight < 5;
    // block holds the emitting iteration until there is room; the other policies never wait.
    expect(finished).toEqual(overflowing ? [0, 1] : [0, 1, 2, 3, 4]);

    (transport as SwitchedTransport).up = true;
    await clock.runAll();
    await triggering;
    await drain();
    expect([...received.actions].sort()).toEqual(survivors.map((n) => `act_${n}`));

    const emitted = ofType(a.events, "signal.emitted").map((e) => e.event_id);
    const drops = ofType(a.events, "signal.dropped");
    expect(drops.map((e) => emitted.indexOf(e.event_id)).sort()).toEqual(dropped);
    expect(drops.every((e) => e.detail === "overflow")).toBe(true);
    // Each dropped signal is audited in the trail of the iteration that emitted it.
    for (const n of dropped) {
      const trail = await trailOf(a.audit, traces[n]!);
      expect(trail.find((e) => e.event_type === "signal.dropped")?.data).toMatchObject({ reason: "overflow", detail: policy === "drop_oldest" ? "drop_oldest" : policy });
    }

    if (policy === "escalate") {
      expect(escalations.map((e) => [e.from, e.to, e.envelope.type])).toEqual(dropped.map(() => ["t.a", "human", "org.opensentience.pulse.EscalationRequest"]));
      expect(escalations[0]!.envelope.data.reason).toBe("connection a_to_b overflowed max_inflight 2");
      expect((await trailOf(a.audit, traces[2]!)).map((e) => e.event_type)).toContain("signal.overflow");
    } else {
      expect(escalations).toEqual([]);
    }
  });
});

describe("a channel that closes", () => {
  /** Each send waits until the test releases it. */
  function gated() {
    const waiting: (() => void)[] = [];
    const sent: number[] = [];
    const transport: Transport = {
      send: (e) => (sent.push(signalNumber(e)), new Promise<Ack>((resolve) => waiting.push(() => resolve({ outcome: "accepted" })))),
    };
    return { transport, sent, release: () => waiting.shift()?.() };
  }

  it("close() releases an emitter blocked for room without sending its signal; room lets it through", async () => {
    await initSignatures();
    for (const closing of [true, false]) {
      const { transport, sent, release } = gated();
      const events: DeliveryEvent[] = [];
      const connection = connectionTo({ max_inflight: 1, overflow_policy: "block" });
      const channel = new SignalChannel({ connection, transport, clock: new VirtualClock(START), onEvent: (e) => void events.push(e) });
      const emit = (n: number) => channel.emit({ connection, token: { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: `act_${n}`, status: "success" } as Token, loopId: "t.a", phaseId: "learn", workspaceId: "default", traceId: TRACE, spanId: "00f067aa0ba902b7", signature: `blake3:${String(n).padStart(64, "0")}`, time: START });
      await emit(1);
      const second = emit(2);
      await new Promise((r) => setImmediate(r));
      expect(sent).toEqual([1]);
      if (closing) await channel.close();
      else release();
      await second;
      await new Promise((r) => setImmediate(r));
      expect(sent, `closing: ${closing}`).toEqual(closing ? [1] : [1, 2]);
      const outcome = (n: number) => events.filter((e) => (e.type === "signal.dropped" || e.type === "signal.delivered") && signalNumber(e.envelope) === n).map((e) => (e.type === "signal.dropped" ? e.reason : e.type));
      expect(outcome(2)).toEqual(closing ? ["stopped"] : []);
    }
  });

  it("host.stop() closes the transport it was given", async () => {
    let closed = 0;
    const { a, drain } = await twoHosts(connectionTo(), (receive) => ({ send: (e, to) => receive(to, e), close: async () => void closed++ }));
    await a.host.trigger("t.a", { input: { n: 1 } });
    expect(closed).toBe(0);
    await drain();
    expect(closed).toBe(1);
  });
});

describe("audit (§7.3)", () => {
  it("audits every emission and delivery in the emitting iteration's trail, with its trace id", async () => {
    const { host, auditA, events } = await oneHost(connectionTo());
    host.start();
    const results = [];
    for (let n = 0; n < 3; n++) results.push(await host.trigger("t.a", { input: { n } }));
    await host.stop();
    for (const r of results) {
      const trail = await trailOf(auditA, r.trace_id);
      const id = envelopeId("a_to_b", learnSignature(r), r.trace_id);
      const signals = trail.filter((e) => e.event_type.startsWith("signal."));
      expect(signals).toEqual([
        expect.objectContaining({ event_type: "signal.emitted", trace_id: r.trace_id, phase_id: "learn", signature: learnSignature(r), data: { connection: "a_to_b", event_id: id, to_loop: "t.b", token: "OutcomeSignal", delivery: "at_least_once" } }),
        expect.objectContaining({ event_type: "signal.delivered", trace_id: r.trace_id, phase_id: "learn", signature: learnSignature(r), data: { connection: "a_to_b", event_id: id, to_loop: "t.b", token: "OutcomeSignal", outcome: "accepted", attempts: 1 } }),
      ]);
      // Appended after the iteration's own events or not, the trail stays numbered without gaps.
      expect(trail.map((e) => e.seq)).toEqual(trail.map((_, i) => i));
      expect(events.filter((e) => (e.type === "signal.emitted" || e.type === "signal.delivered") && e.event_id === id).map((e) => [e.type, "trace_id" in e && e.trace_id])).toEqual([
        ["signal.emitted", r.trace_id],
        ["signal.delivered", r.trace_id],
      ]);
    }
  });

  it("a signal the host cannot deliver at all is audited as dropped", async () => {
    const { host, auditA } = await oneHost(connectionTo({ to_loop: "t.elsewhere" }));
    const r = await host.trigger("t.a", { input: { n: 1 } });
    await host.stop();
    const dropped = (await trailOf(auditA, r.trace_id)).find((e) => e.event_type === "signal.dropped");
    expect(dropped?.data).toMatchObject({ reason: "rejected", to_loop: "t.elsewhere", detail: expect.stringMatching(/t\.elsewhere is not in this host/) });
  });
});
