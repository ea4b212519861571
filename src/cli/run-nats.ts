/**
 * `pulse run --transport nats://…`: signals to loops not in this run go through NATS JetStream,
 * and this run's loops take theirs from it (a durable consumer each). Loaded only when asked, so
 * a run without it does not load the NATS client.
 */
import { UsageError } from "./exit-codes.js";
import type { NatsReceiveNote, NatsTransport } from "../../adapters/nats/index.js";

export const TRANSPORT_HELP = `
--transport nats://host:4222[?system=name] sends signals for loops not in this run through NATS
JetStream and takes this run's signals from it: every pulse run of one system (same server, same
system name, default "pulse") reaches every other's loops. Signals wait in the stream while their
receiver is down, and a receiver acknowledges one only after the iteration it started finished,
so a receiver that dies mid-iteration gets it again (docs/connections.md).`;

/** `ackWaitMs`: in a fleet, the lease time: a dead host's signals go to another when its leases do. */
export async function openNats(url: string, onNote: (note: NatsReceiveNote) => void, ackWaitMs?: number, onLine?: (message: string, at: number) => void): Promise<NatsTransport> {
  const { NatsTransport, NatsNameError, NatsUnavailableError } = await import("../../adapters/nats/index.js");
  try {
    return await NatsTransport.connect(url, {
      onNote,
      ...(ackWaitMs ? { ackWaitMs } : {}),
      // Once each per outage: the signals sent meanwhile are retried, and say so themselves.
      ...(onLine ? { onConnection: (c) => onLine(c.kind === "disconnected" ? `NATS: disconnected from ${c.server}; reconnecting every 500 ms (signals are retried until it is back)` : `NATS: reconnected to ${c.server} after ${((c.downMs ?? 0) / 1000).toFixed(1)} s`, c.at) } : {}),
    });
  } catch (error) {
    if (error instanceof NatsNameError || error instanceof NatsUnavailableError) throw new UsageError(`--transport: ${error.message}`);
    throw error;
  }
}

/** One trace line for what happened to a received signal that a person may want to know. */
export function describeNatsNote(n: NatsReceiveNote): string {
  const what = `signal ${n.event_id ?? "(no id)"} for ${n.loop_id}`;
  switch (n.kind) {
    case "redelivered":
      return `${what}: delivered again by NATS (delivery ${n.delivery}): a host took it before and did not finish it`;
    case "terminated":
      return `${what}: refused for good (${n.reason ?? "rejected"}); NATS will not deliver it again`;
    case "retried":
      return `${what}: not taken now (${n.reason ?? "unavailable"}); NATS delivers it again shortly`;
  }
}
