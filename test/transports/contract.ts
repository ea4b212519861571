/**
 * The behaviour every signal transport owes the host (src/connections/contracts.ts), as one
 * suite that runs against each of them: in-process, HTTP, NATS JetStream. A new transport proves
 * itself by passing it.
 *
 * Transports differ in one respect the suite allows for: what `send` acknowledges. In-process and
 * HTTP report the receiver's own answer; a broker reports that it stored the signal, and the
 * receiver's answer then decides what the broker does with it (a rejection is never redelivered,
 * an unavailable receiver gets it again).
 */
import { afterEach, describe, expect, it } from "vitest";
import { ReceiverUnavailableError, type Ack, type SignalReceiver, type Transport } from "../../src/connections/contracts.js";
import { DedupeWindow } from "../../src/connections/dedupe.js";
import { buildEnvelope } from "../../src/connections/envelope.js";
import { initSignatures } from "../../src/runtime/index.js";
import type { PulseCloudEvent } from "../../src/tokens/types.js";
import { connectionTo, hostWith, loadReceiver, loadSender, receiverManifest, type Received } from "../host/signals-harness.js";

export interface TransportPair {
  /** The sending side. */
  transport: Transport;
  /** Makes `receiver` take the signals for `loopId` on the receiving side. */
  serve(loopId: string, receiver: SignalReceiver): Promise<void>;
  close(): Promise<void>;
}

export interface TransportUnderTest {
  name: string;
  /** True when send() resolves with the receiver's own answer; false for a broker's "stored". */
  answersForReceiver: boolean;
  open(): Promise<TransportPair>;
}

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

export async function envelopeFor(n: number, options: { workspace?: string; toLoop?: string } = {}): Promise<PulseCloudEvent> {
  await initSignatures();
  return buildEnvelope({
    connection: connectionTo({ to_loop: options.toLoop ?? "contract.target", to_phase: "decide" }),
    token: { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: `act_${n}`, status: "success" },
    loopId: "contract.source",
    phaseId: "learn",
    workspaceId: options.workspace ?? "ws_1",
    traceId: TRACE,
    spanId: "00f067aa0ba902b7",
    signature: `blake3:${n.toString(16).padStart(64, "0")}`,
    time: Date.UTC(2026, 3, 10, 12, 0, 0, n % 1000),
  });
}

/** Polls until `check` holds; the bound only keeps a broken test from hanging. */
export async function until(what: string, check: () => boolean, boundMs = 15_000): Promise<void> {
  const end = Date.now() + boundMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A receiver like a host's: deduplicates by id, records every call and every first arrival. */
class RecordingReceiver implements SignalReceiver {
  readonly calls: unknown[] = [];
  readonly runs: Record<string, unknown>[] = [];
  private readonly seen = new DedupeWindow();
  /** Answer for the next calls (after dedupe): a function of the call number. */
  answer: (call: number, envelope: Record<string, unknown>) => Ack | "unavailable" = () => ({ outcome: "accepted" });

  async receive(envelope: PulseCloudEvent): Promise<Ack> {
    const e = envelope as unknown as Record<string, unknown>;
    this.calls.push(e);
    const answer = this.answer(this.calls.length, e);
    if (answer === "unavailable") throw new ReceiverUnavailableError("the receiving host is stopped");
    if (answer.outcome !== "accepted") return answer;
    if (!this.seen.firstTime(String(e.id))) return { outcome: "duplicate" };
    this.runs.push(e);
    return answer;
  }
}

/** Sends like at-least-once delivery does: a throw is retried (shortly), an answer is final. */
async function deliver(transport: Transport, envelope: PulseCloudEvent, toLoop: string): Promise<Ack> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transport.send(envelope, toLoop);
    } catch (error) {
      if (attempt >= 50) throw error;
      await pause(50);
    }
  }
}

/** A plain-JSON view of an envelope, as it travels. */
const plain = (e: unknown) => JSON.parse(JSON.stringify(e)) as Record<string, unknown>;

