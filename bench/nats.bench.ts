/**
 * Issue 18, signals over NATS JetStream end to end: emit → envelope → at-least-once channel
 * (max_inflight 1024, block) → NatsTransport publish (Nats-Msg-Id, awaiting each PubAck) →
 * JetStream → the receiving loop's durable consumer → receiver (read, dedupe) → handler → ack,
 * beside a bare JetStream loop in the same run: the same bodies published with 1024 PubAcks
 * outstanding, consumed by a durable pull consumer that acks each. Sender and receiver have a
 * connection each, as two hosts would, and share this process and the NATS server's 2 cores.
 * A round ends when every signal was handled and its ack stored (the work-queue stream is empty).
 * NATS_URL (default nats://127.0.0.1:4222); the bench's stream is deleted at the end.
 */
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { NatsTransport } from "../adapters/nats/index.js";
import type { Ack, Emission } from "../src/connections/contracts.js";
import { buildEnvelope } from "../src/connections/envelope.js";
import { SignalPlumbing } from "../src/host/plumbing.js";
import type { Connection } from "../src/manifest/types.js";
import { initSignatures, systemClock } from "../src/runtime/index.js";
import type { PulseCloudEvent, Token } from "../src/tokens/types.js";
import { median, report } from "./measure.js";
import os from "node:os";

await initSignatures();

const URL_BASE = (process.env.NATS_URL || "nats://127.0.0.1:4222").replace(/\?.*$/, "");
const SYSTEM = `bench${process.pid}`;
const N = 10_000;
const ROUNDS = 3;
const WINDOW = 1024;
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const connection: Connection = { id: "to_receiver", emit_phase: "learn", token: "OutcomeSignal", to_loop: "bench.receiver", cadence: "async", delivery: "at_least_once", max_inflight: WINDOW, overflow_policy: "block" };

let serial = 0;
function emissions(count: number): Emission[] {
  return Array.from({ length: count }, () => {
    const n = serial++;
    const token = { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: `act_${n}`, status: "success" } as Token;
    return { connection, token, loopId: "bench.sender", phaseId: "learn", workspaceId: "bench", traceId: TRACE, spanId: "00f067aa0ba902b7", signature: `blake3:${n.toString(16).padStart(64, "0")}`, time: Date.now() };
  });
}

const url = `${URL_BASE}?system=${SYSTEM}`;
const sender = await NatsTransport.connect(url, { publishTimeoutMs: 30_000 });
const receiving = await NatsTransport.connect(url);
const stream = sender.stream;
const nsSince = (start: bigint) => Number(process.hrtime.bigint() - start);

/** Resolves when the stream holds no message (every one acked), polling. */
async function drained(jsm: Awaited<ReturnType<typeof jetstreamManager>>): Promise<void> {
  while ((await jsm.streams.info(stream)).state.messages > 0) await new Promise((r) => setTimeout(r, 5));
}

// The receiving host's part: read and dedupe (as Host.receive does), then the handler.
const receiverPlumbing = new SignalPlumbing(undefined, undefined);
let handled = 0;
let done: () => void = () => {};
await receiving.receive(
  "bench.receiver",
  {
    receive: async (envelope): Promise<Ack> => {
      const verdict = receiverPlumbing.accept("bench.receiver", envelope);
      if (verdict.outcome === "rejected") return { outcome: "rejected", reason: verdict.reason ?? "invalid" };
      if (verdict.outcome !== "accepted") return { outcome: verdict.outcome };
      if (++handled % N === 0) done();
      // As a host answers: with the commit of the iteration it started (here at once), acked after it.
      const committed = Promise.resolve();
      receiverPlumbing.committing("bench.receiver", verdict.envelope as PulseCloudEvent, committed);
      return { outcome: "accepted", committed };
    },
  },
  { maxAckPending: 4 * WINDOW },
);
const adminJsm = await jetstreamManager(receiving.connection);

interface Round {
  perSecond: number;
  /** CPU of this process (both ends) per signal, µs: what the rate would be bounded by on an idle machine. */
  cpuUs: number;
}

