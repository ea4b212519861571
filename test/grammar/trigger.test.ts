import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { holds, printExpression } from "../../src/grammar/expression/index.js";
import { parseTrigger } from "../../src/grammar/trigger.js";
import { anyText, stringFrom } from "./arbitraries.js";

describe("parseTrigger accepts", () => {
  it("the spec's §4 trigger, with a condition the runtime can evaluate", () => {
    const text = "phase:route_topology when kappa > 0";
    const result = parseTrigger(text);
    if (!result.ok) throw new Error(result.error.message);
    const { phase, phaseOffset, condition, conditionOffset } = result.value;
    expect(phase).toBe("route_topology");
    expect(text.slice(phaseOffset, phaseOffset + phase.length)).toBe("route_topology");
    expect(conditionOffset).toBe(26);
    expect(condition && printExpression(condition)).toBe("kappa > 0");
    expect(condition && holds(condition, { kappa: 0.4 })).toBe(true);
    expect(condition && holds(condition, { kappa: 0 })).toBe(false);
  });

  it("the spec's §15.2 trigger", () => {
    const result = parseTrigger("phase:interact when registered_system == 'graphonomous'");
    if (!result.ok) throw new Error(result.error.message);
    expect(result.value.phase).toBe("interact");
    expect(result.value.condition && holds(result.value.condition, { registered_system: "graphonomous" })).toBe(true);
  });

  it("a bare phase, surrounding whitespace, and a parenthesised condition", () => {
    expect(parseTrigger("phase:bid")).toEqual({ ok: true, value: { phase: "bid", phaseOffset: 6 } });
    expect(parseTrigger("  phase:bid  ")).toEqual({ ok: true, value: { phase: "bid", phaseOffset: 8 } });
    const grouped = parseTrigger("phase:bid when(a or b)");
    expect(grouped.ok && grouped.value.conditionOffset).toBe(14);
  });

  it("condition node offsets are relative to conditionOffset", () => {
    const text = "phase:x   when   a.b == 1";
    const result = parseTrigger(text);
    if (!result.ok || !result.value.condition || result.value.conditionOffset === undefined) throw new Error("rejected");
    const { condition, conditionOffset } = result.value;
    expect(condition.type).toBe("compare");
    if (condition.type !== "compare") return;
    const left = condition.left;
    expect(text.slice(conditionOffset + left.offset, conditionOffset + left.offset + left.length)).toBe("a.b");
  });
});

describe("parseTrigger rejects", () => {
  it.each([
    ["", "empty trigger", 0, 0],
    ["route_topology when kappa > 0", `a trigger starts with "phase:<id>"`, 0, 14],
    ["phase:", `expected a phase id after "phase:"`, 0, 6],
    ["phase:Route when x", `invalid phase id "Route"`, 6, 5],
    ["phase:a|phase:b", `invalid phase id "a|phase:b"`, 6, 9],
    ["phase:x if y", `expected "when" after the phase id, found "if"`, 8, 2],
    ["phase:x whenever y", `expected "when" after the phase id, found "whenever"`, 8, 8],
    ["phase:x when", `expected a condition after "when"`, 8, 4],
    ["phase:x when   ", `expected a condition after "when"`, 8, 4],
    ["phase:x when kappa >", `expected a value after ">"`, 20, 0],
    ["phase:x when kappa = 0", `use "==" to compare`, 19, 1],
    ["phase:x when 'open", "unterminated string", 13, 5],
  ])("%j", (text, message, offset, length) => {
    const result = parseTrigger(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.message).toContain(message);
    expect(result.error.offset).toBe(offset);
    expect(result.error.length).toBe(length);
  });

  it("never throws and keeps errors inside the text", () => {
    const alphabet = ["phase:", "when", " ", "a", "x_1", "==", ">", "'", "(", ")", "and", "not", "1"];
    fc.assert(
      fc.property(fc.oneof(anyText, stringFrom(alphabet, 16)), (text) => {
        const result = parseTrigger(text);
        if (!result.ok) expect(result.error.offset + result.error.length).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: 2000 },
    );
  });
});
