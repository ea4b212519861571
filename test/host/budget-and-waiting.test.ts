// A host that starts at most N iterations (pulse run --iterations), and a host that says what each
// loop waits for and when its next trigger is due (pulse run's "waiting" note).
import { describe, expect, it } from "vitest";
import { hostOn, loopManifest } from "./harness.js";
import { connectionTo, oneHost, ofType } from "./signals-harness.js";

describe("maxIterations", () => {
  it("counts every iteration whatever starts it (cadence, trigger, signal) and starts no more: exactly N", async () => {
    const { host, clock, events } = await hostOn({ maxIterations: 4 });
    await host.load(loopManifest("t.tick", (m) => (m.cadence = { type: "periodic", params: { interval: "1s" }, fallback: { type: "manual" } })));
    host.start();
    await host.trigger("t.tick");
    await clock.advance(10_000);
    const started = ofType(events, "iteration.started");
    expect(started).toHaveLength(4);
    expect(started.map((e) => e.cause)).toEqual([{ trigger: "manual" }, ...[1, 2, 3].map(() => expect.objectContaining({ cadence: "periodic" }))]);
    await expect(host.trigger("t.tick")).rejects.toMatchObject({ code: "ITERATIONS_SPENT", message: expect.stringMatching(/4 iterations \(maxIterations\) have all started/) });
    expect(ofType(events, "cadence.declined").at(-1)?.reason).toMatch(/maxIterations/);
    await host.stop();
  });

  it("a signal past the budget is rejected with the reason (never silently taken); one within it runs", async () => {
    for (const max of [2, 1]) {
      const { host, events } = await oneHost(connectionTo(), { host: { maxIterations: max } });
      await host.trigger("t.a", { input: { n: 1 } });
      await host.stop();
      const started = ofType(events, "iteration.started");
      expect(started.map((e) => e.loop_id), `max ${max}`).toEqual(max === 2 ? ["t.a", "t.b"] : ["t.a"]);
      if (max === 1) expect(ofType(events, "signal.dropped")[0]).toMatchObject({ detail: "rejected", message: expect.stringMatching(/maxIterations/) });
      else expect(ofType(events, "signal.delivered")).toHaveLength(1);
    }
  });

  it("does not count an inner loop's iterations: they belong to the outer iteration", async () => {
    const { host, events } = await hostOn({ maxIterations: 1 });
    await host.load(loopManifest("t.outer", (m) => (m.nesting = { inner_loops: [{ loop_id: "t.inner", trigger: "phase:fetch", wait: "until_done" }] })));
    await host.load(loopManifest("t.inner", (m) => (m.nesting = { parent_loop: "t.outer" })));
    expect((await host.trigger("t.outer")).status).toBe("completed");
    expect(ofType(events, "iteration.finished").map((e) => e.loop_id)).toEqual(["t.inner", "t.outer"]);
  });
});

describe("waiting()", () => {
  it("says what each loop waits for and when the next firing is due", async () => {
    const { host, clock } = await hostOn();
    await host.load(loopManifest("t.weekly", (m) => (m.cadence = { type: "periodic", params: { interval: "weekly" }, fallback: { type: "manual" } })));
    await host.load(loopManifest("t.event", (m) => (m.cadence = { type: "event", params: { trigger: "agent_query" }, fallback: { type: "idle", params: { min_idle_ms: 60_000 } } })));
    await host.load(loopManifest("t.listener", (m) => (m.cadence = { type: "cross_loop_signal", params: { from_loop: "t.weekly", from_phase: "learn" } })));
    const start = clock.now();
    expect(host.waiting().filter((w) => w.armed)).toEqual([]); // nothing is armed before start()
    host.start();
    expect(host.quiet).toBe(true);
    expect(host.waiting()).toEqual([
      { loop_id: "t.weekly", for: "periodic tick (every weekly)", due: start + 7 * 86_400_000, armed: true },
      { loop_id: "t.weekly", for: "a manual trigger", armed: false },
      { loop_id: "t.event", for: "idle (60000 ms without an iteration in the host)", due: start + 60_000, armed: true },
      { loop_id: "t.event", for: 'event "agent_query"', armed: false },
      { loop_id: "t.listener", for: "a signal from t.weekly/learn", armed: false },
    ]);
    // Once the idle cadence used its quota for the idle period, only activity elsewhere re-arms it.
    await clock.advance(60_000);
    expect(host.waiting().filter((w) => w.loop_id === "t.event")).toEqual([{ loop_id: "t.event", for: 'event "agent_query"', armed: false }]);
    await host.stop();
    expect(host.waiting().filter((w) => w.armed)).toEqual([]);
  });
});
