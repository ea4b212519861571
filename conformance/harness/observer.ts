/**
 * How the harness sees substrate calls and makes substrates fail. Two evidence classes:
 * "recording-substrate": the harness serves the substrates itself (HTTP substrate protocol on
 * loopback) and the runtime binds to them, so every call is seen from outside the runtime;
 * "driver-fault-injection": the runtime keeps its own substrates and reports their calls and
 * injects outages through the driver (calls.read, fault.inject), for runtimes that cannot rebind.
 */
import { createSubstrateServer, type SubstrateServer } from "../../adapters/http/server.js";
import { inMemorySubstrates } from "../../adapters/memory/index.js";
import { SUBSTRATE_OPERATIONS, SubstrateUnavailableError, type SubstrateSet, type SubstrateSlotName } from "../../src/substrates/contracts.js";
import type { Driver } from "../driver/driver.js";
import type { ObservedCall } from "../driver/protocol.js";
import type { EvidenceClass } from "../report/types.js";

export interface Observer {
  readonly evidenceClass: EvidenceClass;
  /** What `configure.substrate_url` says: the recording substrate's URL, or null. */
  readonly substrateUrl: string | null;
  /** Forget everything: fresh substrates, no calls, no outage (before each test). */
  reset(): Promise<void>;
  /** Every call since the last reset, in the order they arrived. */
  calls(): Promise<ObservedCall[]>;
  fail(slot: SubstrateSlotName): Promise<void>;
  heal(slot: SubstrateSlotName): Promise<void>;
  close(): Promise<void>;
}

/** The harness's own substrates, served on loopback; every call recorded as it arrives. */
export class RecordingSubstrate implements Observer {
  readonly evidenceClass = "recording-substrate" as const;
  private set: SubstrateSet;
  private recorded: ObservedCall[] = [];
  private readonly down = new Set<SubstrateSlotName>();
  private server: SubstrateServer | undefined;
  private url: string | null = null;

  /** `fresh` builds the substrates served behind the recorder, anew on every reset (tests slow them down). */
  constructor(private readonly fresh: () => SubstrateSet = inMemorySubstrates) {
    this.set = fresh();
  }

  get substrateUrl(): string | null {
    return this.url;
  }

  async start(): Promise<this> {
    // A forwarding set, so reset() can swap in fresh substrates behind the same server.
    const forward = Object.fromEntries(
      Object.entries(SUBSTRATE_OPERATIONS).map(([slot, ops]) => [
        slot,
        Object.fromEntries(
          ops.map((op) => [
            op,
            (args: unknown, ctx: { trace_id: string; workspace_id: string; tx_id?: string }) => {
              const s = slot as SubstrateSlotName;
              const call: ObservedCall = { slot, operation: op, args, context: { trace_id: ctx.trace_id, workspace_id: ctx.workspace_id, ...(ctx.tx_id ? { tx_id: ctx.tx_id } : {}) }, at: Date.now() };
              this.recorded.push(call);
              if (this.down.has(s)) {
                call.error = "unavailable (injected by the harness)";
                return Promise.reject(new SubstrateUnavailableError(s, "unavailable (injected by the harness)"));
              }
              const impl = (this.set as unknown as Record<string, Record<string, (a: unknown, c: unknown) => Promise<unknown>>>)[slot];
              return impl![op]!.call(impl, args, ctx);
            },
          ]),
        ),
      ]),
    ) as unknown as SubstrateSet;
    this.server = createSubstrateServer(forward);
    this.url = (await this.server.listen(0, "127.0.0.1")).url;
    return this;
  }

  async reset(): Promise<void> {
    this.set = this.fresh();
    this.recorded = [];
    this.down.clear();
  }

  async calls(): Promise<ObservedCall[]> {
    return [...this.recorded];
  }

  async fail(slot: SubstrateSlotName): Promise<void> {
    this.down.add(slot);
  }

  async heal(slot: SubstrateSlotName): Promise<void> {
    this.down.delete(slot);
  }

  async close(): Promise<void> {
    await this.server?.close();
  }
}

/** Calls and outages through the driver, for runtimes that keep their own substrates. */
export class DriverObserver implements Observer {
  readonly evidenceClass = "driver-fault-injection" as const;
  readonly substrateUrl = null;
  private cursor = 0;

  constructor(private readonly driver: Driver) {}

  async reset(): Promise<void> {
    // configure gave the runtime fresh substrates; only calls from now on count.
    this.cursor = (await this.driver.call("calls.read", { since: 0 })).next;
  }

  async calls(): Promise<ObservedCall[]> {
    return (await this.driver.call("calls.read", { since: this.cursor })).calls;
  }

  async fail(slot: SubstrateSlotName): Promise<void> {
    await this.driver.call("fault.inject", { slot, mode: "unavailable" });
  }

  async heal(slot: SubstrateSlotName): Promise<void> {
    await this.driver.call("fault.heal", { slot });
  }

  async close(): Promise<void> {}
}
