import { describe, expect, it } from "vitest";
import { hostOn, loopManifest } from "./harness.js";
import { RateLimitedError } from "../../src/host/index.js";

describe("periodic (§8.2)", () => {
  it("iterates every interval after phase_offset, at absolute times", async () => {
    const { host, clock, finished } = await hostOn();
    await host.load(loopManifest("t.periodic", (m) => (m.cadence = { type: "periodic", params: { interval: "10s", phase_offset: "2s" } })));
    const start = clock.now();
    host.start();
    await clock.advance(1_999);
    expect(finished()).toHaveLength(0);
    await clock.advance(1);
    expect(finished().map((e) => e.at - start)).toEqual([2_000]);
    await clock.advance(30_000);
    expect(finished().map((e) => e.at - start)).toEqual([2_000, 12_000, 22_000, 32_000]);
    await host.stop();
    await clock.advance(60_000);
    expect(finished()).toHaveLength(4);
  });

  it("never runs two iterations at once: a slow iteration delays the next tick instead of piling up", async () => {
    const { host, clock, finished, events } = await hostOn();
    const loop = await host.load(loopManifest("t.slow", (m) => (m.cadence = { type: "periodic", params: { interval: "1s" } })));
    let running = 0;
    let most = 0;
    loop.handle("fetch", async ({ clock: c }) => {
      most = Math.max(most, ++running);
      await c.sleep(2_500);
      running--;
      return {};
    });
    const start = clock.now();
    host.start();
    await clock.advance(10_000);
    expect(most).toBe(1);
    // Ticks at 1s (runs to 3.5s), 4s (to 6.5s), 7s (to 9.5s), 10s: the ticks in between are skipped.
    expect(finished().map((e) => e.at - start)).toEqual([3_500, 6_500, 9_500]);
    expect(events.filter((e) => e.type === "cadence.fired").map((e) => e.at - start)).toEqual([1_000, 4_000, 7_000, 10_000]);
    // The iteration fired at 10s is still sleeping: a graceful stop waits for it on virtual time.
    const stopping = host.stop();
    await clock.advance(2_500);
    await stopping;
    expect(finished().map((e) => e.at - start)).toEqual([3_500, 6_500, 9_500, 12_500]);
  });

  it("fires first one interval after start when the manifest sets no phase_offset (a weekly loop does not run at start)", async () => {
    const { host, clock, finished, events } = await hostOn();
    await host.load(loopManifest("t.weekly", (m) => (m.cadence = { type: "periodic", params: { interval: "weekly" }, fallback: { type: "manual" } })));
    await host.load(loopManifest("t.hourly", (m) => (m.cadence = { type: "periodic", params: { interval: "1h", phase_offset: "0s" } })));
    const start = clock.now();
    host.start();
    await clock.advance(3_599_999);
    expect(finished()).toHaveLength(0);
    await clock.advance(1);
    expect(finished().map((e) => `${e.loop_id} ${e.at - start}`)).toEqual(["t.hourly 3600000"]);
    await clock.advance(7 * 86_400_000 - 3_600_000);
    expect(finished("t.weekly").map((e) => e.at - start)).toEqual([7 * 86_400_000]);
    // Each periodic iteration names its cause, as a trace or a log line shows it.
    const started = events.find((e) => e.type === "iteration.started" && e.loop_id === "t.weekly");
    expect(started).toMatchObject({ cause: { cadence: "periodic", scheduled_at: new Date(start + 7 * 86_400_000).toISOString() } });
    await host.stop();
  });
});

describe("idle (§8.4)", () => {
  it("iterates after min_idle_ms of host-wide idleness, at most max_iteration_per_idle times per idle period", async () => {
    const { host, clock, finished } = await hostOn();
    await host.load(loopManifest("t.idle", (m) => (m.cadence = { type: "idle", params: { min_idle_ms: 5_000, max_iteration_per_idle: 2 } })));
    await host.load(loopManifest("t.busy", (m) => (m.cadence = { type: "manual" })));
    const start = clock.now();
    host.start();
    await clock.advance(4_999);
    expect(finished("t.idle")).toHaveLength(0);
    await clock.advance(1);
    expect(finished("t.idle")).toHaveLength(2);
    await clock.advance(60_000);
    expect(finished("t.idle")).toHaveLength(2); // still the same idle period

    // Activity elsewhere in the host starts a new period.
    await clock.advance(1_000);
    await host.trigger("t.busy");
    const busyAt = clock.now();
    await clock.advance(4_999);
    expect(finished("t.idle")).toHaveLength(2);
    await clock.advance(1);
    expect(finished("t.idle").map((e) => e.at - start).slice(2)).toEqual([busyAt - start + 5_000, busyAt - start + 5_000]);
    await host.stop();
  });
});

describe("event (§8.1)", () => {
  it("iterates on a matching event whose filter holds, with the event as input", async () => {
    const { host, finished } = await hostOn();
    const loop = await host.load(loopManifest("t.event", (m) => (m.cadence = { type: "event", params: { trigger: "agent_query", filter: "priority >= 3" } })));
    const inputs: unknown[] = [];
    loop.handle("fetch", ({ input }) => (inputs.push(input), {}));
    host.start();
    expect(await host.emitEvent("agent_query", { priority: 5, q: "a" })).toHaveLength(1);
    expect(await host.emitEvent("agent_query", { priority: 1 })).toHaveLength(0);
    expect(await host.emitEvent("other", { priority: 9 })).toHaveLength(0);
    expect(inputs).toEqual([{ priority: 5, q: "a" }]);
    expect(finished()).toHaveLength(1);
    await host.stop();
  });
});

