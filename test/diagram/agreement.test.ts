/**
 * The diagram and pulse-validate agree on references: every unresolved reference the validator
 * reports is a dangling edge at the same file and pointer, and every dangling edge is one the
 * validator reports. Both use one resolver; these tests keep it that way.
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { buildGraph } from "../../src/diagram/build.js";
import { readSource } from "../../src/source/load.js";
import { parseSourceText } from "../../src/source/parse-text.js";
import { validateSources } from "../../src/validator/validate.js";
import type { ManifestSource } from "../../src/source/load.js";
import { baseManifest } from "../helpers/manifests.js";

/** Every validator rule that means "this names a phase that does not exist". */
const REFERENCE_RULES = new Set([
  "pulse/closure-unknown-phase",
  "pulse/connection-unknown-phase",
  "pulse/endpoint-unknown-phase",
  "pulse/trigger-unknown-phase",
  "pulse/connection-unresolved",
  "pulse/signal-source-unresolved",
]);

function compare(sources: ManifestSource[]) {
  const reported = validateSources(sources)
    .flatMap((r) => r.diagnostics.filter((d) => REFERENCE_RULES.has(d.rule)).map((d) => `${r.file} ${d.pointer}`))
    .sort();
  const graph = buildGraph(sources.map((s) => ({ file: s.file, manifest: s.value })));
  const drawn = graph.edges
    .flatMap((e) => e.unresolved ?? [])
    .map((u) => `${u.file} ${u.pointer}`)
    .sort();
  // Each dangling end is a visible "phase not found" node.
  for (const e of graph.edges.filter((x) => x.dangling)) {
    expect([e.from, e.to].some((id) => graph.nodes.find((n) => n.id === id)?.kind === "missing")).toBe(true);
  }
  return { reported, drawn };
}

const read = (files: string[]) => Promise.all(files.map((f) => readSource(f)));
const json = (value: unknown, i: number) => parseSourceText(`m${i}.json`, JSON.stringify(value, null, 2), "json");

describe("validator and diagram agree on the spec's verbatim examples", () => {
  const spec = (name: string) => `test/fixtures/spec/${name}.jsonc`;

  it("§4 Graphonomous with §15.2 PRISM: the connection to observe_judgments dangles, and only it", async () => {
    const { reported, drawn } = compare(await read([spec("graphonomous"), spec("prism")]));
    expect(reported).toEqual(["test/fixtures/spec/graphonomous.jsonc /connections/0/to_phase"]);
    expect(drawn).toEqual(reported);
  });

  it("each example alone, and all three together", async () => {
    for (const files of [[spec("graphonomous")], [spec("prism")], [spec("agentromatic")], [spec("graphonomous"), spec("prism"), spec("agentromatic")]]) {
      const { reported, drawn } = compare(await read(files));
      expect(drawn, files.join(" ")).toEqual(reported);
    }
  });

  it("the §4 manifest with misspelled phases, and the shipped manifests (none)", async () => {
    const text = readFileSync(spec("graphonomous"), "utf8").replace('"to_phase":   "retrieve_ctx"', '"to_phase":   "retreive_ctx"').replaceAll("phase:route_topology", "phase:route_topolgy");
    const typo = compare([parseSourceText("typo.jsonc", text, "json")]);
    expect(typo.reported).toEqual(["typo.jsonc /closure/to_phase", "typo.jsonc /nesting/inner_loops/0/trigger", "typo.jsonc /phases/0/outputs/to", "typo.jsonc /phases/2/inputs/from"]);
    expect(typo.drawn).toEqual(typo.reported);
    const shipped = compare(await read(["manifests/agentromatic.deliberation.yaml", "manifests/graphonomous.continual_learning.yaml", "manifests/graphonomous.deliberate.yaml", "manifests/prism.benchmark.yaml"]));
    expect(shipped).toEqual({ reported: [], drawn: [] });
  });
});

describe("validator and diagram agree on every kind of reference", () => {
  it("closure ends, emit_phase, endpoints, triggers, connection targets and signal sources", () => {
    const a = baseManifest();
    a.loop_id = "a.one";
    a.closure = { from_phase: "lern", to_phase: "fech", via: "phase:gone|substrate:memory" };
    a.phases[1].inputs = { from: "phase:nowhere|external" };
    a.phases[2].outputs = { to: "phase:elsewhere" };
    a.nesting = { inner_loops: [{ loop_id: "x.y", trigger: "phase:decde when k > 0" }] };
    a.connections = [
      { id: "c1", emit_phase: "lrn", token: "OutcomeSignal", to_loop: "b.two", to_phase: "recieve" },
      { id: "c2", emit_phase: "learn", token: "OutcomeSignal", to_loop: "b.two" },
    ];
    const b = baseManifest();
    b.loop_id = "b.two";
    b.cadence = { type: "cross_loop_signal", params: { from_loop: "a.one", from_phase: "lean", token: "OutcomeSignal" } };
    const { reported, drawn } = compare([json(a, 0), json(b, 1)]);
    expect(reported).toEqual([
      "m0.json /closure/from_phase",
      "m0.json /closure/to_phase",
      "m0.json /closure/via",
      "m0.json /connections/0/emit_phase",
      "m0.json /connections/0/to_phase",
      "m0.json /nesting/inner_loops/0/trigger",
      "m0.json /phases/1/inputs/from",
      "m0.json /phases/2/outputs/to",
      "m1.json /cadence/params/from_phase",
    ]);
    expect(drawn).toEqual(reported);
  });

  it("for any phase names in any referencing position (property)", () => {
    const phase = fc.constantFrom("fetch", "decide", "apply", "learn", "fech", "gone", "end", "x");
    const endpoint = fc.array(phase, { minLength: 1, maxLength: 3 }).map((ps) => [...new Set(ps)].map((p) => `phase:${p}`).join("|"));
    fc.assert(
      fc.property(
        fc.record({ from: phase, to: phase, via: fc.option(endpoint, { nil: undefined }), input: endpoint, output: endpoint, trigger: phase, emit: phase, toPhase: fc.option(phase, { nil: undefined }), signal: phase, toLoaded: fc.boolean() }),
        (r) => {
          const a = baseManifest();
          a.loop_id = "a.one";
          a.closure = { from_phase: r.from, to_phase: r.to, ...(r.via ? { via: r.via } : {}) };
          a.phases[1].inputs = { from: r.input };
          a.phases[3].outputs = { to: r.output };
          a.nesting = { inner_loops: [{ loop_id: r.toLoaded ? "b.two" : "x.y", trigger: `phase:${r.trigger}` }] };
          a.connections = [{ id: "c", emit_phase: r.emit, token: "OutcomeSignal", to_loop: r.toLoaded ? "b.two" : "x.y", ...(r.toPhase ? { to_phase: r.toPhase } : {}) }];
          const b = baseManifest();
          b.loop_id = "b.two";
          b.cadence = { type: "cross_loop_signal", params: { from_loop: "a.one", from_phase: r.signal } };
          const { reported, drawn } = compare([json(a, 0), json(b, 1)]);
          expect(drawn).toEqual(reported);
        },
      ),
      { numRuns: 150 },
    );
  });
});
