/**
 * `pulse run --fleet postgres://… --transport nats://…`: this run shares its loops with every
 * other `pulse run` of the fleet (the same database schema and NATS system). Each loop runs on
 * the host holding its lease (src/fleet); the others stand by and take over when it dies.
 */
import { hostname } from "node:os";
import { parseDuration } from "../grammar/duration.js";
import { UsageError } from "./exit-codes.js";
import type { Fleet } from "../fleet/fleet.js";
import type { NatsTransport } from "../../adapters/nats/index.js";
import type { SignalHost } from "../../adapters/nats/transport.js";
import type { IterationRequest } from "../runtime/iteration-result.js";

export const FLEET_HELP = `
--fleet postgres://…[?schema=name] (with --transport nats://…) shares this run's loops with every
other pulse run of the fleet: each loop runs on one host at a time, the holder of its lease in
PostgreSQL (--lease-ttl, default 15s), which fires its cadences (each periodic tick once per fleet)
and takes its signals. A host that dies is taken over once its leases run out; one that stops
gives them up at once. Prepare the database once with pulse store migrate --store <same URL>.
In a fleet, loops get no kickoff iteration: they run on their cadences and signals only.`;

/** What the fleet needs of the host: its loops and signals, and a way to run a taken-over tick. */
export type FleetHost = SignalHost & {
  trigger(loopId: string, request: IterationRequest): Promise<unknown>;
  takeOver(loopId: string, workspace: string): Promise<{ ticks: number[]; finished: Promise<unknown> }>;
  release(loopId: string, why: string, workspace: string): void;
};

export interface FleetRun {
  fleet: Fleet;
  /** Starts competing for the leases of the host's loops. */
  start(host: FleetHost): Promise<void>;
  /** Gives the leases up and closes the database connection. */
  stop(): Promise<void>;
}

export async function openFleet(
  url: string,
  options: { workspace: string; hostId?: string; leaseTtl?: string; nats: NatsTransport; note: (message: string) => void; store?: unknown },
): Promise<FleetRun> {
  const ttl = parseDuration(options.leaseTtl ?? "15s");
  if (!ttl.ok) throw new UsageError(`--lease-ttl: ${ttl.error.message}`);
  if (ttl.value < 300) throw new UsageError(`--lease-ttl must be at least 300ms, not ${options.leaseTtl}: hosts renew three times per lease`);
  const { PostgresDatabase, PostgresLeases, PostgresAddressError, PostgresStoreError } = await import("../../adapters/postgres/index.js");
  const { Fleet } = await import("../fleet/fleet.js");
  let db: Awaited<ReturnType<typeof PostgresDatabase.open>>;
  try {
    db = await PostgresDatabase.open(url, { max: 4, onNote: options.note });
  } catch (error) {
    if (error instanceof PostgresAddressError || error instanceof PostgresStoreError) throw new UsageError(`--fleet: ${error.message}`);
    throw error;
  }
  const hostId = options.hostId ?? `${hostname()}:${process.pid}`;
  let host: FleetHost | undefined;
  const fleet = new Fleet({
    leases: new PostgresLeases(db),
    hostId,
    workspace: options.workspace,
    ttlMs: ttl.value,
    onNote: options.note,
    onGain: async (loopId, lease) => {
      options.note(`fleet: ${loopId} runs here (${hostId}, lease epoch ${lease.epoch})`);
      if (host) await options.nats.serveLoop(host, loopId);
    },
    resume: async (loopId) => {
      if (!host) throw new Error("the host is not running yet");
      return host.takeOver(loopId, options.workspace);
    },
    rerun: async (loopId, request) => {
      if (!host) throw new Error("the host is not running yet");
      return host.trigger(loopId, request);
    },
    onLose: async (loopId, why) => {
      options.note(`fleet: ${loopId} no longer runs here: ${why}`);
      host?.release(loopId, why, options.workspace);
      await options.nats.stopReceiving(loopId);
    },
  });
  // A PostgreSQL store on the fleet's schema commits each unit only while its lease is still this host's.
  const fenced = (options.store as { fenceWith?: (url: string, fence: Fleet["fence"]) => boolean } | undefined)?.fenceWith?.(url, (loopId, workspace) => fleet.fence(loopId, workspace));
  if (fenced === false) options.note("fleet: the store is not in the fleet's database schema: its commits are fenced by this host only, not by the database");
  return {
    fleet,
    start: async (h) => {
      host = h;
      await fleet.start(h.loops.map((l) => l.id));
    },
    stop: async () => {
      await fleet.stop();
      await db.close();
    },
  };
}
