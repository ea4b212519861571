/**
 * Issue 4, cross-loop signals. (a) In process: emit → envelope → channel (at-least-once) →
 * in-process transport → receiver (envelope read, event-id dedupe) → the receiving handler,
 * through the host's own SignalPlumbing, beside calling the handler directly and beside a bare
 * receive of ready-made envelopes. (b) CloudEvents over HTTP on loopback: the same channel with
 * max_inflight as its concurrency, sending to createSignalServer, beside bare keep-alive
 * node:http POSTs of the same body to a bare node:http server (which parses it and replies) at
 * the same concurrency. Both ends share one process and its cores. Interleaved rounds, medians.
 */
import { Agent, createServer, request } from "node:http";
import os from "node:os";
import type { AddressInfo } from "node:net";
import type { Ack, DeliveryEvent, Emission } from "../src/connections/contracts.js";
import { buildEnvelope } from "../src/connections/envelope.js";
import { SignalPlumbing } from "../src/host/plumbing.js";
import type { Connection } from "../src/manifest/types.js";
import { initSignatures, systemClock } from "../src/runtime/index.js";
import type { PulseCloudEvent, Token } from "../src/tokens/types.js";
import { HttpTransport, createSignalServer } from "../src/transports/http.js";
import { median, report } from "./measure.js";

await initSignatures();

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
let serial = 0;

function emissions(connection: Connection, count: number): Emission[] {
  const out: Emission[] = [];
  for (let i = 0; i < count; i++) {
    const n = serial++;
    const token = { token: "OutcomeSignal", version: "0.1", trace_id: TRACE, action_id: `act_${n}`, status: "success" } as Token;
    // The runtime computes the phase signature anyway; here it is simply distinct per signal.
    out.push({ connection, token, loopId: "bench.sender", phaseId: "learn", workspaceId: "bench", traceId: TRACE, spanId: "00f067aa0ba902b7", signature: `blake3:${n.toString(16).padStart(64, "0")}`, time: Date.now() });
  }
  return out;
}

/** The receiving host's part of Host.receive: read and dedupe, then hand the token to the loop. */
function receiverOf(plumbing: SignalPlumbing, handler: (token: unknown) => void) {
  return async (loopId: string, raw: unknown): Promise<Ack> => {
    const verdict = plumbing.accept(loopId, raw);
    if (verdict.outcome === "accepted") handler((verdict.envelope as PulseCloudEvent).data);
    return verdict.outcome === "rejected" ? { outcome: "rejected", reason: verdict.reason ?? "invalid" } : { outcome: verdict.outcome };
  };
}

const nsSince = (start: bigint) => Number(process.hrtime.bigint() - start);

// ---------------------------------------------------------------------------------------------
// (a) in process

const N = 20_000;
const ROUNDS = 7;
const local: Connection = { id: "to_receiver", emit_phase: "learn", token: "OutcomeSignal", to_loop: "bench.receiver", cadence: "async", delivery: "at_least_once" };
let handled = 0;
const handler = (token: unknown) => {
  if (token) handled++;
};

/** CPU time (all threads: the garbage collector's too) per signal of the last pulseInProcess round, ns. */
let lastCpuNs = 0;

async function pulseInProcess(): Promise<number> {
  const plumbing = new SignalPlumbing(undefined, undefined);
  const receive = receiverOf(plumbing, handler);
  plumbing.register("bench.receiver", { receive: (e) => receive("bench.receiver", e) });
  const emitter = plumbing.channel(local, systemClock, () => {});
  const batch = emissions(local, N);
  const before = handled;
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (const e of batch) await emitter.emit(e);
  await plumbing.flush();
  const ns = nsSince(start);
  const used = process.cpuUsage(cpu);
  lastCpuNs = ((used.user + used.system) * 1000) / N;
  if (handled - before !== N) throw new Error(`delivered ${handled - before} of ${N}`);
  return ns / N;
}

