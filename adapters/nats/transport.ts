/**
 * Signals between hosts over NATS JetStream (`pulse run --transport nats://…`).
 *
 * Sending publishes the envelope (names.ts: the target loop's subject; codec.ts: structured mode
 * by default, binary with `mode: "binary"`; publisher.ts: the PubAck;
 * Nats-Msg-Id = the envelope id) and resolves on JetStream's PubAck: `accepted` once the signal
 * is stored, `duplicate` when the stream already had that id (within its duplicate window). The
 * stream keeps it until the receiving loop's consumer acknowledges it, so a signal sent while
 * its receiver is down waits for it. A publish that fails or times out is a TransportError, which
 * at-least-once delivery retries. Receiving: `serve` (receiver.ts).
 *
 *   const nats = await NatsTransport.connect("nats://127.0.0.1:4222?system=shop");
 *   const host = await createHost({ transport: nats });
 *   await host.load(…); host.start();
 *   await nats.serve(host);            // a durable consumer per loaded loop
 *   …
 *   await host.stop();                 // stops the consumers and closes the connection
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, DiscardPolicy, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import type { Ack, SignalReceiver, Transport } from "../../src/connections/contracts.js";
import { TransportError } from "../../src/connections/contracts.js";
import type { PulseCloudEvent } from "../../src/tokens/types.js";
import { encodeForPublish, encodeSignal, type NatsContentMode } from "./codec.js";
import { isLoopId, loopSubject, parseNatsUrl, streamName, streamSubjects, type NatsAddress } from "./names.js";
import { AckedPublisher } from "./publisher.js";
import { LoopConsumer, type ConsumerOptions, type NatsReceiveNote } from "./receiver.js";

export interface NatsTransportOptions extends ConsumerOptions {
  /** Overrides the URL's `?system=`: names the stream PULSE_<SYSTEM> and the subjects pulse.<system>.loop.*. */
  system?: string;
  /** CloudEvents content mode of the signals sent (default structured; both are received). */
  mode?: NatsContentMode;
  /** Bound on one publish, until JetStream's PubAck (default 5000). */
  publishTimeoutMs?: number;
  /** JetStream's window for recognising a republished signal by its id (default 2 min). */
  duplicateWindowMs?: number;
  /** Bound on connecting (default 5000). */
  connectTimeoutMs?: number;
  /** Redeliveries, refusals and retries of received signals (pulse run prints them). */
  onNote?: (note: NatsReceiveNote) => void;
  /**
   * The connection to the server went away (the client then reconnects by itself, every 500 ms)
   * or came back: once each per outage, with the time (ms) and, once back, how long it lasted.
   */
  onConnection?: (change: { kind: "disconnected" | "reconnected"; server: string; at: number; downMs?: number }) => void;
}

/** What `serve` needs of a host: its loops, their connections, and a way in for signals. */
export interface SignalHost {
  readonly loops: readonly { id: string; compiled: { connections: readonly { connection: { to_loop: string; max_inflight?: number } }[] } }[];
  receive(loopId: string, envelope: unknown): Promise<Ack>;
}

/** A server that cannot be reached or has no JetStream: said in one line. */
export class NatsUnavailableError extends Error {
  override readonly name = "NatsUnavailableError";
}

const MS = 1_000_000;

export class NatsTransport implements Transport {
  private readonly consumers: LoopConsumer[] = [];
  private readonly publisher: AckedPublisher;
  private closed = false;

  private constructor(
    readonly connection: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    readonly address: NatsAddress,
    private readonly options: NatsTransportOptions,
  ) {
    this.publisher = new AckedPublisher(connection, options.publishTimeoutMs ?? 5_000);
    if (options.onConnection) void this.watch(options.onConnection);
  }

  /** Tells of the connection's outages (the client's status stream ends when it is closed). */
  private async watch(tell: NonNullable<NatsTransportOptions["onConnection"]>): Promise<void> {
    let downAt: number | undefined;
    try {
      for await (const s of this.connection.status()) {
        if (s.type === "disconnect" && downAt === undefined) {
          downAt = Date.now();
          tell({ kind: "disconnected", server: s.server, at: downAt });
        } else if (s.type === "reconnect" && downAt !== undefined) {
          const at = Date.now();
          tell({ kind: "reconnected", server: s.server, at, downMs: at - downAt });
          downAt = undefined;
        }
      }
    } catch {
      // The stream ended with the connection: nothing more to tell.
    }
  }

  get system(): string {
    return this.address.system;
  }

  get stream(): string {
    return streamName(this.address.system);
  }

  /** Connects, and creates the system's stream unless it exists. */
  static async connect(url: string, options: NatsTransportOptions = {}): Promise<NatsTransport> {
    const parsed = parseNatsUrl(url);
    const address = { ...parsed, system: options.system ?? parsed.system };
    let nc: NatsConnection;
    try {
      // noAsyncTraces: the client would otherwise build two Errors (with stacks) per publish
      // just in case it fails, a third of the CPU a signal costs (bench/nats.bench.ts).
      nc = await connect({ servers: address.servers, name: `pulse ${process.pid}`, timeout: options.connectTimeoutMs ?? 5_000, maxReconnectAttempts: -1, reconnectTimeWait: 500, noAsyncTraces: true });
    } catch (error) {
      throw new NatsUnavailableError(`cannot connect to NATS at ${address.display}: ${describe(error)}`);
    }
    try {
      const jsm = await jetstreamManager(nc, { timeout: options.publishTimeoutMs ?? 5_000 });
      const transport = new NatsTransport(nc, jetstream(nc, { timeout: options.publishTimeoutMs ?? 5_000 }), jsm, address, options);
      await transport.ensureStream();
      return transport;
    } catch (error) {
      await nc.close().catch(() => undefined);
      if (error instanceof NatsUnavailableError) throw error;
      throw new NatsUnavailableError(`NATS at ${address.display} has no usable JetStream (start nats-server with -js): ${describe(error)}`);
    }
  }

