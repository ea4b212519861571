/** The drawing conventions of the Mermaid and DOT emitters, stated directly. */
import { describe, expect, it } from "vitest";
import { toDot } from "../../src/diagram/dot.js";
import { toMermaid } from "../../src/diagram/mermaid.js";
import { graphOf } from "./helpers.js";
import { checkMermaid } from "./mermaid-check.js";

const SPEC = ["test/fixtures/spec/graphonomous.jsonc", "test/fixtures/spec/prism.jsonc"];

describe("Mermaid", () => {
  it("writes the closures last and styles exactly them, thick and red, through linkStyle", async () => {
    const shape = checkMermaid(toMermaid(await graphOf(["manifests/"])));
    expect(shape.problems).toEqual([]);
    const closures = shape.edges.map((e, i) => (e.arrow === "==>" ? i : -1)).filter((i) => i >= 0);
    expect(closures).toHaveLength(11);
    expect(closures).toEqual(closures.map((_, k) => shape.edges.length - closures.length + k));
    expect(shape.linkStyles.filter((s) => s.style.includes("stroke-width:3px"))).toEqual([{ indices: closures, style: "stroke:#dc2626,stroke-width:3px" }]);
  });

  it("uses generated ids only, and draws a dangling reference as a dashed red link to 'phase not found'", async () => {
    const text = toMermaid(await graphOf(SPEC));
    const shape = checkMermaid(text);
    expect(shape.problems).toEqual([]);
    expect(text).not.toMatch(/\b(?:graphonomous|prism)\.[a-z_]+\s*[([>{]/);
    const missing = /\n\s+(n\d+)\["phase not found<br\/>observe_judgments"\]/.exec(text)![1];
    const index = shape.edges.findIndex((e) => e.to === missing);
    expect(shape.edges[index]).toMatchObject({ arrow: "-->", label: "OutcomeSignal #183; at_least_once" });
    expect(shape.linkStyles).toContainEqual({ indices: [index], style: "stroke:#dc2626,stroke-width:2px,stroke-dasharray:5 4" });
  });

  it("has a TB direction, and notes that Mermaid cannot draw a ring", async () => {
    const g = await graphOf(["manifests/prism.benchmark.yaml"]);
    expect(toMermaid(g, "tb").split("\n")[0]).toBe("flowchart TB");
    expect(toMermaid(g, "ring").split("\n").slice(0, 2)).toEqual(["flowchart LR", "  %% Mermaid has no circular layout: the ring layout is drawn left to right here"]);
  });
});

describe("DOT", () => {
  it("draws loops as clusters, loaded inner loops nested, and phases in order inside them", async () => {
    const dot = toDot(await graphOf(["manifests/graphonomous.continual_learning.yaml", "manifests/graphonomous.deliberate.yaml"]));
    const outer = dot.indexOf("subgraph cluster_0 {");
    const inner = dot.indexOf("subgraph cluster_1 {");
    expect(outer).toBeGreaterThan(0);
    expect(inner).toBeGreaterThan(outer);
    // cluster_1 opens before cluster_0 closes: nested.
    expect(dot.slice(outer, inner)).not.toMatch(/\n  \}\n/);
    expect(dot).toContain('label="graphonomous.deliberate\\lGraphonomous Deliberation\\l"');
    // The nesting edge ends at the inner cluster's border.
    expect(dot).toMatch(/"n\d+" -> "n\d+" \[style="dashed", color="#7c3aed", fontcolor="#7c3aed", class="nesting", lhead="cluster_1", label="when kappa > 0 · until_stable"\];/);
  });

  it("draws the closure thick and labelled, laid out forwards from to_phase and drawn back to it (so it is routed inside its loop)", async () => {
    const dot = toDot(await graphOf(["manifests/prism.benchmark.yaml"]));
    // compose is n1, diagnose n5: the edge runs compose -> diagnose, its arrow at compose.
    expect(dot).toContain('"n1" -> "n5" [penwidth=2.5, color="#dc2626", fontcolor="#dc2626", class="closure", label="closure via substrate:memory (next_tick)", dir="back"];');
  });

  it("draws unloaded inner loops dashed with trigger and wait, connections token · delivery, dangling targets in red", async () => {
    const dot = toDot(await graphOf(SPEC));
    expect(dot).toContain('[label="graphonomous.deliberate\\ninner loop, not loaded\\ntrigger: phase:route_topology when kappa > 0\\nwait: until_stable", style="rounded,dashed,filled", class="inner-loop"');
    expect(dot).toContain('[label="phase not found\\nobserve_judgments", style="dashed,filled,bold", fontcolor="#dc2626", class="missing"');
    expect(dot).toMatch(/"n\d+" -> "n\d+" \[penwidth=2, color="#dc2626", fontcolor="#dc2626", constraint=false, class="connection dangling", label="OutcomeSignal · at_least_once", style="dashed"\];/);
  });

  it("draws one cylinder per substrate URI, shared by the loops that bind it", async () => {
    const dot = toDot(await graphOf(["manifests/"]));
    const cylinders = [...dot.matchAll(/\[label="([^"]*)", shape="cylinder"/g)].map((m) => m[1]);
    expect(cylinders).toEqual(["graphonomous://workspace/{ws_id}\\nmemory", "memory://coding/guidance/{ws_id}\\nmemory", "memory://coding/agent/{ws_id}\\nmemory", "memory://coding/workflow/{ws_id}\\nmemory", "memory://coding/session/{ws_id}\\nmemory", "memory://examples/hello\\nmemory", "memory://examples/listener\\nmemory", "graphonomous://prism/scenarios\\nmemory"]);
  });

  it("lays out a ring with circo, and left to right or top to bottom with dot", async () => {
    const g = await graphOf(["manifests/prism.benchmark.yaml"]);
    expect(toDot(g, "ring")).toContain('layout="circo"');
    expect(toDot(g, "lr")).toContain('rankdir="LR"');
    expect(toDot(g, "tb")).toContain('rankdir="TB"');
  });
});