async function bareReceive(): Promise<number> {
  const plumbing = new SignalPlumbing(undefined, undefined);
  const receive = receiverOf(plumbing, handler);
  // Ready-made, untrusted copies: what a receiver validates when envelopes come from elsewhere.
  const ready = emissions(local, N).map((e) => ({ ...buildEnvelope(e) }));
  const start = process.hrtime.bigint();
  for (const e of ready) await receive("bench.receiver", e);
  return nsSince(start) / N;
}

function bareCall(): number {
  const tokens = emissions(local, N).map((e) => e.token);
  const start = process.hrtime.bigint();
  for (const t of tokens) handler(t);
  return nsSince(start) / N;
}

await pulseInProcess();
await bareReceive();
bareCall();
const inProcess = { pulse: [] as number[], cpu: [] as number[], receive: [] as number[], call: [] as number[] };
for (let r = 0; r < ROUNDS; r++) {
  inProcess.pulse.push(await pulseInProcess());
  inProcess.cpu.push(lastCpuNs);
  inProcess.receive.push(await bareReceive());
  inProcess.call.push(bareCall());
}
const a = { pulse: median(inProcess.pulse), cpu: median(inProcess.cpu), receive: median(inProcess.receive), call: median(inProcess.call) };
const perSecond = 1e9 / a.pulse;

report({
  title: "Signals in process: emit → channel (at-least-once) → receiver (read, dedupe) → handler",
  rows: [
    { name: "pulse, signals per second (one core)", value: Math.round(perSecond).toLocaleString("en-US") },
    { name: "per signal: pulse emit → handler", value: `${(a.pulse / 1000).toFixed(2)} µs` },
    { name: "per signal: bare receive of ready envelopes (read, dedupe)", value: `${(a.receive / 1000).toFixed(2)} µs` },
    { name: "per signal: handler called directly", value: `${(a.call / 1000).toFixed(3)} µs` },
    { name: "ratio pulse / bare receive", value: `${(a.pulse / a.receive).toFixed(2)}×` },
    { name: "ratio pulse / handler called directly", value: `${Math.round(a.pulse / a.call)}×` },
    { name: "CPU of this process per signal, pulse emit → handler (signals per CPU-second)", value: `${(a.cpu / 1000).toFixed(2)} µs (${Math.round(1e9 / a.cpu).toLocaleString("en-US")})` },
    { name: "load average when run (2 cores)", value: os.loadavg()[0]!.toFixed(1) },
  ],
  target: "≥ 100,000 signals/s",
  met: perSecond >= 100_000,
});

// ---------------------------------------------------------------------------------------------
// (b) HTTP on loopback

const M = 2_000;
const CONCURRENCY = 32;
const HTTP_ROUNDS = 5;
const remote: Connection = { ...local, id: "over_http", max_inflight: CONCURRENCY, overflow_policy: "block" };

const receiving = new SignalPlumbing(undefined, undefined);
// A host answers "accepted" with the commit of the iteration it started, and the server replies
// only once that settles (here: at once, there being no iteration).
const receiveOverHttp = receiverOf(receiving, handler);
const signals = createSignalServer(async (loopId, raw) => {
  const ack = await receiveOverHttp(loopId, raw);
  return ack.outcome === "accepted" ? { ...ack, committed: Promise.resolve() } : ack;
});
let connections = 0;
signals.server.on("connection", () => connections++);
const { url } = await signals.listen();

