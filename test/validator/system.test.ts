import { describe, expect, it } from "vitest";
import { parseSourceText } from "../../src/source/parse-text.js";
import { validateSources } from "../../src/validator/validate.js";
import { baseManifest } from "../helpers/manifests.js";

function loop(id: string, extra: (m: Record<string, any>) => void = () => {}) {
  const m = baseManifest();
  m.loop_id = id;
  extra(m);
  return m;
}

function validate(...manifests: Record<string, any>[]) {
  const sources = manifests.map((m, i) => parseSourceText(`m${i}.json`, JSON.stringify(m, null, 2), "json"));
  return validateSources(sources).map((r) => r.diagnostics.map((d) => `${d.severity} ${d.rule} ${d.pointer}`));
}

const connect = (toLoop: string, toPhase?: string) => (m: Record<string, any>) => {
  m.connections = [{ id: "c", emit_phase: "learn", token: "OutcomeSignal", to_loop: toLoop, ...(toPhase ? { to_phase: toPhase } : {}) }];
};

describe("checks across manifests", () => {
  it("resolves connections into loaded loops, and flags a missing phase", () => {
    expect(validate(loop("a.one", connect("b.two", "fetch")), loop("b.two"))).toEqual([[], []]);
    expect(validate(loop("a.one", connect("b.two", "fech")), loop("b.two"))).toEqual([["error pulse/connection-unresolved /connections/0/to_phase"], []]);
    expect(validate(loop("a.one", connect("b.two", "fetch")))).toEqual([["info pulse/connection-external /connections/0/to_loop"]]);
  });

  it("resolves cross_loop_signal sources", () => {
    const listen = (phase: string) => (m: Record<string, any>) => (m.cadence = { type: "cross_loop_signal", params: { from_loop: "b.two", from_phase: phase } });
    expect(validate(loop("a.one", listen("learn")), loop("b.two"))).toEqual([[], []]);
    expect(validate(loop("a.one", listen("lern")), loop("b.two"))[0]).toEqual(["error pulse/signal-source-unresolved /cadence/params/from_phase"]);
  });

  it("says when a signal source is outside the validated manifests, so from_phase went unchecked", () => {
    const listen = (m: Record<string, any>) => (m.cadence = { type: "cross_loop_signal", params: { from_loop: "b.two", from_phase: "lern" } });
    expect(validate(loop("a.one", listen), loop("c.three"))).toEqual([["info pulse/signal-source-external /cadence/params/from_loop"], []]);
    // The near miss: given the source loop, the phase is checked instead (and here is wrong).
    expect(validate(loop("a.one", listen), loop("b.two"))).toEqual([["error pulse/signal-source-unresolved /cadence/params/from_phase"], []]);
  });

  it("reports parent_loop / inner_loops disagreement both ways", () => {
    const parent = (m: Record<string, any>) => (m.nesting = { inner_loops: [{ loop_id: "b.inner", trigger: "phase:decide", wait: "until_done" }] });
    expect(validate(loop("a.outer", parent), loop("b.inner", (m) => (m.nesting = { parent_loop: "a.outer" })))).toEqual([[], []]);
    expect(validate(loop("a.outer", parent), loop("b.inner"))).toEqual([["warning pulse/nesting-disagreement /nesting/inner_loops/0/loop_id"], []]);
    expect(validate(loop("a.outer"), loop("b.inner", (m) => (m.nesting = { parent_loop: "a.outer" })))).toEqual([[], ["warning pulse/nesting-disagreement /nesting/parent_loop"]]);
  });

  it("reports nesting cycles across manifests", () => {
    const inner = (id: string) => (m: Record<string, any>) => (m.nesting = { inner_loops: [{ loop_id: id, trigger: "phase:decide", wait: "fire_forget" }] });
    const results = validate(loop("a.one", inner("b.two")), loop("b.two", inner("c.three")), loop("c.three", inner("a.one")));
    expect(results.flat().filter((d) => d.includes("nesting-cycle"))).toHaveLength(1);
    const chain = validate(loop("a.one", inner("b.two")), loop("b.two", inner("c.three")), loop("c.three"));
    expect(chain.flat().filter((d) => d.includes("nesting-cycle"))).toEqual([]);
  });

  it("reports duplicate loop ids with the first declaration as related location", () => {
    const sources = [loop("a.one"), loop("a.one")].map((m, i) => parseSourceText(`m${i}.json`, JSON.stringify(m, null, 2), "json"));
    const [first, second] = validateSources(sources);
    expect(first!.diagnostics).toEqual([]);
    expect(second!.diagnostics).toEqual([expect.objectContaining({ rule: "pulse/duplicate-loop-id", related: [{ file: "m0.json", line: 3, column: 14, message: "first declared here" }] })]);
    // The near miss: loops of one organisation share a prefix, not an id.
    expect(validate(loop("a.one"), loop("a.one_more"))).toEqual([[], []]);
  });
});
