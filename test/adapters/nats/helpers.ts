/** NATS suites: transports on a stream of their own (a run id as the system name), deleted after. */
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { NatsTransport, type NatsTransportOptions } from "../../../adapters/nats/index.js";
import { runId } from "../../helpers/services.js";

/** Short timings, so redelivery tests take a second, not half a minute. */
export const FAST = { ackWaitMs: 1_500, nakDelayMs: 100, publishTimeoutMs: 5_000 } as const;

export interface NatsSystem {
  system: string;
  url: string;
  open(options?: NatsTransportOptions): Promise<NatsTransport>;
  /** Closes every transport opened here and deletes the system's stream. */
  close(): Promise<void>;
}

export function natsSystem(baseUrl: string): NatsSystem {
  const system = runId("t");
  const url = `${baseUrl.replace(/\?.*$/, "")}?system=${system}`;
  const opened: NatsTransport[] = [];
  return {
    system,
    url,
    open: async (options = {}) => {
      const t = await NatsTransport.connect(url, { ...FAST, ...options });
      opened.push(t);
      return t;
    },
    close: async () => {
      for (const t of opened) await t.close(1_000);
      await dropStream(baseUrl, `PULSE_${system.toUpperCase()}`);
    },
  };
}

export async function dropStream(baseUrl: string, stream: string): Promise<void> {
  const nc = await connect({ servers: baseUrl.replace(/\?.*$/, "") });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(stream).catch(() => undefined);
  } finally {
    await nc.close();
  }
}
