/**
 * Colours, shared by every emitter and the HTML legend. Canonical kinds keep one colour across
 * all diagrams; custom kinds take palette colours in the order of their names, so PRISM's five
 * custom phases are told apart.
 */
import { CANONICAL_PHASE_KINDS } from "../manifest/types.js";
import { clean } from "./labels.js";
import type { DiagramGraph, DiagramNode, EdgeKind } from "./model.js";

export interface Swatch {
  fill: string;
  stroke: string;
}

const CANONICAL: Record<string, Swatch> = {
  retrieve: { fill: "#dbeafe", stroke: "#2563eb" },
  route: { fill: "#fef3c7", stroke: "#d97706" },
  act: { fill: "#dcfce7", stroke: "#16a34a" },
  learn: { fill: "#f3e8ff", stroke: "#9333ea" },
  consolidate: { fill: "#ccfbf1", stroke: "#0d9488" },
};

const CUSTOM: readonly Swatch[] = [
  { fill: "#fce7f3", stroke: "#db2777" },
  { fill: "#e0e7ff", stroke: "#4f46e5" },
  { fill: "#ffedd5", stroke: "#ea580c" },
  { fill: "#ecfccb", stroke: "#65a30d" },
  { fill: "#cffafe", stroke: "#0891b2" },
  { fill: "#fae8ff", stroke: "#c026d3" },
  { fill: "#fef9c3", stroke: "#ca8a04" },
  { fill: "#e2e8f0", stroke: "#475569" },
  { fill: "#fee2e2", stroke: "#b91c1c" },
  { fill: "#d1fae5", stroke: "#047857" },
  { fill: "#ede9fe", stroke: "#6d28d9" },
  { fill: "#fde68a", stroke: "#92400e" },
];

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
}

/** Every phase kind the graph uses, canonical kinds first in §3.2 order, then custom kinds by name. */
export function kindStyles(graph: DiagramGraph): KindStyle[] {
  const keys = new Set<string>();
  for (const node of graph.nodes) {
    const key = kindKey(node);
    if (key !== undefined) keys.add(key);
  }
  const canonical = CANONICAL_PHASE_KINDS.filter((k) => keys.has(k)).map((k) => ({ key: k, name: k, swatch: CANONICAL[k] as Swatch }));
  const others = [...keys].filter((k) => !Object.hasOwn(CANONICAL, k)).sort();
  const custom = others.map((key, i) => ({
    key,
    name: key.startsWith("custom:") ? `custom: ${clean(key.slice("custom:".length)) || "(unnamed)"}` : clean(key) || "(no kind)",
    swatch: key.startsWith("custom:") ? (CUSTOM[i % CUSTOM.length] as Swatch) : NEUTRAL,
  }));
  return [...canonical, ...custom];
}
