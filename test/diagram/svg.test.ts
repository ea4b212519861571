/**
 * SVG is checked by content, not bytes (those follow the Graphviz build): well-formed XML with
 * every phase, every closure and every connection of the manifests drawn.
 */
import { describe, expect, it } from "vitest";
import { expandOperands } from "../../src/cli/expand-paths.js";
import { readSource } from "../../src/source/load.js";
import { diagram, ROOT } from "./helpers.js";
import { parseXml, textOf, walk, type XmlElement } from "./xml.js";

function classes(el: XmlElement): string[] {
  return (el.attrs.class ?? "").split(/\s+/);
}

function groups(svg: XmlElement, ...cls: string[]): XmlElement[] {
  return [...walk(svg)].filter((e) => e.name === "g" && cls.every((c) => classes(e).includes(c)));
}

const texts = (el: XmlElement) => [...walk(el)].filter((e) => e.name === "text").map(textOf);

async function manifestsOf(operand: string) {
  const { files } = await expandOperands([operand], ROOT);
  return Promise.all(files.map(async (f) => (await readSource(`${ROOT}/${f}`)).value as Record<string, any>));
}

describe("SVG of the shipped manifests", () => {
  it("is well-formed XML with every phase, every closure and every connection", async () => {
    const r = await diagram(["manifests/", "--format", "svg"]);
    expect(r.code).toBe(0);
    const svg = parseXml(r.stdout);
    expect(svg.name).toBe("svg");
    const manifests = await manifestsOf("manifests/");

    const phaseTexts = groups(svg, "node", "phase").map((g) => texts(g)[0]);
    for (const m of manifests) for (const p of m.phases) expect(phaseTexts, `${m.loop_id}/${p.id}`).toContain(p.id);
    expect(phaseTexts).toHaveLength(manifests.reduce((n, m) => n + m.phases.length, 0));

    const closures = groups(svg, "edge", "closure").map((g) => texts(g).join(" "));
    expect(closures.sort()).toEqual(manifests.map((m) => `closure${m.closure.via ? ` via ${m.closure.via}` : ""} (${m.closure.guarantee})`).sort());

    const connections = groups(svg, "edge", "connection").map((g) => texts(g).join(" "));
    const declared = manifests.flatMap((m) => (m.connections ?? []).map((c: any) => `${c.token} \u00b7 ${c.delivery}`));
    expect(connections.sort()).toEqual(declared.sort());

    const clusters = groups(svg, "cluster").map((g) => texts(g)[0]);
    expect(clusters.sort()).toEqual(manifests.map((m) => m.loop_id).sort());
  });

  it("draws the dangling connection of the spec's §4 and §15.2 examples as 'phase not found'", async () => {
    const r = await diagram(["test/fixtures/spec/graphonomous.jsonc", "test/fixtures/spec/prism.jsonc", "--format", "svg"]);
    expect(r.code).toBe(0);
    const svg = parseXml(r.stdout);
    const dangling = groups(svg, "edge", "connection", "dangling");
    expect(dangling.map((g) => texts(g).join(" "))).toEqual(["OutcomeSignal \u00b7 at_least_once"]);
    expect(groups(svg, "node", "missing").map((g) => texts(g))).toEqual([["phase not found", "observe_judgments"]]);
  });

  it("lays a single loop out as a ring with circo", async () => {
    const r = await diagram(["manifests/prism.benchmark.yaml", "--layout", "ring", "--format", "svg"]);
    expect(r.code).toBe(0);
    const svg = parseXml(r.stdout);
    expect(groups(svg, "node", "phase").map((g) => texts(g)[0]).sort()).toEqual(["compose", "diagnose", "interact", "observe", "reflect"]);
    // circo places the phases on a circle: equal distances from their centre.
    const centres = groups(svg, "node", "phase").map((g) => {
      const shape = [...walk(g)].find((e) => e.name === "path" || e.name === "polygon")!;
      const pts = (shape.attrs.d ?? shape.attrs.points ?? "").match(/-?\d+(\.\d+)?/g)!.map(Number);
      const xs = pts.filter((_, i) => i % 2 === 0);
      const ys = pts.filter((_, i) => i % 2 === 1);
      return [(Math.min(...xs) + Math.max(...xs)) / 2, (Math.min(...ys) + Math.max(...ys)) / 2] as const;
    });
    const cx = centres.reduce((s, c) => s + c[0], 0) / centres.length;
    const cy = centres.reduce((s, c) => s + c[1], 0) / centres.length;
    const radii = centres.map(([x, y]) => Math.hypot(x - cx, y - cy));
    expect(Math.max(...radii) / Math.min(...radii)).toBeLessThan(1.15);
  });
});
