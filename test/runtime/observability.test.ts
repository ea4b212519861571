import { afterEach, describe, expect, it, vi } from "vitest";
import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { resetTracer } from "../../src/runtime/tracing.js";
import { auditShape, manifestWith, setup, TRACE } from "./harness.js";
import type { RuntimeEvent } from "../../src/runtime/index.js";

describe("OpenTelemetry", () => {
  afterEach(() => {
    trace.disable();
    resetTracer();
  });

  it("makes each iteration a span in the iteration's trace, with one child span per phase", async () => {
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    resetTracer();
    const { loop } = await setup();
    await loop.runIteration({ traceId: TRACE });
    const spans = exporter.getFinishedSpans();
    const iteration = spans.find((s) => s.name === "pulse.iteration")!;
    expect(iteration.spanContext().traceId).toBe(TRACE);
    expect(iteration.attributes).toMatchObject({ "pulse.loop_id": "test.loop", "pulse.workspace_id": "default", "pulse.iteration": 1 });
    const phases = spans.filter((s) => s.name.startsWith("pulse.phase "));
    expect(phases.map((s) => s.name)).toEqual(["pulse.phase fetch", "pulse.phase decide", "pulse.phase apply", "pulse.phase learn"]);
    for (const p of phases) {
      expect(p.spanContext().traceId).toBe(TRACE);
      expect(p.parentSpanContext?.spanId).toBe(iteration.spanContext().spanId);
    }
  });

  it("marks a failed phase's span as an error", async () => {
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    resetTracer();
    const { loop } = await setup();
    loop.handle("apply", () => ({}));
    await loop.runIteration();
    const apply = exporter.getFinishedSpans().find((s) => s.name === "pulse.phase apply")!;
    expect(apply.status.code).toBe(2);
    expect(apply.status.message).toMatch(/^INVARIANT_VIOLATION: outcome_grounding/);
  });

  it("gives every iteration a real W3C trace id without an SDK", async () => {
    const { loop } = await setup();
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) ids.add((await loop.runIteration()).trace_id);
    expect(ids.size).toBe(20);
    for (const id of ids) expect(id).toMatch(/^(?!0{32})[0-9a-f]{32}$/);
  });
});

describe("the event stream", () => {
  it("reports iterations and phases in order", async () => {
    const { loop } = await setup();
    const events: RuntimeEvent[] = [];
    loop.subscribe((e) => events.push(e));
    await loop.runIteration({ traceId: TRACE });
    expect(events.map((e) => ("phase_id" in e ? `${e.type} ${e.phase_id}` : e.type))).toEqual([
      "iteration.started",
      "phase.started fetch",
      "phase.completed fetch",
      "phase.started decide",
      "phase.completed decide",
      "phase.started apply",
      "phase.completed apply",
      "phase.started learn",
      "phase.completed learn",
      "iteration.finished",
    ]);
  });

  it("reaches runtime-wide subscribers, and survives a subscriber that throws", async () => {
    const { runtime, loop } = await setup();
    const seen: string[] = [];
    loop.subscribe(() => {
      throw new Error("bad listener");
    });
    const off = runtime.subscribe((e) => seen.push(e.type));
    expect((await loop.runIteration()).status).toBe("completed");
    expect(seen).toContain("iteration.finished");
    off();
    seen.length = 0;
    await loop.runIteration();
    expect(seen).toEqual([]);
  });
});

