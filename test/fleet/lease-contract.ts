/** The behaviour every LeaseStore owes a fleet (src/fleet/contracts.ts), run against each of them. */
import { afterEach, describe, expect, it } from "vitest";
import type { LeaseStore } from "../../src/fleet/contracts.js";

export interface LeasesUnderTest {
  name: string;
  open(): Promise<{ leases: LeaseStore; wait(ms: number): Promise<void>; close(): Promise<void> }>;
}

const key = { loop_id: "shop.orders", workspace_id: "acme" };

export function leaseContract(under: LeasesUnderTest): void {
  describe(`lease contract: ${under.name}`, () => {
    let opened: Awaited<ReturnType<LeasesUnderTest["open"]>> | undefined;
    const open = async () => (opened = await under.open());
    afterEach(async () => {
      await opened?.close();
      opened = undefined;
    });

    it("one host takes a free lease; another is refused while it runs; the holder renews it", async () => {
      const { leases, wait } = await open();
      const first = await leases.acquire(key, "host-a", 2_000);
      expect(first).toMatchObject({ ...key, holder: "host-a", epoch: 1 });
      expect(await leases.acquire(key, "host-b", 2_000)).toBeUndefined();
      await wait(50);
      const renewed = await leases.acquire(key, "host-a", 2_000);
      expect(renewed).toMatchObject({ holder: "host-a", epoch: 1, origin: first?.origin });
      expect(renewed!.expires_at).toBeGreaterThan(first!.expires_at);
      // The near-miss: another loop's lease is another lease.
      expect(await leases.acquire({ ...key, loop_id: "shop.billing" }, "host-b", 2_000)).toMatchObject({ holder: "host-b", epoch: 1 });
    });

    it("a lease that ran out is taken over (the epoch grows, the schedule origin stays), and its old holder cannot renew it", async () => {
      const { leases, wait } = await open();
      const first = await leases.acquire(key, "host-a", 300);
      await wait(450);
      const taken = await leases.acquire(key, "host-b", 2_000);
      expect(taken).toMatchObject({ holder: "host-b", epoch: 2, origin: first?.origin });
      expect(await leases.acquire(key, "host-a", 2_000)).toBeUndefined();
      expect((await leases.leases()).map((l) => [l.loop_id, l.holder, l.epoch])).toEqual([["shop.orders", "host-b", 2]]);
    });

    it("a released lease is taken at once by another host", async () => {
      const { leases } = await open();
      await leases.acquire(key, "host-a", 60_000);
      await leases.release(key, "host-b"); // not its lease: nothing happens
      expect(await leases.acquire(key, "host-b", 60_000)).toBeUndefined();
      await leases.release(key, "host-a");
      expect(await leases.acquire(key, "host-b", 60_000)).toMatchObject({ holder: "host-b", epoch: 2 });
    });

    it("of ten hosts racing for a free lease exactly one gets it", async () => {
      const { leases } = await open();
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => leases.acquire(key, `host-${i}`, 60_000)));
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    });

    it("a scheduled tick is claimed once per fleet; another tick, or another loop's, is claimed anew", async () => {
      const { leases } = await open();
      const at = Date.UTC(2026, 3, 10, 12);
      const claims = await Promise.all(["host-a", "host-b", "host-c"].map((h) => leases.claimTick(key, at, h)));
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect(await leases.claimTick(key, at + 1_000, "host-b")).toBe(true);
      expect(await leases.claimTick({ ...key, loop_id: "shop.billing" }, at, "host-b")).toBe(true);
    });

    it("a tick is claimed only under the claimer's current lease: a former holder (another epoch, or its lease run out) is refused; the holder's own claim is not", async () => {
      const { leases, wait } = await open();
      const at = Date.UTC(2026, 3, 10, 12);
      const first = await leases.acquire(key, "host-a", 300);
      // The near miss: the holder claims under its lease.
      expect(await leases.claimTick(key, at, "host-a", first!.epoch)).toBe(true);
      await wait(450);
      // Stalled past its lease: run out, not yet taken over.
      expect(await leases.claimTick(key, at + 1_000, "host-a", first!.epoch)).toBe(false);
      const taken = await leases.acquire(key, "host-b", 2_000);
      // Taken over: the former holder's claim of the new holder's tick is refused, the new holder's is not.
      expect(await leases.claimTick(key, at + 1_000, "host-a", first!.epoch)).toBe(false);
      expect(await leases.claimTick(key, at + 1_000, "host-a", taken!.epoch)).toBe(false);
      expect(await leases.claimTick(key, at + 1_000, "host-b", taken!.epoch)).toBe(true);
      expect(await leases.unfinishedTicks(key, "")).toEqual([
        { scheduled_at: at, holder: "host-a" },
        { scheduled_at: at + 1_000, holder: "host-b" },
      ]);
    });

    it("ticks claimed and never finished are listed for a host taking over, oldest first; finished ones and its own are not", async () => {
      const { leases } = await open();
      const at = Date.UTC(2026, 3, 10, 12);
      for (const [offset, holder] of [[2_000, "host-a"], [0, "host-a"], [1_000, "host-a"], [3_000, "host-b"]] as const) await leases.claimTick(key, at + offset, holder);
      await leases.finishTick(key, at + 1_000);
      expect(await leases.unfinishedTicks(key, "host-b")).toEqual([
        { scheduled_at: at, holder: "host-a" },
        { scheduled_at: at + 2_000, holder: "host-a" },
      ]);
      expect(await leases.unfinishedTicks({ ...key, workspace_id: "globex" }, "host-b")).toEqual([]);
    });
  });
}
