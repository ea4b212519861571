/**
 * What the NATS transport adds to the contract suite: the wire format, acknowledgement only after
 * the triggered iteration committed, redelivery after a receiver crashes, max_inflight as
 * max_ack_pending, and the errors a person sees.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { headers as natsHeaders } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { afterEach, expect, it } from "vitest";
import { NatsTransport, NatsUnavailableError, type NatsReceiveNote } from "../../../adapters/nats/index.js";
import { NatsNameError } from "../../../adapters/nats/names.js";
import type { Ack, SignalReceiver } from "../../../src/connections/contracts.js";
import { describeWith, natsService } from "../../helpers/services.js";
import { connectionTo, hostWith, loadReceiver, loadSender, receiverManifest } from "../../host/signals-harness.js";
import { envelopeFor, until } from "../../transports/contract.js";
import { natsSystem, type NatsSystem } from "./helpers.js";

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A receiver that records envelopes and answers with `answer`. */
function recorder(answer: (n: number) => Ack | Promise<Ack>): SignalReceiver & { got: Record<string, unknown>[] } {
  const got: Record<string, unknown>[] = [];
  return { got, receive: async (e) => (got.push(e as never), answer(got.length)) };
}

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void } {
  let resolve = () => {};
  let reject: (e: Error) => void = () => {};
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describeWith(await natsService(), "NATS JetStream transport", (url) => {
  let sys: NatsSystem;
  const systems: NatsSystem[] = [];
  const fresh = () => {
    sys = natsSystem(url);
    systems.push(sys);
    return sys;
  };
  afterEach(async () => {
    for (const s of systems.splice(0)) await s.close();
  });

  async function admin() {
    const t = await sys.open();
    return { js: jetstream(t.connection), jsm: await jetstreamManager(t.connection), t };
  }

  it("stores a signal in structured mode by default: Nats-Msg-Id is the envelope id, traceparent a header, the whole envelope as the body, on the target loop's subject", async () => {
    fresh();
    const sender = await sys.open();
    const sent = await envelopeFor(1, { workspace: "équipe 東京", toLoop: "shop.orders" });
    expect(await sender.send(sent, "shop.orders")).toEqual({ outcome: "accepted" });
    const { jsm } = await admin();
    const stored = await jsm.streams.getMessage(`PULSE_${sys.system.toUpperCase()}`, { seq: 1 });
    expect(stored?.subject).toBe(`pulse.${sys.system}.loop.shop.orders`);
    const h = stored?.header;
    expect(h?.get("Nats-Msg-Id")).toBe(sent.id);
    expect(h?.get("content-type")).toBe("application/cloudevents+json");
    expect(h?.get("traceparent")).toBe(sent.traceparent);
    expect(h?.get("ce-id")).toBe("");
    expect(JSON.parse(stored?.string() ?? "")).toEqual(JSON.parse(JSON.stringify(sent)));
    // The same envelope sent again is stored once.
    expect(await sender.send(sent, "shop.orders")).toEqual({ outcome: "duplicate" });
  });

  it("stores a signal in binary mode when asked: Nats-Msg-Id is the envelope id, ce- headers percent-encoded, the token as the body", async () => {
    fresh();
    const sender = await sys.open({ mode: "binary" });
    const sent = await envelopeFor(1, { workspace: "équipe 東京", toLoop: "shop.orders" });
    await sender.send(sent, "shop.orders");
    const { jsm } = await admin();
    const stored = await jsm.streams.getMessage(`PULSE_${sys.system.toUpperCase()}`, { seq: 1 });
    expect(stored?.subject).toBe(`pulse.${sys.system}.loop.shop.orders`);
    const h = stored?.header;
    expect(h?.get("Nats-Msg-Id")).toBe(sent.id);
    expect(h?.get("ce-id")).toBe(sent.id);
    expect(h?.get("ce-specversion")).toBe("1.0");
    expect(h?.get("ce-type")).toBe("org.opensentience.pulse.OutcomeSignal");
    expect(h?.get("ce-pulseworkspace")).toBe("%C3%A9quipe%20%E6%9D%B1%E4%BA%AC");
    expect(h?.get("content-type")).toBe("application/json");
    expect(h?.get("traceparent")).toBe(sent.traceparent);
    expect(JSON.parse(stored?.string() ?? "")).toEqual(JSON.parse(JSON.stringify(sent.data)));
  });

  it("takes structured-mode messages too, and terminates (never redelivers) what is not a signal, saying why", async () => {
    fresh();
    const notes: NatsReceiveNote[] = [];
    const receiving = await sys.open({ onNote: (n) => notes.push(n) });
    const receiver = recorder(() => ({ outcome: "accepted" }));
    await receiving.receive("t.b", receiver);
    const { js } = await admin();
    const subject = `pulse.${sys.system}.loop.t.b`;
    const structured = await envelopeFor(2, { toLoop: "t.b" });
    const sh = natsHeaders();
    sh.set("content-type", "application/cloudevents+json");
    await js.publish(subject, JSON.stringify(structured), { headers: sh, msgID: structured.id });
    const nh = natsHeaders();
    nh.set("ce-specversion", "1.0");
    nh.set("ce-type", "org.opensentience.pulse.OutcomeSignal");
    nh.set("ce-source", "loop:x.y/phase:z"); // no ce-id
    await js.publish(subject, "{}", { headers: nh });
    await js.publish(subject, "not json");
    await until("the structured signal and two refusals", () => receiver.got.length === 1 && notes.filter((n) => n.kind === "terminated").length === 2);
    expect(JSON.parse(JSON.stringify(receiver.got[0]))).toEqual(JSON.parse(JSON.stringify(structured)));
    expect(notes.map((n) => n.reason).sort()).toEqual(["binary mode needs ce-specversion, ce-type, ce-source and ce-id headers", "the message body is not JSON"]);
    await pause(2_000); // past ack_wait: nothing comes back
    expect(receiver.got.length).toBe(1);
    expect(notes.filter((n) => n.kind === "redelivered")).toEqual([]);
  });

  it("acknowledges a signal only once its iteration committed; one whose iteration could not commit comes again", async () => {
    fresh();
    const sender = await sys.open();
    const receiving = await sys.open();
    const commits = [deferred(), deferred()];
    const receiver = recorder((n) => ({ outcome: "accepted", committed: (commits[n - 1] ?? deferred()).promise }));
    await receiving.receive("t.b", receiver, { ackWaitMs: 800 });
    const { jsm } = await admin();
    const pending = async () => (await jsm.consumers.info(receiving.stream, "t-b")).num_ack_pending;
    const stored = async () => (await jsm.streams.info(receiving.stream)).state.messages;
    const sent = await envelopeFor(3, { toLoop: "t.b" });
    await sender.send(sent, "t.b");
    await until("the signal to be taken", () => receiver.got.length === 1);
    await pause(2_000); // longer than ack_wait: working() keeps it from being redelivered
    expect(receiver.got.length).toBe(1);
    expect(await pending()).toBe(1);
    commits[0]?.reject(new Error("the store is unreachable"));
    await until("the signal to come again", () => receiver.got.length === 2);
    expect(receiver.got[1]?.id).toBe(sent.id);
    commits[1]?.resolve();
    for (let i = 0; i < 100 && ((await pending()) > 0 || (await stored()) > 0); i++) await pause(50);
    expect(await pending()).toBe(0);
    expect(await stored()).toBe(0); // work-queue retention: an acknowledged signal leaves the stream
  });

  it("a host's signal is acknowledged when the iteration it started has finished, not when it arrived", async () => {
    fresh();
    const sender = await sys.open();
    const receiving = await sys.open();
    const host = await hostWith({});
    const received = { actions: [] as string[], inputs: [] as unknown[] };
    await loadReceiver(host, receiverManifest(), received);
    const release = deferred();
    host.loop("t.b")?.handle("apply", async () => (await release.promise, { action_id: "act_b", status: "success", causal_parent_ids: [] }));
    host.start();
    await receiving.serve(host);
    await sender.send(await envelopeFor(30, { toLoop: "t.b" }), "t.b");
    await until("the iteration to start", () => received.actions.length === 1);
    const { jsm } = await admin();
    await pause(300);
    expect((await jsm.consumers.info(receiving.stream, "t-b")).num_ack_pending).toBe(1);
    release.resolve();
    await host.settled();
    let pending = 1;
    for (let i = 0; i < 100 && pending > 0; i++, await pause(50)) pending = (await jsm.consumers.info(receiving.stream, "t-b")).num_ack_pending;
    expect(pending).toBe(0);
    await host.stop();
  });

  it("redelivers a signal whose receiving process was killed mid-iteration to the next host that takes the loop", async () => {
    fresh();
    const sender = await sys.open();
    const sent = await envelopeFor(4, { toLoop: "crash.target" });
    const child = spawn(process.execPath, [fileURLToPath(new URL("./fixtures/crashing-receiver.mjs", import.meta.url)), sys.url, "crash.target"], { stdio: ["ignore", "pipe", "inherit"] });
    const lines: string[] = [];
    createInterface({ input: child.stdout }).on("line", (l) => lines.push(l));
    const exited = new Promise((r) => child.on("exit", r));
    await until("the child to be ready", () => lines.includes("ready"), 20_000);
    await sender.send(sent, "crash.target");
    await until("the child to take it", () => lines.includes(`took ${sent.id}`));
    child.kill("SIGKILL");
    await exited;
    const notes: NatsReceiveNote[] = [];
    const survivor = await sys.open({ onNote: (n) => notes.push(n) });
    const receiver = recorder(() => ({ outcome: "accepted" }));
    await survivor.receive("crash.target", receiver);
    await until("the redelivery", () => receiver.got.length === 1);
    expect(receiver.got[0]?.id).toBe(sent.id);
    expect(notes).toEqual([expect.objectContaining({ kind: "redelivered", delivery: 2, event_id: sent.id })]);
    await pause(2_000);
    expect(receiver.got.length).toBe(1);
  });

  it("bounds the signals handed out and not yet committed by max_ack_pending; the rest wait in the stream, none lost", async () => {
    fresh();
    const sender = await sys.open();
    const receiving = await sys.open();
    const gate = deferred();
    const receiver = recorder(() => ({ outcome: "accepted", committed: gate.promise }));
    await receiving.receive("t.b", receiver, { maxAckPending: 2 });
    for (let i = 0; i < 5; i++) await sender.send(await envelopeFor(10 + i, { toLoop: "t.b" }), "t.b");
    await until("two signals to be taken", () => receiver.got.length === 2);
    await pause(1_000);
    expect(receiver.got.length).toBe(2);
    gate.resolve();
    await until("all five", () => receiver.got.length === 5);
  });

  it("serve(host) makes a consumer per loaded loop, max_ack_pending the smallest max_inflight of the connections to it", async () => {
    fresh();
    const receiving = await sys.open();
    const host = await hostWith({});
    await loadSender(host, connectionTo({ max_inflight: 7 }));
    await loadReceiver(host, receiverManifest(), { actions: [], inputs: [] });
    await receiving.serve(host);
    const { jsm } = await admin();
    expect((await jsm.consumers.info(receiving.stream, "t-b")).config.max_ack_pending).toBe(7);
    expect((await jsm.consumers.info(receiving.stream, "t-a")).config.max_ack_pending).toBe(1024);
    expect((await jsm.consumers.info(receiving.stream, "t-b")).config.filter_subject).toBe(`pulse.${sys.system}.loop.t.b`);
  });

  it("refuses what cannot work in one line: an unreachable server, an address that is not NATS, a bad system name", async () => {
    await expect(NatsTransport.connect("nats://127.0.0.1:1", { connectTimeoutMs: 2_000 })).rejects.toThrow(NatsUnavailableError);
    await expect(NatsTransport.connect("nats://127.0.0.1:1")).rejects.toThrow(/^cannot connect to NATS at nats:\/\/127\.0\.0\.1:1: /);
    await expect(NatsTransport.connect("http://127.0.0.1:4222")).rejects.toThrow(NatsNameError);
    await expect(NatsTransport.connect(`${url}?system=Bad.Name`)).rejects.toThrow(/system name is 1 to 48 characters/);
    await expect(NatsTransport.connect("nats://u:secret@127.0.0.1:1")).rejects.toThrow(/nats:\/\/u:\*\*\*@127\.0\.0\.1:1/);
    // The near-miss: a valid system name connects.
    fresh();
    const ok = await sys.open();
    expect(ok.stream).toBe(`PULSE_${sys.system.toUpperCase()}`);
  });

  it("a send after close fails as a transport failure (retried by the channel), a loop id that cannot be a subject is rejected", async () => {
    fresh();
    const t = await sys.open();
    const e = await envelopeFor(20);
    expect(await t.send(e, "Not A Loop")).toEqual({ outcome: "rejected", reason: 'loop id "Not A Loop" cannot be a NATS subject' });
    expect((await t.send(e, "fine.loop")).outcome).toBe("accepted");
    await t.close();
    await expect(t.send(e, "fine.loop")).rejects.toThrow(/the NATS transport is closed/);
  });
});
