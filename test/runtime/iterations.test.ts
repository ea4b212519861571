import { describe, expect, it } from "vitest";
import { auditShape, manifestWith, setup, TRACE, TRACE_2 } from "./harness.js";
import { ManifestRejectedError, PulseError } from "../../src/runtime/index.js";

describe("loading", () => {
  it("refuses an invalid manifest with its diagnostics", async () => {
    const bad = manifestWith((m) => (m.phases[0].kind = "retreive"));
    const error = await setup(bad).catch((e) => e);
    expect(error).toBeInstanceOf(ManifestRejectedError);
    expect(error.code).toBe("MANIFEST_INVALID");
    expect(error.diagnostics.map((d: { rule: string }) => d.rule)).toContain("schema/enum");
    expect(error.message).toMatch(/phases\[0\]\.kind must be one of/);
  });

  it("refuses a newer protocol version naming both versions (§16)", async () => {
    const error = await setup(manifestWith((m) => (m.pulse_protocol_version = "0.2"))).catch((e) => e);
    expect(error.message).toMatch(/declares PULSE 0\.2, but this validator supports PULSE 0\.1/);
  });

  it("loads a manifest file, with warnings allowed", async () => {
    const { runtime } = await setup();
    const prism = await runtime.load("manifests/prism.benchmark.yaml");
    expect(prism.id).toBe("prism.benchmark");
    expect(prism.compiled.phases.map((p) => p.id)).toEqual(["compose", "interact", "observe", "reflect", "diagnose"]);
  });
});

describe("iterations", () => {
  it("runs phases in declared order; the first iteration starts at phases[0], later ones at closure.to_phase", async () => {
    const m = manifestWith((m) => {
      m.phases.unshift({ id: "preflight", kind: "custom", custom_kind: "preflight" });
    });
    const { loop, calls } = await setup(m);
    const first = await loop.runIteration({ input: { q: 1 } });
    expect(calls).toEqual(["preflight", "fetch", "decide", "apply", "learn"]);
    expect(first).toMatchObject({ status: "completed", closed: true, iteration: 1 });
    calls.length = 0;
    await loop.runIteration();
    expect(calls).toEqual(["fetch", "decide", "apply", "learn"]);
  });

  it("passes each phase's output to the next as input", async () => {
    const seen: unknown[] = [];
    const { loop } = await setup(undefined, {
      handlers: {
        retrieve: () => ({ n: 1 }),
        route: ({ input }) => (seen.push(input), { decision: "fast", n: 2 }),
        act: ({ input }) => (seen.push(input), { causal_parent_ids: ["x"] }),
        learn: ({ input }) => (seen.push(input), null),
      },
    });
    const r = await loop.runIteration();
    expect(seen).toEqual([{ n: 1 }, { decision: "fast", n: 2 }, { causal_parent_ids: ["x"] }]);
    expect(r.output).toBeNull();
  });

  it("redirects a route phase through outputs.to (§5.3) and audits phase.routed", async () => {
    const m = manifestWith((m) => {
      m.phases[1].outputs = { to: "phase:apply|phase:learn" };
    });
    const { loop, calls, audit } = await setup(m, {
      handlers: { retrieve: () => ({}), route: ({ phase }) => (calls.push(phase.id), { decision: "skip-act", next: "learn" }), act: () => ({ causal_parent_ids: [] }), learn: ({ phase }) => (calls.push(phase.id), {}) },
    });
    const r = await loop.runIteration({ traceId: TRACE });
    // learn after a route that skipped the act: the feedback path refuses it (test 2 of §12).
    expect(r.phases.map((p) => [p.phase_id, p.status])).toEqual([["fetch", "completed"], ["decide", "completed"], ["learn", "failed"]]);
    expect(r.phases[1]!.routed_to).toBe("learn");
    const routed = (await audit(TRACE)).find((e) => e.event_type === "phase.routed");
    expect(routed).toMatchObject({ phase_id: "decide", data: { decision: "skip-act", next: "learn" } });
  });

  it("refuses a route to a phase its outputs.to does not name", async () => {
    const m = manifestWith((m) => (m.phases[1].outputs = { to: "phase:apply" }));
    const { loop } = await setup(m, { handlers: { retrieve: () => ({}), route: () => ({ next: "learn" }) } });
    const r = await loop.runIteration();
    expect(r.status).toBe("failed");
    expect(r.error?.code).toBe("ROUTE_INVALID");
    expect(r.error?.message).toMatch(/outputs\.to does not name \(phase:apply\)/);
  });

  it("names the missing handler and how to register it", async () => {
    const { loop } = await setup(undefined, { handlers: {} });
    const r = await loop.runIteration();
    expect(r.error).toMatchObject({ code: "NO_HANDLER" });
    expect(r.error?.message).toMatch(/loop\.handle\("fetch", fn\)/);
  });

  it("prefers loop handlers, then runtime handlers by phase id, then by kind", async () => {
    const { runtime, loop } = await setup();
    const order: string[] = [];
    runtime.handle("fetch", () => (order.push("runtime-id"), {}));
    runtime.handle("test.loop/decide", () => (order.push("runtime-loop-id"), { decision: "fast" }));
    loop.handle("apply", () => (order.push("loop"), { causal_parent_ids: [] }));
    await loop.runIteration();
    expect(order).toEqual(["runtime-id", "runtime-loop-id", "loop"]);
    expect(() => loop.handle("nope", () => null)).toThrow(PulseError);
  });

  it("records one audit event per transition, numbered without gaps", async () => {
    const { loop, audit } = await setup();
    await loop.runIteration({ traceId: TRACE });
    const events = await audit(TRACE);
    expect(auditShape(events)).toEqual(["iteration.started", "phase.completed fetch", "phase.routed decide", "phase.completed apply", "phase.completed learn", "iteration.completed"]);
    expect(events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    for (const e of events) {
      expect(e.trace_id).toBe(TRACE);
      expect(e.signature).toMatch(/^blake3:[0-9a-f]{64}$/);
      expect(e.timestamp).toBe("2026-04-10T00:00:00.000Z");
    }
  });

  it("keeps workspaces apart: statuses, iteration numbers and audit", async () => {
    const { loop, audit } = await setup();
    const a = await loop.runIteration({ workspace: "a", traceId: TRACE });
    const b = await loop.runIteration({ workspace: "b", traceId: TRACE_2 });
    expect([a.iteration, b.iteration]).toEqual([1, 1]);
    expect(await audit(TRACE, "b")).toEqual([]);
    expect((await audit(TRACE_2, "b")).length).toBe(6);
  });

  it("runs the iterations of one workspace one at a time", async () => {
    let running = 0;
    let most = 0;
    const slow = async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      return {};
    };
    const { loop } = await setup(undefined, { handlers: { retrieve: slow, route: () => ({ decision: "fast" }), act: () => ({ causal_parent_ids: [] }), learn: () => ({}) } });
    await Promise.all([loop.runIteration({ workspace: "w" }), loop.runIteration({ workspace: "w" }), loop.runIteration({ workspace: "w" })]);
    expect(most).toBe(1);
    await Promise.all([loop.runIteration({ workspace: "x" }), loop.runIteration({ workspace: "y" })]);
    expect(most).toBe(2);
  });

  it("refuses a malformed trace id and an unknown entry phase", async () => {
    const { loop } = await setup();
    await expect(loop.runIteration({ traceId: "abc" })).rejects.toMatchObject({ code: "BAD_TRACE_ID" });
    await expect(loop.runIteration({ traceId: "0".repeat(32) })).rejects.toMatchObject({ code: "BAD_TRACE_ID" });
    await expect(loop.runIteration({ entry: "nope" })).rejects.toMatchObject({ code: "UNKNOWN_PHASE" });
  });
});

