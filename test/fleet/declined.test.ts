/**
 * What a standby host of a fleet says about the triggers it declines: nothing while another, live
 * host holds the loop's lease (the routine case, every tick of every standby host), and once, with
 * the reason, when no host is known to run the loop because the lease store cannot be reached.
 */
import { expect, it } from "vitest";
import { InMemoryLeases } from "../../adapters/memory/leases.js";
import { Fleet } from "../../src/fleet/fleet.js";
import type { LeaseStore } from "../../src/fleet/contracts.js";
import type { HostEvent } from "../../src/host/host.js";
import { hostOn, loopManifest } from "../host/harness.js";
import { until } from "../transports/contract.js";

/** The lease store as the standby host sees it: throwing like an unreachable database while `down`. */
function switched(inner: LeaseStore): LeaseStore & { down: boolean } {
  const store = {
    down: false,
    guard<T>(f: () => Promise<T>): Promise<T> {
      return store.down ? Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:5432")) : f();
    },
    acquire: (...a: Parameters<LeaseStore["acquire"]>) => store.guard(() => inner.acquire(...a)),
    release: (...a: Parameters<LeaseStore["release"]>) => store.guard(() => inner.release(...a)),
    claimTick: (...a: Parameters<LeaseStore["claimTick"]>) => store.guard(() => inner.claimTick(...a)),
    finishTick: (...a: Parameters<LeaseStore["finishTick"]>) => store.guard(() => inner.finishTick(...a)),
    unfinishedTicks: (...a: Parameters<LeaseStore["unfinishedTicks"]>) => store.guard(() => inner.unfinishedTicks(...a)),
    leases: () => store.guard(() => inner.leases()),
  };
  return store;
}

it("a standby host declines its ticks silently while a live host runs the loop, and says once why when the lease store cannot be reached", async () => {
  const leases = new InMemoryLeases();
  const holder = new Fleet({ leases, hostId: "holder", workspace: "default", ttlMs: 60_000 });
  await holder.start(["t.tick"]);
  const seen = switched(leases);
  const notes: string[] = [];
  const standby = new Fleet({ leases: seen, hostId: "standby", workspace: "default", ttlMs: 60_000, renewMs: 50, onNote: (m) => notes.push(m) });
  const { host, clock, events } = await hostOn({ fleet: standby });
  await host.load(loopManifest("t.tick", (m) => (m.cadence = { type: "periodic", params: { interval: "1s" } })));
  host.start();
  await standby.start(["t.tick"]);
  const declined = () => events.filter((e): e is Extract<HostEvent, { type: "cadence.declined" }> => e.type === "cadence.declined");
  const ticks = async (n: number) => {
    for (let i = 0; i < n; i++) await clock.advance(1000);
  };
  await ticks(5);
  expect(events.filter((e) => e.type === "iteration.started")).toEqual([]);
  expect(declined()).toEqual([]);
  seen.down = true;
  await until("the standby to notice", () => notes.some((n) => n.startsWith("fleet: cannot renew leases")), 5_000);
  await ticks(5);
  expect(declined().map((e) => e.reason)).toEqual(["no host of the fleet is known to run it: the lease store cannot be reached (connect ECONNREFUSED 127.0.0.1:5432); not said again until it answers"]);
  seen.down = false;
  await until("the store to answer", () => notes.includes("fleet: the lease store answers again"), 5_000);
  await ticks(5);
  expect(declined()).toHaveLength(1);
  await host.stop({ timeoutMs: 0 });
  await standby.stop();
  await holder.stop();
});
