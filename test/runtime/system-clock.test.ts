/**
 * setTimeout fires after 1 ms for any delay past 2^31-1 ms, Infinity included: a manifest's
 * `timeout_ms: .inf` (accepted by the published schema) must not time a phase out at once.
 */
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/runtime/clock.js";

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the system clock", () => {
  it("never fires a timer of Infinity, and caps a longer-than-setTimeout delay instead of firing at once", async () => {
    const fired: string[] = [];
    const cancels = [systemClock.timer(Infinity, () => fired.push("infinite")), systemClock.timer(3e9, () => fired.push("3e9")), systemClock.timer(1, () => fired.push("1ms"))];
    const sleeping = systemClock.sleep(Infinity).then(() => fired.push("sleep"));
    await wait(100);
    cancels.forEach((c) => c());
    expect(fired).toEqual(["1ms"]);
    void sleeping;
  });

  it("an infinite sleep still ends when aborted", async () => {
    const controller = new AbortController();
    const sleeping = systemClock.sleep(Infinity, controller.signal);
    controller.abort(new Error("stop"));
    await expect(sleeping).rejects.toThrow("stop");
  });
});