describe("telemetry (§4 telemetry)", () => {
  it("aggregates per phase and per loop: duration, status, sizes when asked, closure rate", async () => {
    const m = manifestWith((m) => (m.telemetry = { namespace: "t", phase_metrics: ["duration_ms", "input_size", "output_size", "status"], loop_metrics: ["closure_rate", "iteration_count"] }));
    const { loop, clock } = await setup(m);
    loop.handle("fetch", async ({ clock: c }) => (await c.sleep(25), { payload: "abcd" }));
    let n = 0;
    loop.handle("learn", () => {
      if (++n === 2) throw new Error("no");
      return {};
    });
    for (let i = 0; i < 3; i++) {
      const running = loop.runIteration();
      await clock.runAll();
      await running;
    }
    const t = loop.telemetry();
    expect(t).toMatchObject({ namespace: "t", iteration_count: 3, closed_count: 2, iteration_statuses: { completed: 2, failed: 1 } });
    expect(t.closure_rate).toBeCloseTo(2 / 3);
    expect(t.phases.fetch!.duration_ms).toMatchObject({ min: 25, max: 25, mean: 25, sum: 75 });
    expect(t.phases.fetch!.output_size).toMatchObject({ max: '{"payload":"abcd"}'.length });
    expect(t.phases.learn!.statuses).toEqual({ completed: 2, failed: 1 });
  });

  it("skips size measurement unless the manifest asks for it", async () => {
    const { loop } = await setup();
    await loop.runIteration();
    expect(loop.telemetry().phases.fetch!.input_size).toBeUndefined();
  });
});

describe("snapshots", () => {
  it("persist and restore a workspace: the next iteration continues at closure.to_phase", async () => {
    const m = manifestWith((m) => m.phases.unshift({ id: "preflight", kind: "custom", custom_kind: "preflight" }));
    const first = await setup(m);
    await first.loop.runIteration({ workspace: "w" });
    const snapshot = JSON.parse(JSON.stringify(first.loop.snapshot("w")));
    expect(snapshot).toMatchObject({ version: 1, loop_id: "test.loop", workspace_id: "w", iterations: 1, started: true, state: { value: { status: "active", iteration: "idle" } } });

    const second = await setup(m);
    second.loop.restore(snapshot);
    const r = await second.loop.runIteration({ workspace: "w" });
    expect(r.iteration).toBe(2);
    expect(second.calls[0]).toBe("fetch");
  });

  it("resumes an iteration interrupted mid-way from the phase it was in, with its trace id", async () => {
    const first = await setup();
    let snapshot: ReturnType<typeof first.loop.snapshot> | undefined;
    first.loop.handle("apply", () => {
      snapshot = first.loop.snapshot("w");
      throw new Error("process killed");
    });
    await first.loop.runIteration({ workspace: "w", traceId: TRACE, input: { job: 7 } });
    expect(snapshot!.current).toMatchObject({ trace_id: TRACE, phase_id: "apply" });

    const second = await setup();
    second.loop.restore(JSON.parse(JSON.stringify(snapshot)));
    expect(second.loop.currentPhase("w")).toBe("apply");
    const r = await second.loop.resumeInterrupted("w");
    expect(r).toMatchObject({ trace_id: TRACE, status: "completed", iteration: 1 });
    expect(second.calls).toEqual(["apply", "learn"]);
  });

  it("resumes into a durable audit log: the trail continues after the events stored before the crash", async () => {
    const first = await setup();
    let snapshot: ReturnType<typeof first.loop.snapshot> | undefined;
    first.loop.handle("apply", () => {
      snapshot = first.loop.snapshot("w");
      return new Promise(() => {}); // the process dies here: the phase never ends
    });
    void first.loop.runIteration({ workspace: "w", traceId: TRACE });
    await vi.waitFor(() => expect(snapshot).toBeDefined());

    // A new process, the same audit substrate (a service that outlived the crash).
    const second = await setup(undefined, { load: { substrates: first.substrates } });
    second.loop.restore(JSON.parse(JSON.stringify(snapshot)));
    const r = await second.loop.resumeInterrupted("w");
    expect(r).toMatchObject({ trace_id: TRACE, status: "completed" });
    const events = await first.audit(TRACE, "w");
    expect(auditShape(events)).toEqual(["iteration.started", "phase.completed fetch", "phase.routed decide", "iteration.resumed", "phase.completed apply", "phase.completed learn", "iteration.completed"]);
    expect(events.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it("refuses a snapshot of another loop or of an unknown state", async () => {
    const { loop } = await setup();
    expect(() => loop.restore({ ...loop.snapshot("w"), loop_id: "other.loop" })).toThrow(/not loop test\.loop/);
    expect(() => loop.restore({ ...loop.snapshot("w"), state: { value: { status: "active", iteration: "ghost" } } })).toThrow(/does not fit this loop/);
  });
});
