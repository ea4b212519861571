/**
 * A periodic tick whose timer fires long after its time (the process was SIGSTOPped, or starved)
 * is skipped like the ticks its lateness passed over; a timer only a little late still runs its
 * tick. (A fleet host stalled past its lease must not run a tick long past: issue 31.)
 */
import { expect, it } from "vitest";
import { PeriodicCadence } from "../../src/host/cadence/periodic.js";
import type { CadenceContext } from "../../src/host/cadence/driver.js";

function stalledClock() {
  let now = Date.UTC(2026, 3, 10, 12);
  const timers: { at: number; fire: () => void }[] = [];
  return {
    clock: { now: () => now, timer: (ms: number, fire: () => void) => (timers.push({ at: now + ms, fire }), () => undefined) } as unknown as CadenceContext["clock"],
    /** The process wakes `late` ms after the next timer was due, and that timer fires. */
    wake: async (late: number) => {
      const t = timers.shift()!;
      now = t.at + late;
      t.fire();
      await new Promise((r) => setImmediate(r));
    },
    start: now,
  };
}

it("a tick whose timer fires an interval or more late is skipped; one a little late runs; the next tick is the first after now", async () => {
  const { clock, wake, start } = stalledClock();
  const ran: string[] = [];
  const ctx = { loop: { id: "t.late" }, clock, workspace: "w", busy: () => false, note: () => undefined, run: async (r: { input: { scheduled_at: string } }) => void ran.push(r.input.scheduled_at) } as unknown as CadenceContext;
  const cadence = new PeriodicCadence({ interval: "1s" }, ctx);
  cadence.start();
  await wake(900); // the 1 s tick, 0.9 s late: still runs
  expect(ran).toEqual([new Date(start + 1_000).toISOString()]);
  await wake(13_000); // the 2 s tick, fired 13 s late (stopped): long past, not run
  expect(ran).toHaveLength(1);
  expect(cadence.skipped).toBe(1);
  expect(cadence.waiting()?.due).toBe(start + 16_000);
  await wake(0);
  expect(ran).toEqual([new Date(start + 1_000).toISOString(), new Date(start + 16_000).toISOString()]);
  cadence.stop();
});
