/** The graph model: what each part of a manifest becomes, for one loop and for a system. */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { buildGraph } from "../../src/diagram/build.js";
import type { DiagramEdge, DiagramGraph, DiagramNode } from "../../src/diagram/model.js";
import { baseManifest } from "../helpers/manifests.js";
import { graphOf } from "./helpers.js";

const one = (m: Record<string, any>, options = {}) => buildGraph([{ file: "m.json", manifest: m }], options);
const many = (ms: Record<string, any>[], options = {}) => buildGraph(ms.map((manifest, i) => ({ file: `m${i}.json`, manifest })), options);
const node = (g: DiagramGraph, id: string) => g.nodes.find((n) => n.id === id) as DiagramNode;
const edges = (g: DiagramGraph, kind: DiagramEdge["kind"]) => g.edges.filter((e) => e.kind === kind);
const pairs = (es: DiagramEdge[]) => es.map((e) => `${e.from} -> ${e.to}`);

function loop(id: string, change: (m: Record<string, any>) => void = () => {}) {
  const m = baseManifest();
  m.loop_id = id;
  change(m);
  return m;
}

/** Every edge end is a node or a drawn loop, and ids are unique. */
function wellFormed(g: DiagramGraph): void {
  const ids = new Set(g.nodes.map((n) => n.id));
  expect(ids.size).toBe(g.nodes.length);
  const loops = new Set(g.loops.filter((l) => !l.collapsed).map((l) => l.id));
  for (const e of g.edges) {
    expect(ids.has(e.from) || loops.has(e.from), `${e.kind} from ${e.from}`).toBe(true);
    expect(ids.has(e.to) || loops.has(e.to), `${e.kind} to ${e.to}`).toBe(true);
    expect(e.dangling).toBe((e.unresolved?.length ?? 0) > 0);
    const missing = [e.from, e.to].some((id) => g.nodes.find((n) => n.id === id)?.kind === "missing");
    expect(missing, `${e.kind} ${e.from} -> ${e.to}`).toBe(e.dangling);
  }
  for (const n of g.nodes) if (n.loop !== null) expect(loops.has(n.loop), `${n.id} sits in ${n.loop}`).toBe(true);
}