const bare = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on("data", (c: Buffer) => chunks.push(c));
  req.on("end", () => {
    JSON.parse(Buffer.concat(chunks).toString("utf8"));
    const body = `{"outcome":"accepted"}`;
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  });
});
await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve));
const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}/loops/bench.receiver/events`;

const bareAgent = new Agent({ keepAlive: true, maxSockets: 64 });
function barePost(body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(bareUrl, { method: "POST", agent: bareAgent, headers: { "content-type": "application/cloudevents+json", "content-length": Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on("end", resolve);
    });
    req.on("error", reject);
    req.end(body);
  });
}

interface HttpRound {
  perSecond: number;
  latenciesUs: number[];
}

// One transport per mode for the whole run, as a host keeps one: its keep-alive sockets are reused.
const transports = { structured: new HttpTransport({ routes: { "bench.receiver": url }, mode: "structured" }), binary: new HttpTransport({ routes: { "bench.receiver": url }, mode: "binary" }) };

async function pulseOverHttp(mode: "structured" | "binary"): Promise<HttpRound> {
  const plumbing = new SignalPlumbing(transports[mode], undefined);
  const sentAt = new Map<string, bigint>();
  const latenciesUs: number[] = [];
  let failures = 0;
  const onEvent = (e: DeliveryEvent) => {
    if (e.type === "signal.emitted") sentAt.set(e.envelope.id, process.hrtime.bigint());
    else if (e.type === "signal.delivered") latenciesUs.push(nsSince(sentAt.get(e.envelope.id) as bigint) / 1000);
    else if (e.type === "signal.retrying" || e.type === "signal.dropped") failures++;
  };
  const emitter = plumbing.channel(remote, systemClock, onEvent);
  const batch = emissions(remote, M);
  const start = process.hrtime.bigint();
  // max_inflight (block) keeps CONCURRENCY signals on the wire: emit waits for room.
  for (const e of batch) await emitter.emit(e);
  await plumbing.flush();
  const ns = nsSince(start);
  if (failures > 0 || latenciesUs.length !== M) throw new Error(`${failures} failures, ${latenciesUs.length} of ${M} delivered`);
  return { perSecond: (M * 1e9) / ns, latenciesUs };
}

async function bareOverHttp(): Promise<HttpRound> {
  const bodies = emissions(remote, M).map((e) => JSON.stringify(buildEnvelope(e)));
  const latenciesUs: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next++] as string;
      const t = process.hrtime.bigint();
      await barePost(body);
      latenciesUs.push(nsSince(t) / 1000);
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { perSecond: (M * 1e9) / nsSince(start), latenciesUs };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

await pulseOverHttp("structured");
await bareOverHttp();
const rounds = { structured: [] as HttpRound[], binary: [] as HttpRound[], bare: [] as HttpRound[] };
for (let r = 0; r < HTTP_ROUNDS; r++) {
  rounds.structured.push(await pulseOverHttp("structured"));
  rounds.binary.push(await pulseOverHttp("binary"));
  rounds.bare.push(await bareOverHttp());
}
const summary = (rs: HttpRound[]) => ({
  perSecond: median(rs.map((r) => r.perSecond)),
  p50: median(rs.map((r) => percentile(r.latenciesUs, 50))),
  p99: median(rs.map((r) => percentile(r.latenciesUs, 99))),
});
const b = { structured: summary(rounds.structured), binary: summary(rounds.binary), bare: summary(rounds.bare) };
await transports.structured.close();
await transports.binary.close();
await signals.close();
bareAgent.destroy();
await new Promise((resolve) => bare.close(resolve));
const sent = M * (HTTP_ROUNDS + 1) * 2;
const ms = (us: number) => `${(us / 1000).toFixed(2)} ms`;

report({
  title: `Signals over CloudEvents HTTP on loopback (at-least-once, ${CONCURRENCY} in flight, keep-alive)`,
  rows: [
    { name: "structured mode, signals per second", value: Math.round(b.structured.perSecond).toLocaleString("en-US") },
    { name: "structured mode, latency emit → acknowledged p50 / p99", value: `${ms(b.structured.p50)} / ${ms(b.structured.p99)}` },
    { name: "binary mode, signals per second", value: Math.round(b.binary.perSecond).toLocaleString("en-US") },
    { name: "binary mode, latency p50 / p99", value: `${ms(b.binary.p50)} / ${ms(b.binary.p99)}` },
    { name: "bare keep-alive POST → node:http, requests per second", value: Math.round(b.bare.perSecond).toLocaleString("en-US") },
    { name: "bare POST, latency p50 / p99", value: `${ms(b.bare.p50)} / ${ms(b.bare.p99)}` },
    { name: "ratio structured / bare throughput", value: `${(b.structured.perSecond / b.bare.perSecond).toFixed(2)}×` },
    { name: `TCP connections opened for ${sent.toLocaleString("en-US")} signals`, value: String(connections) },
  ],
  target: "≥ 2,000 signals/s",
  met: b.structured.perSecond >= 2_000 && b.binary.perSecond >= 2_000,
});
