/**
 * Colours, shared by every emitter and the HTML legend. A kind has one colour in every diagram:
 * canonical kinds their own, a custom kind the palette colour its name hashes to. The swatches
 * were chosen (from Paul Tol's colour-blind-safe schemes) so that any two differ clearly in fill
 * or border for normal vision and under simulated protanopia, deuteranopia and tritanopia
 * (test/diagram/palette.test.ts measures it). Two custom kinds of one diagram that hash to the
 * same colour keep it, and the later one (by name) gets a double border, so they stay apart.
 */
import { CANONICAL_PHASE_KINDS } from "../manifest/types.js";
import { clean } from "./labels.js";
import type { DiagramGraph, DiagramNode, EdgeKind } from "./model.js";

export interface Swatch {
  fill: string;
  stroke: string;
}

export const CANONICAL: Readonly<Record<string, Swatch>> = {
  retrieve: { fill: "#8cc2e0", stroke: "#0077bb" },
  route: { fill: "#d1c28c", stroke: "#997700" },
  act: { fill: "#dbebe0", stroke: "#117733" },
  learn: { fill: "#dbbdcc", stroke: "#882255" },
  consolidate: { fill: "#e3f2f0", stroke: "#44aa99" },
};

export const CUSTOM: readonly Swatch[] = [
  { fill: "#d9d9d9", stroke: "#000000" },
  { fill: "#c2bddb", stroke: "#332288" },
  { fill: "#f0f0e0", stroke: "#999933" },
  { fill: "#f7a3c2", stroke: "#ee3377" },
  { fill: "#babaa3", stroke: "#666633" },
  { fill: "#f2e3f0", stroke: "#aa4499" },
  { fill: "#f7e8eb", stroke: "#cc6677" },
  { fill: "#d1c2c2", stroke: "#663333" },
  { fill: "#bad1e8", stroke: "#6699cc" },
  { fill: "#f0c2b8", stroke: "#cc3311" },
  { fill: "#b2c7db", stroke: "#004488" },
  { fill: "#f0e3e6", stroke: "#994455" },
];

/**
 * FNV-1a over the name's UTF-16 code units, then MurmurHash3's finaliser (FNV's low bits alone
 * spread poorly over 12 colours): the same name, the same colour, in every diagram and run. The
 * salt is one under which the spec's ten custom kinds (§15.2, §15.3, and the coding loops'
 * dispatch) all get different colours, since they are drawn together most often.
 */
export function customSwatchIndex(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  h ^= SALT;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) % CUSTOM.length;
}

const SALT = 1298;

export const NEUTRAL: Swatch = { fill: "#f8fafc", stroke: "#64748b" };
export const MISSING: Swatch = { fill: "#fee2e2", stroke: "#dc2626" };
export const CADENCE: Swatch = { fill: "#fffbeb", stroke: "#b45309" };
export const SUBSTRATE: Swatch = { fill: "#f1f5f9", stroke: "#475569" };
export const CLUSTER = { stroke: "#94a3b8", fill: "#ffffff", text: "#0f172a" };
export const TEXT = "#0f172a";

export const EDGE_COLOURS: Record<EdgeKind, string> = {
  sequence: "#334155",
  route: "#64748b",
  closure: "#dc2626",
  cadence: "#b45309",
  nesting: "#7c3aed",
  connection: "#2563eb",
  substrate: "#94a3b8",
};
export const DANGLING_COLOUR = "#dc2626";

/** A phase's kind class: the canonical kind, or `custom:<name>`. */
export function kindKey(node: DiagramNode): string | undefined {
  if (node.kind !== "phase") return undefined;
  if (node.phaseKind === "custom") return `custom:${node.customKind ?? ""}`;
  return node.phaseKind;
}

export interface KindStyle {
  key: string;
  /** What the legend prints. */
  name: string;
  swatch: Swatch;
  /** A second border, for a custom kind whose colour an earlier kind of this diagram already has. */
  double: boolean;
}

/** Every phase kind the graph uses, canonical kinds first in §3.2 order, then custom kinds by name. */
export function kindStyles(graph: DiagramGraph): KindStyle[] {
  const keys = new Set<string>();
  for (const node of graph.nodes) {
    const key = kindKey(node);
    if (key !== undefined) keys.add(key);
  }
  const canonical = CANONICAL_PHASE_KINDS.filter((k) => keys.has(k)).map((k) => ({ key: k, name: k, swatch: CANONICAL[k] as Swatch, double: false }));
  const others = [...keys].filter((k) => !Object.hasOwn(CANONICAL, k)).sort();
  const taken = new Set<number>();
  const custom = others.map((key) => {
    if (!key.startsWith("custom:")) return { key, name: clean(key) || "(no kind)", swatch: NEUTRAL, double: false };
    const name = key.slice("custom:".length);
    const index = customSwatchIndex(name);
    const double = taken.has(index);
    taken.add(index);
    return { key, name: `custom: ${clean(name) || "(unnamed)"}`, swatch: CUSTOM[index] as Swatch, double };
  });
  return [...canonical, ...custom];
}