describe("one loop", () => {
  it("draws the phases in array order, labelled by kind and custom kinds by name", () => {
    const m = baseManifest();
    m.phases.splice(1, 0, { id: "vote", kind: "custom", custom_kind: "quorum vote" });
    const g = one(m);
    wellFormed(g);
    const phases = g.nodes.filter((n) => n.kind === "phase");
    expect(phases.map((p) => p.label)).toEqual(["fetch\nretrieve", "vote\ncustom: quorum vote", "decide\nroute", "apply\nact", "learn\nlearn"]);
    expect(pairs(edges(g, "sequence"))).toEqual([
      "phase:test.loop/fetch -> phase:test.loop/vote",
      "phase:test.loop/vote -> phase:test.loop/decide",
      "phase:test.loop/decide -> phase:test.loop/apply",
      "phase:test.loop/apply -> phase:test.loop/learn",
    ]);
  });

  it("draws the closure with via and guarantee, and the cadence with its fallback into phases[0]", () => {
    const m = baseManifest();
    m.cadence = { type: "periodic", params: { interval: "90s" }, fallback: { type: "manual", params: { interface: "cli", rate_limit: "10/min" } } };
    m.closure.to_phase = "decide";
    const g = one(m);
    expect(edges(g, "closure")).toEqual([
      expect.objectContaining({ from: "phase:test.loop/learn", to: "phase:test.loop/decide", label: "closure via substrate:memory (next_tick)", dangling: false }),
    ]);
    expect(node(g, "cadence:test.loop").label).toBe("periodic: every 1m30s\nfallback: manual: cli, at most 10/min");
    // The first iteration starts at phases[0], whatever the closure returns to.
    expect(pairs(edges(g, "cadence"))).toEqual(["cadence:test.loop -> phase:test.loop/fetch"]);
    expect(g.loops[0]).toMatchObject({ entry: "phase:test.loop/fetch", cadence: [{ type: "periodic" }, { type: "manual" }] });
  });

  it("labels every cadence type of §8", () => {
    const label = (cadence: object) => node(one({ ...baseManifest(), cadence }), "cadence:test.loop").label;
    expect(label({ type: "event", params: { trigger: "agent_query", filter: "priority >= 2" } })).toBe("event: agent_query if priority >= 2");
    expect(label({ type: "periodic", params: { interval: "weekly" } })).toBe("periodic: weekly");
    expect(label({ type: "streaming", params: { stream: "ticks://gps" } })).toBe("streaming: ticks://gps");
    expect(label({ type: "idle", params: { min_idle_ms: 60000 } })).toBe("idle: after 1m");
    expect(label({ type: "cross_loop_signal", params: { from_loop: "a.b", from_phase: "learn", token: "OutcomeSignal" } })).toBe("signal: OutcomeSignal from a.b/learn");
    expect(label({ type: "manual" })).toBe("manual");
  });

  it("draws phase:<id> routes that skip the sequence, and not those that repeat it", () => {
    const m = baseManifest();
    m.phases[1].outputs = { to: "phase:learn|substrate:memory" };
    const g = one(m);
    // fetch → decide is declared (outputs.to) but is the sequence already.
    expect(pairs(edges(g, "route"))).toEqual(["phase:test.loop/decide -> phase:test.loop/learn"]);
  });

  it("draws substrates: none, referenced (by endpoints and closure.via), or all bound slots", () => {
    const m = baseManifest();
    m.phases[0].inputs = { from: "substrate:memory" };
    expect(one(m, { substrates: "none" }).nodes.filter((n) => n.kind === "substrate")).toEqual([]);
    const referenced = one(m);
    expect(referenced.nodes.filter((n) => n.kind === "substrate").map((n) => n.label)).toEqual(["memory://m\nmemory"]);
    // A read points from the store to the phase, a write from the phase to the store.
    expect(pairs(edges(referenced, "substrate")).sort()).toEqual(["phase:test.loop/apply -> substrate:memory://m", "phase:test.loop/learn -> substrate:memory://m", "substrate:memory://m -> phase:test.loop/fetch"]);
    const all = one(m, { substrates: "all" });
    wellFormed(all);
    expect(all.nodes.filter((n) => n.kind === "substrate").map((n) => n.id)).toEqual(["substrate:memory://m", "substrate:memory://p", "substrate:memory://a", "substrate:memory://u"]);
    expect(edges(all, "substrate").filter((e) => e.from === "loop:test.loop").map((e) => e.label)).toEqual(["policy", "audit", "auth"]);
  });

  it("draws an inner loop that is not loaded as a placeholder with its trigger and wait mode", () => {
    const m = baseManifest();
    m.nesting = { inner_loops: [{ loop_id: "x.inner", trigger: "phase:decide when kappa > 0", wait: "bounded", timeout_ms: 5000 }] };
    const g = one(m);
    expect(node(g, "inner:test.loop/x.inner")).toMatchObject({
      kind: "inner_loop",
      loop: "loop:test.loop",
      label: "x.inner\ninner loop, not loaded\ntrigger: phase:decide when kappa > 0\nwait: bounded 5s",
      collapsed: false,
    });
    expect(pairs(edges(g, "nesting"))).toEqual(["phase:test.loop/decide -> inner:test.loop/x.inner"]);
  });

  it("shows manifest text in one line: newlines and control characters collapse, long text is cut", () => {
    const m = baseManifest();
    m.phases[0] = { ...m.phases[0], kind: "custom", custom_kind: "two\nlines\t\u0000here", description: "x".repeat(1000) };
    const p = node(one(m), "phase:test.loop/fetch");
    expect(p.label).toBe("fetch\ncustom: two lines here");
    expect(p.kind === "phase" && p.description!.length).toBe(400);
  });
});