/** Runs a round and measures its rate and this process's CPU per signal. */
async function measured(round: () => Promise<void>): Promise<Round> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await round();
  const ns = nsSince(start);
  const used = process.cpuUsage(cpu);
  return { perSecond: (N * 1e9) / ns, cpuUs: (used.user + used.system) / N };
}

async function pulseRound(): Promise<void> {
  const plumbing = new SignalPlumbing(sender, undefined);
  let failures = 0;
  const emitter = plumbing.channel(connection, systemClock, (e) => {
    if (e.type === "signal.retrying" || e.type === "signal.dropped") failures++;
  });
  const batch = emissions(N);
  const all = new Promise<void>((resolve) => (done = resolve));
  for (const e of batch) await emitter.emit(e);
  await plumbing.flush();
  await all;
  await drained(adminJsm);
  if (failures > 0) throw new Error(`${failures} signals retried or dropped`);
}

// The bare loop: its own subject and consumer in the same stream.
const bareSubject = `pulse.${SYSTEM}.loop.bench.bare`;
await adminJsm.consumers.add(stream, { durable_name: "bench-bare", filter_subject: bareSubject, ack_policy: AckPolicy.Explicit, max_ack_pending: 4 * WINDOW });
const bareJs = jetstream(sender.connection, { timeout: 30_000 });
let bareSeen = 0;
let bareDone: () => void = () => {};
const bareConsumer = await jetstream(receiving.connection).consumers.get(stream, "bench-bare");
const bareMessages = await bareConsumer.consume({
  max_messages: 512,
  callback: (m) => {
    JSON.parse(m.string());
    m.ack();
    if (++bareSeen % N === 0) bareDone();
  },
});

async function bareRound(): Promise<void> {
  const bodies = emissions(N).map((e) => {
    const envelope = buildEnvelope(e);
    return { id: envelope.id, body: new TextEncoder().encode(JSON.stringify(envelope)) };
  });
  const all = new Promise<void>((resolve) => (bareDone = resolve));
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const b = bodies[next++] as { id: string; body: Uint8Array };
      await bareJs.publish(bareSubject, b.body, { msgID: b.id });
    }
  };
  await Promise.all(Array.from({ length: WINDOW }, worker));
  await all;
  await drained(adminJsm);
}

try {
  await pulseRound(); // warm-up
  await bareRound();
  const samples = { pulse: [] as Round[], bare: [] as Round[] };
  for (let r = 0; r < ROUNDS; r++) {
    samples.pulse.push(await measured(pulseRound));
    samples.bare.push(await measured(bareRound));
  }
  const pulse = median(samples.pulse.map((r) => r.perSecond));
  const bare = median(samples.bare.map((r) => r.perSecond));
  const pulseCpu = median(samples.pulse.map((r) => r.cpuUs));
  const bareCpu = median(samples.bare.map((r) => r.cpuUs));
  report({
    title: "Signals over NATS JetStream end to end: emitted, stored, delivered, handled, acked",
    rows: [
      { name: "pulse (channel → NatsTransport → consumer → receiver), signals/s", value: Math.round(pulse).toLocaleString("en-US") },
      { name: "bare JetStream publish (1024 outstanding) + consume + ack, msgs/s", value: Math.round(bare).toLocaleString("en-US") },
      { name: "ratio pulse / bare", value: `${(pulse / bare).toFixed(2)}×` },
      { name: "CPU of this process per signal: pulse / bare (both ends)", value: `${pulseCpu.toFixed(0)} µs / ${bareCpu.toFixed(0)} µs` },
      { name: "load average when run (2 cores)", value: os.loadavg()[0]!.toFixed(1) },
      { name: "signals per round, rounds (median)", value: `${N.toLocaleString("en-US")}, ${ROUNDS}` },
    ],
    target: "≥ 10,000 signals/s end to end",
    met: pulse >= 10_000,
  });
} finally {
  await bareMessages.close().catch(() => undefined);
  await receiving.close(1_000);
  await sender.close(1_000);
  const { connect } = await import("@nats-io/transport-node");
  const nc = await connect({ servers: URL_BASE });
  await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
  await nc.close();
}