describe("loop status", () => {
  it("is idle, running during an iteration, paused, and stopped", async () => {
    let during = "";
    const { loop } = await setup();
    loop.handle("fetch", () => ((during = loop.status("default")), {}));
    expect(loop.status()).toBe("idle");
    await loop.runIteration();
    expect(during).toBe("running");
    expect(loop.status()).toBe("idle");
    loop.pause();
    expect(loop.status()).toBe("paused");
    await expect(loop.runIteration()).rejects.toMatchObject({ code: "LOOP_NOT_RUNNABLE" });
    loop.resume();
    expect((await loop.runIteration()).status).toBe("completed");
    loop.stop();
    expect(loop.status()).toBe("stopped");
    loop.resume();
    expect(loop.status()).toBe("stopped");
  });
});

describe("routes that loop back", () => {
  it("audit every visit to a phase, even a second identical one in the same iteration", async () => {
    const m = manifestWith((m) => {
      m.phases[1].outputs = { to: "phase:fetch|phase:apply" };
    });
    let visits = 0;
    const { loop, audit } = await setup(m, {
      handlers: { retrieve: () => ({ same: true }), route: () => (++visits === 1 ? { next: "fetch" } : { next: "apply" }), act: () => ({ causal_parent_ids: [] }), learn: () => ({}) },
    });
    const r = await loop.runIteration({ traceId: TRACE, input: { same: true } });
    expect(r.phases.map((p) => p.phase_id)).toEqual(["fetch", "decide", "fetch", "decide", "apply", "learn"]);
    expect(auditShape(await audit(TRACE)).filter((e) => e.startsWith("phase."))).toEqual([
      "phase.completed fetch",
      "phase.routed decide",
      "phase.completed fetch",
      "phase.routed decide",
      "phase.completed apply",
      "phase.completed learn",
    ]);
  });
});