describe("a system of loops", () => {
  it("nests loaded inner loops in their parent and labels the nesting with condition and wait", async () => {
    const g = await graphOf(["manifests/"]);
    wellFormed(g);
    const byId = Object.fromEntries(g.loops.map((l) => [l.loopId, l]));
    expect(byId["prism.benchmark"]).toMatchObject({ parent: null, depth: 0 });
    expect(byId["graphonomous.continual_learning"]).toMatchObject({ parent: "loop:prism.benchmark", depth: 1 });
    expect(byId["graphonomous.deliberate"]).toMatchObject({ parent: "loop:graphonomous.continual_learning", depth: 2 });
    expect(edges(g, "nesting").map((e) => `${e.from} -> ${e.to}: ${e.label}`)).toEqual([
      "phase:prism.benchmark/interact -> loop:graphonomous.continual_learning: when registered_system == 'graphonomous' \u00b7 until_stable",
      "phase:graphonomous.continual_learning/route_topology -> loop:graphonomous.deliberate: when kappa > 0 \u00b7 until_stable",
    ]);
  });

  it("draws one substrate node per URI, shared by every loop that binds it", async () => {
    const g = await graphOf(["manifests/"]);
    const shared = node(g, "substrate:graphonomous://workspace/{ws_id}");
    expect(shared.kind === "substrate" && shared.bindings).toEqual([
      { loop: "loop:agentromatic.deliberation", slot: "memory" },
      { loop: "loop:graphonomous.continual_learning", slot: "memory" },
      { loop: "loop:graphonomous.deliberate", slot: "memory" },
    ]);
    expect(g.nodes.filter((n) => n.kind === "substrate" && n.uri === "graphonomous://workspace/{ws_id}")).toHaveLength(1);
  });

  it("labels connections token · delivery, to phases, external loops and the target's trigger", async () => {
    const g = await graphOf(["manifests/"]);
    expect(edges(g, "connection").map((e) => `${e.from} -> ${e.to}: ${e.label}`)).toEqual([
      "phase:agentromatic.deliberation/learn_rep -> external:fleetprompt.trust/trust_recompute: ReputationUpdate \u00b7 at_least_once",
      "phase:coding.guidance_watch/track_ack -> phase:coding.pulse_session/build_context: SurpriseSignal \u00b7 at_least_once",
      "phase:examples.hello/learn -> phase:examples.listener/receive: OutcomeSignal \u00b7 at_least_once",
      "phase:graphonomous.continual_learning/learn_outcome -> phase:prism.benchmark/observe: OutcomeSignal \u00b7 at_least_once",
      "phase:graphonomous.deliberate/verdict -> phase:graphonomous.continual_learning/act_store: DeliberationResult \u00b7 exactly_once",
      "phase:graphonomous.deliberate/settle -> phase:graphonomous.continual_learning/route_topology: ConsolidationEvent \u00b7 exactly_once",
    ]);
    expect(node(g, "external:fleetprompt.trust/trust_recompute").label).toBe("fleetprompt.trust\ntrust_recompute\nnot loaded");
    const withoutPhase = many([loop("a.one", (m) => (m.connections = [{ id: "c", emit_phase: "learn", token: "OutcomeSignal", to_loop: "b.two" }])), loop("b.two")]);
    expect(edges(withoutPhase, "connection")).toEqual([
      expect.objectContaining({ from: "phase:a.one/learn", to: "cadence:b.two", label: "OutcomeSignal \u00b7 at_least_once", connection: expect.objectContaining({ id: "c", delivery: "at_least_once" }) }),
    ]);
  });

  it("draws a cross_loop_signal cadence as an edge from the source phase into the trigger", async () => {
    const g = await graphOf(["manifests/examples/"]);
    expect(edges(g, "cadence").filter((e) => e.label !== null)).toEqual([expect.objectContaining({ from: "phase:examples.hello/learn", to: "cadence:examples.listener", label: "OutcomeSignal" })]);
  });

  it("points a connection to an inner loop that is not loaded at its placeholder", () => {
    const g = one(loop("a.one", (m) => {
      m.nesting = { inner_loops: [{ loop_id: "b.two", trigger: "phase:decide", wait: "until_done" }] };
      m.connections = [{ id: "c", emit_phase: "learn", token: "OutcomeSignal", to_loop: "b.two", to_phase: "fetch" }];
    }));
    expect(pairs(edges(g, "connection"))).toEqual(["phase:a.one/learn -> inner:a.one/b.two"]);
    expect(g.nodes.some((n) => n.kind === "external_loop")).toBe(false);
  });

  it("--depth collapses deeper loops into a placeholder and reroutes their connections", async () => {
    const d1 = await graphOf(["manifests/"], { depth: 1 });
    wellFormed(d1);
    expect(d1.loops.find((l) => l.loopId === "graphonomous.deliberate")).toMatchObject({ collapsed: true, entry: null });
    expect(node(d1, "inner:graphonomous.continual_learning/graphonomous.deliberate")).toMatchObject({ collapsed: true, loop: "loop:graphonomous.continual_learning" });
    expect(d1.nodes.some((n) => n.id.startsWith("phase:graphonomous.deliberate/"))).toBe(false);
    expect(pairs(edges(d1, "connection")).filter((p) => p.startsWith("inner:"))).toEqual([
      "inner:graphonomous.continual_learning/graphonomous.deliberate -> phase:graphonomous.continual_learning/act_store",
      "inner:graphonomous.continual_learning/graphonomous.deliberate -> phase:graphonomous.continual_learning/route_topology",
    ]);

    const d0 = await graphOf(["manifests/"], { depth: 0 });
    wellFormed(d0);
    const placeholder = "inner:prism.benchmark/graphonomous.continual_learning";
    expect(node(d0, placeholder).label).toBe("graphonomous.continual_learning\ninner loop, collapsed: 5 phases\ntrigger: phase:interact when registered_system == 'graphonomous'\nwait: until_stable");
    // Everything inside the collapsed subtree is one box: its inner connections disappear.
    expect(pairs(edges(d0, "connection")).filter((p) => p.includes(placeholder))).toEqual([`${placeholder} -> phase:prism.benchmark/observe`]);
    expect(d0.options).toEqual({ substrates: "referenced", depth: 0 });
  });

  it("never nests a loop inside itself, whatever the manifests claim", () => {
    const inner = (id: string) => (m: Record<string, any>) => (m.nesting = { inner_loops: [{ loop_id: id, trigger: "phase:decide" }] });
    const g = many([loop("a.one", inner("b.two")), loop("b.two", inner("a.one")), loop("c.three", inner("c.three"))]);
    wellFormed(g);
    expect(g.loops.map((l) => [l.loopId, l.parent])).toEqual([
      ["a.one", null],
      ["b.two", "loop:a.one"],
      ["c.three", null],
    ]);
  });

  it("keeps ids unique for duplicate loop ids and duplicate phase ids", () => {
    const dup = loop("a.one", (m) => m.phases.push({ id: "fetch", kind: "learn" }));
    const g = many([dup, loop("a.one")]);
    wellFormed(g);
    expect(g.loops.map((l) => l.id)).toEqual(["loop:a.one", "loop:a.one~2"]);
    expect(g.nodes.filter((n) => n.kind === "phase" && n.phase === "fetch").map((n) => n.id)).toEqual(["phase:a.one/fetch", "phase:a.one/#4", "phase:a.one~2/fetch"]);
  });
});