describe("manual (§8.6)", () => {
  it("refuses triggers over the rate limit with a clear reason, and admits them again later", async () => {
    const { host, clock } = await hostOn();
    await host.load(loopManifest("t.manual", (m) => (m.cadence = { type: "manual", params: { interface: "cli", rate_limit: "2/min" } })));
    await host.trigger("t.manual");
    await clock.advance(10_000);
    await host.trigger("t.manual");
    const refused = await host.trigger("t.manual").catch((e) => e);
    expect(refused).toBeInstanceOf(RateLimitedError);
    expect(refused.code).toBe("RATE_LIMITED");
    expect(refused.message).toMatch(/rate_limit 2\/min reached; the next trigger is admitted in 50\.0s/);
    await clock.advance(50_000);
    expect((await host.trigger("t.manual")).status).toBe("completed");
  });
});

describe("the host's workspace", () => {
  it("reaches the runtime: a trigger without a workspace runs in the host's, audited there; one that names a workspace runs in that", async () => {
    const { host, events } = await hostOn({ workspace: "ws_h" });
    const loop = await host.load(loopManifest("t.ws", (m) => (m.cadence = { type: "manual" })));
    const seen: string[] = [];
    loop.handle("fetch", ({ workspace_id }) => (seen.push(workspace_id), {}));
    const r = await host.trigger("t.ws");
    expect(r.workspace_id).toBe("ws_h");
    expect((await host.trigger("t.ws", { workspace: "ws_other" })).workspace_id).toBe("ws_other");
    expect(seen).toEqual(["ws_h", "ws_other"]);
    expect(loop.snapshot("ws_h").iterations).toBe(1);
    expect(loop.snapshot("default").iterations).toBe(0);
    // A manual trigger names its cause unless the caller gives one.
    expect(events.filter((e) => e.type === "iteration.started").map((e) => (e as { cause?: unknown }).cause)).toEqual([{ trigger: "manual" }, { trigger: "manual" }]);
    await host.stop();
  });

  it("reaches cadence-triggered iterations too (periodic, on virtual time)", async () => {
    const { host, clock, finished } = await hostOn({ workspace: "ws_p" });
    await host.load(loopManifest("t.pws", (m) => (m.cadence = { type: "periodic", params: { interval: "1s" } })));
    host.start();
    await clock.advance(1_000);
    expect(finished().map((e) => e.workspace_id)).toEqual(["ws_p"]);
    await host.stop();
  });
});

describe("streaming (§8.3)", () => {
  it("iterates per batch_size values and flushes the last partial batch", async () => {
    async function* ticks() {
      for (let i = 1; i <= 7; i++) yield { tick: i };
    }
    const { host } = await hostOn({ streams: { "sensor://ticks": ticks() } });
    const loop = await host.load(loopManifest("t.stream", (m) => (m.cadence = { type: "streaming", params: { stream: "sensor://ticks", batch_size: 3 } })));
    const batches: unknown[] = [];
    loop.handle("fetch", ({ input }) => (batches.push((input as { batch: unknown[] }).batch.length), {}));
    host.start();
    await new Promise((r) => setTimeout(r, 50));
    await host.settled();
    expect(batches).toEqual([3, 3, 1]);
    await host.stop();
  });

  it("reports an unbound stream instead of failing", async () => {
    const { host, events } = await hostOn();
    await host.load(loopManifest("t.nostream", (m) => (m.cadence = { type: "streaming", params: { stream: "kafka://nowhere" } })));
    host.start();
    expect(events.find((e) => e.type === "host.note")).toMatchObject({ loop_id: "t.nostream", message: expect.stringMatching(/stream kafka:\/\/nowhere .* is not bound/) });
    await host.stop();
  });
});

describe("fallback cadences (§3.3)", () => {
  it("arms the fallback beside the primary: events, and idle consolidation when none come", async () => {
    const { host, clock, finished } = await hostOn();
    await host.load(loopManifest("t.fallback", (m) => (m.cadence = { type: "event", params: { trigger: "q" }, fallback: { type: "idle", params: { min_idle_ms: 60_000 } } })));
    host.start();
    await host.emitEvent("q");
    await clock.advance(59_000);
    expect(finished()).toHaveLength(1);
    await clock.advance(1_000);
    expect(finished()).toHaveLength(2);
    await host.stop();
  });
});

describe("graceful stop", () => {
  it("lets in-flight iterations finish and starts nothing new", async () => {
    const { host, clock, finished, events } = await hostOn();
    const loop = await host.load(loopManifest("t.stop", (m) => (m.cadence = { type: "periodic", params: { interval: "1s" } })));
    loop.handle("fetch", async ({ clock: c }) => (await c.sleep(500), {}));
    host.start();
    await clock.advance(1_100);
    const stopping = host.stop();
    await clock.advance(400);
    await stopping;
    expect(finished().map((e) => e.status)).toEqual(["completed"]);
    await clock.advance(5_000);
    expect(finished()).toHaveLength(1);
    await expect(host.trigger("t.stop")).rejects.toMatchObject({ code: "HOST_STOPPING" });
    expect(events.some((e) => e.type === "cadence.fired" && e.at > clock.now() - 5_000)).toBe(false);
  });
});
