/**
 * The live trace of `pulse run` for an iteration whose end was in doubt: the failed line first,
 * then one line once the store answered, saying which it was; and the summary counts it once,
 * as what it turned out to be (the loop's telemetry, corrected by the runtime).
 */
import { expect, it } from "vitest";
import { TraceWriter } from "../../src/cli/run-trace.js";
import type { HostEvent } from "../../src/host/host.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const AT = Date.UTC(2026, 10, 26, 12, 0, 1, 250);

function writer(json: boolean) {
  let out = "";
  const io = { stdout: (s: string) => void (out += s), stderr: () => undefined, env: {}, cwd: "/", isTTY: false } as never;
  return { trace: new TraceWriter(io, { json, color: false }), out: () => out };
}

it("says once, with its time and trace, that an iteration reported failed committed after all, or was resumed", () => {
  const { trace, out } = writer(false);
  const resolved = (outcome: "committed" | "resumed", message: string): HostEvent => ({ type: "iteration.resolved", loop_id: "examples.hello", workspace_id: "default", trace_id: TRACE, iteration: 4, outcome, message, at: AT });
  trace.event(resolved("committed", "committed after all: its end reached the store before the connection broke (completed)"));
  trace.event(resolved("resumed", "not committed: resumed from the journal"));
  trace.note("fleet: examples.hello runs here (h1, lease epoch 3)", AT);
  expect(out().split("\n")).toEqual([
    `12:00:01.250  examples.hello            #4 committed after all: its end reached the store before the connection broke (completed)  trace 4bf92f35`,
    `12:00:01.250  examples.hello            #4 not committed: resumed from the journal  trace 4bf92f35`,
    `12:00:01.250  note: fleet: examples.hello runs here (h1, lease epoch 3)`,
    "",
  ]);
});

it("--json: the event as it is, and notes with their time", () => {
  const { trace, out } = writer(true);
  trace.note("fleet: cannot renew leases (connect ECONNREFUSED 127.0.0.1:5432); loops held here stop when their leases run out", AT);
  expect(JSON.parse(out())).toEqual({ type: "note", message: "fleet: cannot renew leases (connect ECONNREFUSED 127.0.0.1:5432); loops held here stop when their leases run out", at: AT });
});