export function transportContract(under: TransportUnderTest): void {
  describe(`transport contract: ${under.name}`, () => {
    let pair: TransportPair | undefined;
    const open = async () => (pair = await under.open());
    afterEach(async () => {
      await pair?.close();
      pair = undefined;
    });

    it("delivers an envelope with every attribute intact (workspace ids in any script, traceparent, extensions)", async () => {
      const { transport, serve } = await open();
      const receiver = new RecordingReceiver();
      await serve("contract.target", receiver);
      const sent = await envelopeFor(1, { workspace: "équipe 東京 \"q\" 100%" });
      const ack = await transport.send(sent, "contract.target");
      expect(ack.outcome).toBe("accepted");
      await until("the signal to arrive", () => receiver.runs.length === 1);
      expect(plain(receiver.runs[0])).toEqual(plain(sent));
    });

    it("runs a signal sent twice once: the second send is a duplicate for the transport or the receiver", async () => {
      const { transport, serve } = await open();
      const receiver = new RecordingReceiver();
      await serve("contract.target", receiver);
      const sent = await envelopeFor(2);
      const first = await transport.send(sent, "contract.target");
      const second = await transport.send(sent, "contract.target");
      expect(first.outcome).toBe("accepted");
      expect(second.outcome).toBe("duplicate");
      // A near-miss that must run: another signal, sent after the duplicate.
      await transport.send(await envelopeFor(3), "contract.target");
      await until("the second signal to arrive", () => receiver.runs.length === 2);
      await pause(300);
      expect(receiver.runs.map((r) => r.id)).toEqual([sent.id, (await envelopeFor(3)).id]);
    });

    it("delivers 200 signals sent at once, each exactly once", async () => {
      const { transport, serve } = await open();
      const receiver = new RecordingReceiver();
      await serve("contract.target", receiver);
      const envelopes = await Promise.all(Array.from({ length: 200 }, (_, i) => envelopeFor(100 + i)));
      const acks = await Promise.all(envelopes.map((e) => deliver(transport, e, "contract.target")));
      expect(acks.every((a) => a.outcome === "accepted")).toBe(true);
      await until("200 signals to arrive", () => receiver.runs.length >= 200);
      await pause(200);
      expect(receiver.runs.length).toBe(200);
      expect(new Set(receiver.runs.map((r) => r.id))).toEqual(new Set(envelopes.map((e) => e.id)));
    });

    it("keeps the order of signals sent one after another", async () => {
      const { transport, serve } = await open();
      const receiver = new RecordingReceiver();
      await serve("contract.target", receiver);
      const envelopes = await Promise.all(Array.from({ length: 20 }, (_, i) => envelopeFor(400 + i)));
      for (const e of envelopes) await transport.send(e, "contract.target");
      await until("20 signals to arrive", () => receiver.runs.length === 20);
      expect(receiver.runs.map((r) => r.id)).toEqual(envelopes.map((e) => e.id));
    });

    it("gets a signal to a receiver that could not take it at first, once, when it can", async () => {
      const { transport, serve } = await open();
      const receiver = new RecordingReceiver();
      receiver.answer = (call) => (call <= 2 ? "unavailable" : { outcome: "accepted" });
      await serve("contract.target", receiver);
      const sent = await envelopeFor(5);
      const ack = await deliver(transport, sent, "contract.target");
      expect(ack.outcome).toBe("accepted");
      await until("the signal to be taken", () => receiver.runs.length === 1);
      await pause(300);
      expect(receiver.calls.length).toBe(3);
      expect(receiver.runs.map((r) => r.id)).toEqual([sent.id]);
    });

    it("never delivers a rejected signal again, and says why when it answers for the receiver", async () => {
      const { transport, serve } = await open();
      const receiver = new RecordingReceiver();
      receiver.answer = (_, e) => (e.id === rejected.id ? { outcome: "rejected", reason: "token fails its schema" } : { outcome: "accepted" });
      await serve("contract.target", receiver);
      const rejected = await envelopeFor(6);
      const ack = await transport.send(rejected, "contract.target");
      if (under.answersForReceiver) expect(ack).toEqual({ outcome: "rejected", reason: "token fails its schema" });
      else expect(ack.outcome).toBe("accepted");
      // The near-miss: the next signal is accepted and runs.
      const next = await envelopeFor(7);
      await transport.send(next, "contract.target");
      await until("the next signal to run", () => receiver.runs.length === 1);
      await pause(500);
      expect(receiver.calls.filter((c) => (c as { id: string }).id === rejected.id).length).toBe(1);
      expect(receiver.runs.map((r) => r.id)).toEqual([next.id]);
    });

    it("carries a signal between two hosts: the receiving loop runs an iteration with the token, its cause named", async () => {
      const { transport, serve } = await open();
      const b = await hostWith({});
      const received: Received = { actions: [], inputs: [] };
      await loadReceiver(b, receiverManifest((m) => (m.loop_id = "contract.target")), received);
      b.start();
      await serve("contract.target", { receive: (e) => b.receive("contract.target", e) });
      const a = await hostWith({ transport, signalRetry: { baseMs: 20, maxMs: 200 } });
      await loadSender(a, connectionTo({ to_loop: "contract.target" }));
      a.start();
      const started: unknown[] = [];
      b.subscribe((e) => e.type === "iteration.started" && started.push(e));
      await a.trigger("t.a", { input: { n: 41 } });
      await until("contract.target to run", () => received.actions.length === 1);
      expect(received.actions).toEqual(["act_41"]);
      await b.settled();
      expect(started).toEqual([expect.objectContaining({ cause: expect.objectContaining({ signal: expect.stringMatching(/^evt_/), source: "loop:t.a/phase:learn" }) })]);
      await b.stop();
      // Host A's stop closes the transport it was given, as `pulse run` relies on.
      await a.stop();
    });
  });
}