describe("robustness", () => {
  it("never throws, and stays well formed, on any parsed document", () => {
    fc.assert(
      fc.property(fc.array(fc.anything(), { maxLength: 3 }), (docs) => {
        wellFormed(buildGraph(docs.map((manifest, i) => ({ file: `f${i}`, manifest }))));
      }),
      { numRuns: 200 },
    );
  });

  it("never throws on manifests with any field replaced by any value", () => {
    const paths = [["phases"], ["phases", 0], ["phases", 0, "id"], ["phases", 1, "outputs"], ["closure"], ["closure", "to_phase"], ["cadence"], ["cadence", "params"], ["substrates"], ["nesting"], ["connections"], ["invariants"]];
    fc.assert(
      fc.property(fc.constantFrom(...paths), fc.anything(), fc.nat({ max: 3 }), (path, value, depth) => {
        const m = loop("a.one", (x) => {
          x.nesting = { inner_loops: [{ loop_id: "b.two", trigger: "phase:decide" }] };
          x.connections = [{ id: "c", emit_phase: "learn", token: "OutcomeSignal", to_loop: "b.two", to_phase: "fetch" }];
        });
        let target: any = m;
        for (const key of path.slice(0, -1)) target = target[key];
        target[path[path.length - 1]!] = value;
        wellFormed(many([m, loop("b.two")], { depth, substrates: "all" }));
      }),
      { numRuns: 300 },
    );
  });
});
