/**
 * `pulse agent report`'s summary: the same whatever order the events come in, whatever is read
 * twice, however a report is split across files (fast-check); and the backpressure rule of the
 * writer: under congestion only plan_updated and run_summary are dropped.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ReportWriter, readReport, ReportError } from "../../src/coding/agent/report.js";
import { mergeReports, summarize } from "../../src/coding/agent/summary.js";
import { ENVELOPE_TYPES, NEVER_DROP, type Envelope } from "../../src/coding/agent/types.js";

const uuid = fc.uuid();
const ts = fc.integer({ min: Date.parse("2026-01-01T00:00:00Z"), max: Date.parse("2026-01-01T00:10:00Z") }).map((n) => new Date(n).toISOString());
const actionIds = ["a1111111-1111-4111-8111-111111111111", "a2222222-2222-4222-8222-222222222222", "a3333333-3333-4333-8333-333333333333"];
const payload: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  run_started: fc.record({ runId: fc.constantFrom("r1", "r2"), mode: fc.constantFrom("auto", "interactive") }),
  user_request: fc.record({ text: fc.string() }),
  plan_built: fc.record({ plan: fc.record({ steps: fc.array(fc.record({ status: fc.constantFrom("pending", "done", "blocked") }), { maxLength: 4 }) }) }),
  plan_updated: fc.record({ plan: fc.record({ steps: fc.array(fc.record({ status: fc.constantFrom("pending", "done", "blocked") }), { maxLength: 4 }) }) }),
  decision: fc.record({ decision: fc.record({ type: fc.constantFrom("execute", "ask", "wait", "terminate") }), thinkSupported: fc.boolean() }),
  action_started: fc.record({ actionRunId: fc.constantFrom(...actionIds), name: fc.constantFrom("greet", "add") }),
  action_result: fc.record({ actionRunId: fc.constantFrom(...actionIds), name: fc.constantFrom("greet", "add"), status: fc.constantFrom("ok", "error"), durationMs: fc.nat(5000) }),
  feedback_received: fc.record({ feedback: fc.record({ actionRunId: fc.constantFrom(...actionIds), score: fc.integer({ min: 0, max: 5 }), signal: fc.constantFrom("success", "partial", "fail"), submittedBy: fc.constantFrom("user", "system") }) }),
  progress_evaluated: fc.record({ status: fc.constantFrom("continue", "terminate", "blocked"), reason: fc.constantFrom("goal_achieved", "in_progress") }),
  task_interrupted: fc.record({ reason: fc.constant("timeout") }),
  run_summary: fc.record({}),
  run_finished: fc.record({ status: fc.constantFrom("succeeded", "failed"), reason: fc.string(), dropped: fc.record({ plan_updated: fc.nat(3) }) }),
};
const event: fc.Arbitrary<Envelope> = fc.constantFrom(...ENVELOPE_TYPES).chain((type) => fc.record({ type: fc.constant(type), id: uuid, ts, payload: payload[type]! }));

describe("the summary of a report", () => {
  it("is the same in any order, with any events repeated, and however the report is split (merge)", () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 40 }), fc.infiniteStream(fc.nat()), fc.nat(40), (events, randoms, cut) => {
        const expected = summarize(events);
        const shuffled = [...events];
        for (let i = shuffled.length - 1; i > 0; i--) {
          const j = (randoms.next().value as number) % (i + 1);
          [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
        }
        expect(summarize(shuffled)).toEqual(expected);
        expect(summarize([...shuffled, ...events.slice(0, cut)])).toEqual(expected);
        expect(mergeReports(shuffled.slice(cut), shuffled.slice(0, cut))).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("counts what a run did", () => {
    const e = (type: Envelope["type"], t: number, p: Record<string, unknown>): Envelope => ({ type, id: `00000000-0000-4000-8000-00000000000${t}`, ts: new Date(Date.UTC(2026, 0, 1, 0, 0, t)).toISOString(), payload: p });
    const s = summarize([
      e("run_finished", 9, { status: "succeeded", reason: "goal_achieved" }),
      e("run_started", 1, { runId: "r", mode: "auto" }),
      e("action_result", 3, { actionRunId: actionIds[0], name: "greet", status: "ok", ended: "exited", durationMs: 12 }),
      e("feedback_received", 4, { feedback: { actionRunId: actionIds[0], score: 4, signal: "success", submittedBy: "system" } }),
      e("decision", 2, { decision: { type: "execute" }, thinkSupported: false }),
    ]);
    expect(s).toMatchObject({ runId: "r", mode: "auto", status: "succeeded", durationMs: 8000, actionsOk: 1, meanFeedbackScore: 4, thinkSupported: false, decisions: { execute: 1 }, actions: [{ name: "greet", status: "ok", feedback: { score: 4 } }] });
  });
});

describe("the report writer", () => {
  it("under congestion drops only plan_updated and run_summary, and counts what it dropped", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-agent-report-"));
    // A one-byte high-water mark: the stream is congested after every write until it drains.
    const w = new ReportWriter(dir, "run", { highWaterMark: 1 });
    const written: Envelope[] = [];
    for (const type of [...ENVELOPE_TYPES, ...ENVELOPE_TYPES]) {
      const e = { type, id: `${type}-${written.length}`, ts: new Date().toISOString(), payload: {} };
      if (w.write(e)) written.push(e);
    }
    await w.close();
    const read = readReport(join(dir, "run.jsonl"));
    expect(read.map((e) => e.type)).toEqual(written.map((e) => e.type));
    for (const type of NEVER_DROP) expect(read.filter((e) => e.type === type)).toHaveLength(2);
    expect(w.dropped.plan_updated).toBeGreaterThan(0);
    expect(Object.keys(w.dropped).every((t) => t === "plan_updated" || t === "run_summary")).toBe(true);
  });

  it("reads back a report whose last line a crash tore, and refuses a damaged one naming the line", () => {
    const dir = mkdtempSync(join(tmpdir(), "pulse-agent-report-"));
    const good = JSON.stringify({ type: "run_started", id: "x", ts: "2026-01-01T00:00:00.000Z", payload: {} });
    writeFileSync(join(dir, "torn.jsonl"), `${good}\n{"type": "deci`);
    expect(readReport(join(dir, "torn.jsonl"))).toHaveLength(1);
    writeFileSync(join(dir, "bad.jsonl"), `${good}\nnot json\n${good}\n`);
    expect(() => readReport(join(dir, "bad.jsonl"))).toThrow(ReportError);
    expect(() => readReport(join(dir, "bad.jsonl"))).toThrow(/bad\.jsonl:2: not JSON/);
    writeFileSync(join(dir, "odd.jsonl"), `${JSON.stringify({ type: "gossip", id: "y", ts: "t", payload: {} })}\n`);
    expect(() => readReport(join(dir, "odd.jsonl"))).toThrow(/odd\.jsonl:1: not an envelope/);
    expect(readFileSync(join(dir, "torn.jsonl"), "utf8")).toContain("deci");
  });
});
