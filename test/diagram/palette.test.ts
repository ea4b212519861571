/**
 * One colour per kind name in every diagram, and colours told apart by everyone: any two phase
 * swatches differ clearly (CIE76 ΔE ≥ 10 in fill or border) for normal vision and under
 * simulated protanopia, deuteranopia and tritanopia (Machado, Oliveira and Fernandes 2009).
 */
import { describe, expect, it } from "vitest";
import { CANONICAL, CUSTOM, customSwatchIndex, kindStyles, type Swatch } from "../../src/diagram/palette.js";
import type { DiagramGraph } from "../../src/diagram/model.js";
import { graphOf } from "./helpers.js";

const VISION: Record<string, number[][]> = {
  normal: [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
  protanopia: [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
  deuteranopia: [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.01182, 0.04294, 0.968881]],
  tritanopia: [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.3039]],
};
const toLinear = (c: number) => (c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
function lab(hex: string, vision: number[][]): [number, number, number] {
  const rgb = [1, 3, 5].map((i) => toLinear(Number.parseInt(hex.slice(i, i + 2), 16) / 255));
  const [r, g, b] = vision.map((row) => Math.min(1, Math.max(0, row[0]! * rgb[0]! + row[1]! * rgb[1]! + row[2]! * rgb[2]!)));
  const x = (0.4124 * r! + 0.3576 * g! + 0.1805 * b!) / 0.95047;
  const y = 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  const z = (0.0193 * r! + 0.1192 * g! + 0.9505 * b!) / 1.08883;
  const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))];
}
const deltaE = (a: string, b: string, v: number[][]) => Math.hypot(...lab(a, v).map((c, i) => c - lab(b, v)[i]!));
const apart = (a: Swatch, b: Swatch, v: number[][]) => Math.max(deltaE(a.fill, b.fill, v), deltaE(a.stroke, b.stroke, v));

const graph = (kinds: string[]): DiagramGraph =>
  ({ nodes: kinds.map((k, i) => ({ id: `p${i}`, kind: "phase", phaseKind: "custom", customKind: k })), edges: [], loops: [] }) as unknown as DiagramGraph;

describe("phase kind colours", () => {
  const swatches = [...Object.values(CANONICAL), ...CUSTOM];

  it.each(Object.keys(VISION))("any two differ clearly (ΔE ≥ 10 in fill or border) with %s", (vision) => {
    let closest = Infinity;
    for (let i = 0; i < swatches.length; i++) for (let j = i + 1; j < swatches.length; j++) closest = Math.min(closest, apart(swatches[i]!, swatches[j]!, VISION[vision]!));
    expect(closest).toBeGreaterThanOrEqual(10);
  });

  it("the check can fail: the old blue retrieve and purple learn were 5 apart for a deuteranope", () => {
    expect(apart({ fill: "#dbeafe", stroke: "#2563eb" }, { fill: "#f3e8ff", stroke: "#9333ea" }, VISION.deuteranopia!)).toBeLessThan(10);
  });

  it("fills stay light enough for black labels, borders dark enough to see", () => {
    for (const s of swatches) {
      expect(lab(s.fill, VISION.normal!)[0], s.fill).toBeGreaterThanOrEqual(70);
      expect(lab(s.stroke, VISION.normal!)[0], s.stroke).toBeLessThanOrEqual(70);
    }
  });

  it("a kind name has the same colour in every diagram (compose alone, and in the whole system)", async () => {
    const alone = kindStyles(await graphOf(["manifests/prism.benchmark.yaml"])).find((k) => k.key === "custom:compose")!;
    const system = kindStyles(await graphOf(["manifests/"])).find((k) => k.key === "custom:compose")!;
    expect(system.swatch).toEqual(alone.swatch);
    expect(kindStyles(graph(["zeta", "compose"])).find((k) => k.key === "custom:compose")!.swatch).toEqual(alone.swatch);
  });

  it("the spec's ten custom kinds all have different colours, shown together in the system diagram", async () => {
    // The spec's loops: manifests/coding/ holds pulse's built-in loops, with kinds of their own.
    const spec = ["manifests/agentromatic.deliberation.yaml", "manifests/graphonomous.continual_learning.yaml", "manifests/graphonomous.deliberate.yaml", "manifests/prism.benchmark.yaml", "manifests/examples/"];
    const custom = kindStyles(await graphOf(spec)).filter((k) => k.key.startsWith("custom:"));
    expect(custom.length).toBe(10);
    expect(new Set(custom.map((k) => k.swatch.stroke)).size).toBe(10);
    expect(custom.every((k) => !k.double)).toBe(true);
  });

  it("two kinds of one diagram that share a colour are told apart by a double border; different colours need none", () => {
    const names = Array.from({ length: 200 }, (_, i) => `kind${i}`);
    const a = names[0]!;
    const b = names.find((n) => n !== a && customSwatchIndex(n) === customSwatchIndex(a))!;
    const c = names.find((n) => customSwatchIndex(n) !== customSwatchIndex(a))!;
    const [first, second] = kindStyles(graph([a, b])).sort((x, y) => (x.key < y.key ? -1 : 1));
    expect(first!.swatch).toEqual(second!.swatch);
    expect([first!.double, second!.double].sort()).toEqual([false, true]);
    expect(kindStyles(graph([a, c])).map((k) => k.double)).toEqual([false, false]);
  });
});
