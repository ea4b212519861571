/**
 * One host's fleet membership against a lease store that fails: the holder gives its loops up
 * before its lease runs out for the others (no two holders), says so once, and takes them back
 * when the store answers again.
 */
import { expect, it } from "vitest";
import { InMemoryLeases } from "../../adapters/memory/leases.js";
import { Fleet } from "../../src/fleet/fleet.js";
import type { LeaseStore } from "../../src/fleet/contracts.js";
import { until } from "../transports/contract.js";

/** A lease store that throws like an unreachable database while `down` is set. */
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

it("a holder that cannot renew gives its loops up before the lease runs out, and takes them back when the store answers", async () => {
  const leases = new InMemoryLeases();
  const store = switched(leases);
  const log: string[] = [];
  let lostAt = 0;
  const onLose = (l: string, why: string) => void ((lostAt = Date.now()), log.push(`lose ${l}: ${why}`));
  const fleet = new Fleet({ leases: store, hostId: "h1", workspace: "default", ttlMs: 900, renewMs: 100, onGain: (l) => void log.push(`gain ${l}`), onLose, onNote: (m) => log.push(m) });
  await fleet.start(["shop.orders"]);
  expect(fleet.holds("shop.orders")).toBe(true);
  const lease = (await leases.leases())[0]!;
  store.down = true;
  await until("the loop to be given up", () => !fleet.holds("shop.orders"), 5_000);
  // Given up before the lease ran out for everyone else: never two holders.
  expect(lostAt).toBeLessThan((await leases.leases())[0]!.expires_at);
  expect(log.filter((l) => l.startsWith("fleet: cannot renew leases"))).toHaveLength(1);
  expect(log).toContain("lose shop.orders: its lease could not be renewed before it ran out");
  expect(await fleet.admit("shop.orders", {}, "event")).toBe(false);
  store.down = false;
  await until("the loop to come back", () => fleet.holds("shop.orders"), 5_000);
  expect(log).toContain("fleet: the lease store answers again");
  expect(await fleet.admit("shop.orders", {}, "event")).toBe(true);
  expect((await leases.leases())[0]!.epoch).toBe(lease.epoch);
  await fleet.stop();
  // Stopping released it: another host takes it at once.
  expect(await leases.acquire({ loop_id: "shop.orders", workspace_id: "default" }, "h2", 600)).toMatchObject({ holder: "h2" });
});

it("a periodic tick is admitted once per fleet, and only on the holder", async () => {
  const leases = new InMemoryLeases();
  const a = new Fleet({ leases, hostId: "a", workspace: "default", ttlMs: 60_000 });
  const b = new Fleet({ leases, hostId: "b", workspace: "default", ttlMs: 60_000 });
  await a.start(["shop.orders"]);
  await b.start(["shop.orders"]);
  const tick = { input: { cadence: "periodic", scheduled_at: "2026-04-10T12:00:00.700Z" } };
  expect(await b.admit("shop.orders", tick, "periodic")).toBe(false);
  expect(await a.admit("shop.orders", tick, "periodic")).toBe(true);
  expect(await a.admit("shop.orders", tick, "periodic")).toBe(false);
  expect(await a.admit("shop.orders", { input: { ...tick.input, scheduled_at: "2026-04-10T12:00:01.400Z" } }, "periodic")).toBe(true);
  await a.stop();
  await b.stop();
});
