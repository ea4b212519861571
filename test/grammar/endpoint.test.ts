import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseEndpoints } from "../../src/grammar/endpoint.js";
import { anyText, stringFrom } from "./arbitraries.js";

function refs(text: string): readonly unknown[] {
  const result = parseEndpoints(text);
  if (!result.ok) throw new Error(`${text}: ${result.error.message}`);
  return result.value;
}

describe("parseEndpoints accepts", () => {
  it("every form the spec's manifests use", () => {
    expect(refs("external")).toEqual([{ kind: "external", offset: 0, length: 8 }]);
    expect(refs("phase:route_topology")).toEqual([{ kind: "phase", phase: "route_topology", offset: 0, length: 20 }]);
    expect(refs("substrate:memory")).toEqual([{ kind: "substrate", slot: "memory", offset: 0, length: 16 }]);
    expect(refs("signal:ReputationUpdate")).toEqual([{ kind: "signal", token: "ReputationUpdate", offset: 0, length: 23 }]);
    expect(refs("external|signal:OutcomeSignal")).toEqual([
      { kind: "external", offset: 0, length: 8 },
      { kind: "signal", token: "OutcomeSignal", offset: 9, length: 20 },
    ]);
  });

  it("spaces around | and gives each alternative its own span", () => {
    expect(refs(" external | phase:a1_b ")).toEqual([
      { kind: "external", offset: 1, length: 8 },
      { kind: "phase", phase: "a1_b", offset: 12, length: 10 },
    ]);
  });

  it("every substrate slot", () => {
    for (const slot of ["memory", "policy", "audit", "auth", "transport", "time"]) {
      expect(refs(`substrate:${slot}`)).toEqual([{ kind: "substrate", slot, offset: 0, length: 10 + slot.length }]);
    }
  });

  it("a token the validator will judge (non-canonical tokens are not a syntax error)", () => {
    expect(refs("signal:SurpriseSignal")).toHaveLength(1);
    expect(refs("signal:my_token2")).toHaveLength(1);
  });
});

describe("parseEndpoints rejects", () => {
  it.each([
    ["", "empty endpoint", 0, 0],
    ["  ", "empty endpoint", 0, 2],
    ["external|", `empty alternative next to "|"`, 8, 1],
    ["|external", `empty alternative next to "|"`, 0, 1],
    ["external||phase:a", `empty alternative next to "|"`, 9, 1],
    ["external| |phase:a", `empty alternative next to "|"`, 10, 1],
    ["phse:a", `unknown endpoint prefix "phse:", did you mean "phase:"?`, 0, 5],
    ["sig:OutcomeSignal", `did you mean "signal:"?`, 0, 4],
    ["substrat:memory", `did you mean "substrate:"?`, 0, 9],
    ["foo:bar", `unknown endpoint prefix "foo:" (use external, phase:<id>`, 0, 4],
    ["extrnal", `unknown endpoint "extrnal", did you mean "external"?`, 0, 7],
    ["External", `did you mean "external"?`, 0, 8],
    ["memory", `did you mean "substrate:memory"?`, 0, 6],
    ["OutcomeSignal", `did you mean "signal:OutcomeSignal"?`, 0, 13],
    ["retrieve_ctx", `did you mean "phase:retrieve_ctx"?`, 0, 12],
    ["external:x", `"external" takes no argument`, 8, 2],
    ["phase:", `expected a phase id after "phase:"`, 0, 6],
    ["phase:Route", `invalid phase id "Route"`, 6, 5],
    ["phase:a-b", `invalid phase id "a-b"`, 6, 3],
    ["substrate:", "expected a slot", 0, 10],
    ["substrate:memroy", `unknown substrate slot "memroy", did you mean "memory"?`, 10, 6],
    ["substrate:cache", `unknown substrate slot "cache" (use memory, policy`, 10, 5],
    ["signal:", "expected a token", 0, 7],
    ["signal:1Token", `invalid signal token "1Token"`, 7, 6],
    ["external|phase:missing-one", `invalid phase id "missing-one"`, 15, 11],
    ["external|external", `"external" is listed twice`, 9, 8],
  ])("%j", (text, message, offset, length) => {
    const result = parseEndpoints(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.message).toContain(message);
    expect(result.error.offset).toBe(offset);
    expect(result.error.length).toBe(length);
  });

  it("never throws; every accepted alternative's span holds exactly its text", () => {
    const alphabet = ["external", "phase:", "substrate:", "signal:", "loop:", "memory", "a", "B", "_", "1", ".", "|", " ", ":", "-"];
    fc.assert(
      fc.property(fc.oneof(anyText, stringFrom(alphabet, 12)), (text) => {
        const result = parseEndpoints(text);
        if (!result.ok) {
          expect(result.error.offset + result.error.length).toBeLessThanOrEqual(text.length);
          return;
        }
        for (const ref of result.value) {
          const written = text.slice(ref.offset, ref.offset + ref.length);
          const expected =
            ref.kind === "external" ? "external" : ref.kind === "phase" ? `phase:${ref.phase}` : ref.kind === "substrate" ? `substrate:${ref.slot}` : ref.kind === "loop" ? `loop:${ref.loop}` : `signal:${ref.token}`;
          expect(written).toBe(expected);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("bounds the input length", () => {
    const result = parseEndpoints(Array.from({ length: 600 }, (_, i) => `phase:p${i}`).join("|"));
    expect(result.ok || result.error.message).toContain("too long");
  });
});
