/** inputs.from: phase:X where X runs later: the previous iteration's data, or never any. */
import { describe, expect, it } from "vitest";
import { validateValue } from "../../src/validator/validate.js";
import { baseManifest } from "../helpers/manifests.js";

function findings(fn: (m: Record<string, any>) => void) {
  const m = baseManifest();
  fn(m);
  return validateValue(m, "m.json").diagnostics.map((d) => ({ rule: d.rule, severity: d.severity, pointer: d.pointer, message: d.message, column: d.column }));
}

describe("a phase reading a later phase's output", () => {
  it("gets the previous iteration's output when it runs again (info)", () => {
    const [f, ...rest] = findings((m) => (m.phases[0].inputs = { from: "phase:learn" }));
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ rule: "pulse/input-from-previous-iteration", severity: "info", pointer: "/phases/0/inputs/from" });
    expect(f!.message).toBe(`"fetch" reads the output of "learn", which runs after it: it gets the previous iteration's output (nothing in the first iteration)`);
  });

  it("reading its own output is the previous iteration's too", () => {
    expect(findings((m) => (m.phases[1].inputs = { from: "phase:decide" }))[0]!.message).toContain(`"decide" reads its own output`);
  });

  it("never gets it when the reader runs only in the first iteration (warning)", () => {
    const [f] = findings((m) => {
      m.phases.unshift({ id: "preflight", kind: "custom", custom_kind: "preflight", inputs: { from: "phase:learn" } });
    });
    expect(f).toMatchObject({ rule: "pulse/input-never-available", severity: "warning" });
    expect(f!.message).toContain(`"preflight" runs only in the first iteration`);
  });

  it("never gets it when the source comes after closure.from_phase (warning)", () => {
    const [f] = findings((m) => {
      m.phases.push({ id: "report", kind: "custom", custom_kind: "report" });
      m.phases[1].inputs = { from: "phase:report" };
    });
    expect(f).toMatchObject({ rule: "pulse/input-never-available", severity: "warning" });
    expect(f!.message).toContain(`"report" never runs`);
  });

  it("the near miss: reading an earlier phase, or a later one through another alternative, says nothing extra", () => {
    expect(findings((m) => (m.phases[2].inputs = { from: "phase:decide" }))).toEqual([]);
    expect(findings((m) => (m.phases[3].inputs = { from: "phase:fetch|external" }))).toEqual([]);
  });

  it("underlines the phase reference inside an alternative list", () => {
    const [f] = findings((m) => (m.phases[0].inputs = { from: "external|phase:learn" }));
    expect(f!.rule).toBe("pulse/input-from-previous-iteration");
  });
});

describe("cadence messages", () => {
  it("say an idle cadence, an event cadence, a periodic cadence", () => {
    expect(findings((m) => (m.cadence = { type: "idle" }))[0]!.message).toBe("an idle cadence needs params.min_idle_ms (§8)");
    expect(findings((m) => (m.cadence = { type: "event" }))[0]!.message).toBe("an event cadence needs params.trigger (§8)");
    expect(findings((m) => (m.cadence = { type: "periodic" }))[0]!.message).toBe("a periodic cadence needs params.interval (§8)");
  });
});
