import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/runtime/clock.js";
import { CircuitBreaker } from "../../src/runtime/circuit-breaker.js";
import { CircuitOpenError } from "../../src/runtime/errors.js";
import type { CircuitState } from "../../src/runtime/events.js";

describe("VirtualClock", () => {
  it("fires timers in time order, letting woken code schedule more", async () => {
    const clock = new VirtualClock(0);
    const log: string[] = [];
    void clock.sleep(30).then(() => log.push(`30@${clock.now()}`));
    void clock.sleep(10).then(async () => {
      log.push(`10@${clock.now()}`);
      await clock.sleep(5);
      log.push(`15@${clock.now()}`);
    });
    await clock.advance(29);
    expect(log).toEqual(["10@10", "15@15"]);
    expect(clock.now()).toBe(29);
    await clock.advance(1);
    expect(log).toEqual(["10@10", "15@15", "30@30"]);
  });

  it("rejects an aborted sleep and forgets its timer", async () => {
    const clock = new VirtualClock(0);
    const controller = new AbortController();
    const slept = clock.sleep(100, controller.signal);
    controller.abort(new Error("stop"));
    await expect(slept).rejects.toThrow("stop");
    expect(clock.pending).toBe(0);
  });

  it("runAll advances through every pending timer", async () => {
    const clock = new VirtualClock(0);
    let n = 0;
    const tick = async (): Promise<void> => {
      if (++n < 5) {
        await clock.sleep(1000);
        await tick();
      }
    };
    void tick();
    await clock.runAll();
    expect(n).toBe(5);
    expect(clock.now()).toBe(4000);
  });

  // A substrate call over HTTP answers on a later macrotask, after any number of setImmediate
  // turns: time that moved meanwhile skipped the timer set after the answer (the selftest hang).
  it("does not move time while tracked work (a substrate call on the wire) is under way", async () => {
    const clock = new VirtualClock(0);
    const onTheWire = () => clock.track(new Promise<void>((resolve) => setTimeout(resolve, 30)));
    let sleptUntil: number | undefined;
    void (async () => {
      await onTheWire();
      await clock.sleep(500);
      await onTheWire();
      sleptUntil = clock.now();
    })();
    await clock.advance(100);
    expect(clock.inFlightCount).toBe(0);
    expect(clock.pending).toBe(1); // the sleep was set at loop time 0, before time moved
    await clock.advance(400);
    expect(sleptUntil).toBe(500);
    expect(clock.now()).toBe(500);
  });

  it("moves time anyway once tracked work has taken the in-flight bound of real time", async () => {
    const clock = new VirtualClock(0, { inFlightBoundMs: 50 });
    void clock.track(new Promise(() => undefined)); // a peer that never answers
    let fired = false;
    clock.timer(10, () => (fired = true));
    const started = performance.now();
    await clock.advance(20);
    expect(fired).toBe(true);
    expect(clock.now()).toBe(20);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("a tracked call that fails is no longer waited for, and its failure reaches the caller", async () => {
    const clock = new VirtualClock(0);
    const failed = clock.track(Promise.reject(new Error("unavailable")));
    await expect(failed).rejects.toThrow("unavailable");
    await clock.advance(10);
    expect(clock.inFlightCount).toBe(0);
  });
});

describe("CircuitBreaker", () => {
  function breaker(clock: VirtualClock) {
    const changes: string[] = [];
    const b = new CircuitBreaker("memory", clock, { failureThreshold: 3, cooldownMs: 1000 }, (s: CircuitState, p: CircuitState) => changes.push(`${p}->${s}`));
    return { b, changes };
  }

  it("opens after consecutive failures, fails fast, probes after the cooldown, closes on success", async () => {
    const clock = new VirtualClock(0);
    const { b, changes } = breaker(clock);
    for (let i = 0; i < 2; i++) {
      b.admit();
      b.failed();
    }
    expect(b.current).toBe("closed");
    b.admit();
    b.failed();
    expect(b.current).toBe("open");
    expect(() => b.admit()).toThrow(CircuitOpenError);
    await clock.advance(999);
    expect(() => b.admit()).toThrow(CircuitOpenError);
    await clock.advance(1);
    expect(b.current).toBe("half_open");
    b.admit(); // the probe
    expect(() => b.admit()).toThrow(CircuitOpenError); // only one probe at a time
    b.succeeded();
    expect(b.current).toBe("closed");
    expect(changes).toEqual(["closed->open", "open->half_open", "half_open->closed"]);
  });

  it("re-opens when the probe fails, and a success resets the failure count", async () => {
    const clock = new VirtualClock(0);
    const { b } = breaker(clock);
    b.failed();
    b.failed();
    b.succeeded();
    b.failed();
    b.failed();
    expect(b.current).toBe("closed");
    b.failed();
    await clock.advance(1000);
    b.admit();
    b.failed();
    expect(b.current).toBe("open");
    expect(b.retryAt).toBe(2000);
  });
});