  private async ensureStream(): Promise<void> {
    const name = this.stream;
    if (await this.jsm.streams.info(name).catch(() => undefined)) return;
    try {
      await this.jsm.streams.add({
        name,
        subjects: [streamSubjects(this.system)],
        // Each signal is kept until its loop's consumer acknowledges it, then removed.
        retention: RetentionPolicy.Workqueue,
        storage: StorageType.File,
        discard: DiscardPolicy.Old,
        duplicate_window: (this.options.duplicateWindowMs ?? 120_000) * MS,
      });
    } catch (error) {
      // Another host created it at the same moment.
      if (!(await this.jsm.streams.info(name).catch(() => undefined))) throw error;
    }
  }

  async send(envelope: PulseCloudEvent, toLoop: string): Promise<Ack> {
    if (this.closed) throw new TransportError(`signal ${envelope.id} to ${toLoop}: the NATS transport is closed`);
    if (!isLoopId(toLoop)) return { outcome: "rejected", reason: `loop id ${JSON.stringify(toLoop)} cannot be a NATS subject` };
    const { headers, body } = (this.options.mode !== "binary" && encodeForPublish(envelope)) || encodeSignal(envelope, this.options.mode);
    const max = this.connection.info?.max_payload;
    if (max !== undefined && body.length > max) return { outcome: "rejected", reason: `the signal is ${body.length} bytes, over the NATS server's max_payload of ${max}` };
    try {
      const subject = loopSubject(this.system, toLoop);
      const ack = await this.publisher.publish(subject, body, headers);
      return { outcome: ack.duplicate ? "duplicate" : "accepted" };
    } catch (error) {
      throw new TransportError(`signal ${envelope.id} to ${toLoop} over NATS ${this.address.display}: ${describe(error)}`, { cause: error });
    }
  }

  /**
   * Takes signals for every loop the host runs: one durable consumer per loop, its
   * max_ack_pending the smallest max_inflight among the host's connections to it (else 1024).
   */
  async serve(host: SignalHost): Promise<void> {
    for (const loop of host.loops) await this.serveLoop(host, loop.id);
  }

  /** Takes the signals of one loop the host runs (a fleet calls it for the loops whose lease it holds). */
  async serveLoop(host: SignalHost, loopId: string): Promise<void> {
    const limits = host.loops.flatMap((l) => l.compiled.connections.map((c) => c.connection)).filter((c) => c.to_loop === loopId && c.max_inflight !== undefined);
    const maxAckPending = limits.length > 0 ? Math.min(...limits.map((c) => c.max_inflight as number)) : this.options.maxAckPending;
    await this.receive(loopId, { receive: (envelope) => host.receive(loopId, envelope) }, maxAckPending === undefined ? {} : { maxAckPending });
  }

  /** Stops taking one loop's signals (those taken get `timeoutMs` to commit); JetStream keeps the rest for another host. */
  async stopReceiving(loopId: string, timeoutMs = 5_000): Promise<void> {
    const mine = this.consumers.filter((c) => c.loopId === loopId);
    this.consumers.splice(0, this.consumers.length, ...this.consumers.filter((c) => c.loopId !== loopId));
    await Promise.all(mine.map((c) => c.stop(timeoutMs)));
  }

  /** Takes the signals of one loop and hands them to `receiver`. */
  async receive(loopId: string, receiver: SignalReceiver, options: ConsumerOptions = {}): Promise<void> {
    if (this.closed) throw new TransportError(`the NATS transport is closed: cannot take signals for ${loopId}`);
    const consumer = new LoopConsumer(this.js, this.jsm, this.stream, this.system, loopId, receiver, { ...this.options, ...options }, this.options.onNote ?? (() => undefined));
    await consumer.start();
    this.consumers.push(consumer);
  }

  /**
   * Stops the consumers (signals already taken get `timeoutMs` to commit and be acknowledged;
   * the rest are redelivered, to another host of the system if one consumes the loop) and
   * closes the connection. Final: a host started again needs a new transport.
   */
  async close(timeoutMs = 5_000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.consumers.map((c) => c.stop(timeoutMs)));
    this.publisher.close();
    // Draining flushes what is buffered; with the server unreachable it would wait for ever.
    await bounded(this.connection.drain().catch(() => undefined), timeoutMs);
    await bounded(this.connection.close().catch(() => undefined), timeoutMs);
  }
}

function describe(error: unknown): string {
  const e = error as { code?: string; message?: string; cause?: { message?: string } };
  const message = e?.message ?? String(error);
  return e?.cause?.message && !message.includes(e.cause.message) ? `${message} (${e.cause.message})` : message;
}

/** Waits for `work`, at most `ms`. */
async function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
