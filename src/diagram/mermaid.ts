/**
 * Mermaid flowchart, which GitHub renders in Markdown. Ids are n0, n1, … (nodes) and s0, s1, …
 * (loops); every label is quoted and escaped (escape.ts). The closures are emitted last and
 * styled through linkStyle, whose indices count the links in the order they are written.
 */
import { mermaidText } from "./escape.js";
import type { DiagramEdge, DiagramGraph, DiagramNode, Layout } from "./model.js";
import { CADENCE, DANGLING_COLOUR, EDGE_COLOURS, MISSING, NEUTRAL, SUBSTRATE, TEXT, kindKey, kindStyles, type Swatch } from "./palette.js";
import { Structure } from "./structure.js";

const SHAPES: Record<DiagramNode["kind"], [string, string]> = {
  phase: ["(", ")"],
  cadence: [">", "]"],
  substrate: ["[(", ")]"],
  inner_loop: ["[[", "]]"],
  external_loop: ["[", "]"],
  missing: ["[", "]"],
};

const ARROWS: Record<DiagramEdge["kind"], string> = {
  sequence: "-->",
  route: "-.->",
  closure: "==>",
  cadence: "-.->",
  nesting: "-.->",
  connection: "-->",
  substrate: "-.->",
};

const quoted = (text: string): string => `"${mermaidText(text)}"`;

function classDef(name: string, swatch: Swatch, extra = ""): string {
  return `classDef ${name} fill:${swatch.fill},stroke:${swatch.stroke},color:${TEXT}${extra}`;
}

export function toMermaid(graph: DiagramGraph, layout: Layout = "lr"): string {
  const s = new Structure(graph);
  const lines = [`flowchart ${layout === "tb" ? "TB" : "LR"}`];
  if (layout === "ring") lines.push("  %% Mermaid has no circular layout: the ring layout is drawn left to right here");

  const emitLoop = (loopId: string | null, indent: string): void => {
    for (const node of s.nodesIn(loopId)) {
      const [open, close] = SHAPES[node.kind];
      lines.push(`${indent}${s.node(node.id)}${open}${quoted(node.label)}${close}`);
    }
    for (const loop of s.loopsIn(loopId)) {
      lines.push(`${indent}subgraph s${s.loop(loop.id)} [${quoted(loop.label)}]`);
      emitLoop(loop.id, `${indent}  `);
      lines.push(`${indent}end`);
    }
  };
  emitLoop(null, "  ");

  const end = (id: string): string | undefined => s.node(id) ?? (s.loop(id) === undefined ? undefined : `s${s.loop(id)}`);
  const ordered = [...graph.edges.filter((e) => e.kind !== "closure"), ...graph.edges.filter((e) => e.kind === "closure")];
  const styles = new Map<string, number[]>();
  let index = 0;
  for (const edge of ordered) {
    const from = end(edge.from);
    const to = end(edge.to);
    if (from === undefined || to === undefined) continue;
    const label = edge.label === null ? "" : `|${quoted(edge.label)}|`;
    lines.push(`  ${from} ${ARROWS[edge.kind]}${label} ${to}`);
    const style = linkStyle(edge);
    if (style) styles.set(style, [...(styles.get(style) ?? []), index]);
    index++;
  }

  const kinds = kindStyles(graph);
  const members = new Map<string, string[]>();
  const member = (cls: string, node: DiagramNode): void => void members.set(cls, [...(members.get(cls) ?? []), s.node(node.id) as string]);
  for (const node of graph.nodes) {
    if (node.kind === "phase") {
      const k = kinds.findIndex((style) => style.key === kindKey(node));
      member(k < 0 ? "other" : `k${k}`, node);
    } else member(node.kind, node);
  }
  const defs: [string, string][] = [
    ...kinds.map((k, i): [string, string] => [`k${i}`, classDef(`k${i}`, k.swatch, k.double ? ",stroke-width:4px" : "")]),
    ["other", classDef("other", NEUTRAL)],
    ["cadence", classDef("cadence", CADENCE)],
    ["substrate", classDef("substrate", SUBSTRATE)],
    ["inner_loop", classDef("inner_loop", NEUTRAL, ",stroke-dasharray:5 4")],
    ["external_loop", classDef("external_loop", NEUTRAL, ",stroke-dasharray:5 4")],
    ["missing", classDef("missing", MISSING, ",stroke-dasharray:5 4,stroke-width:2px")],
  ];
  for (const [name, def] of defs) {
    const ids = members.get(name);
    if (!ids) continue;
    lines.push(`  ${def}`);
    lines.push(`  class ${ids.join(",")} ${name}`);
  }
  for (const [style, indices] of styles) lines.push(`  linkStyle ${indices.join(",")} ${style}`);
  return `${lines.join("\n")}\n`;
}

/** Style of one link; the default (sequence) needs none. Values avoid `;` (see mermaidText). */
function linkStyle(edge: DiagramEdge): string | undefined {
  if (edge.dangling) return `stroke:${DANGLING_COLOUR},stroke-width:2px,stroke-dasharray:5 4`;
  switch (edge.kind) {
    case "closure":
      return `stroke:${EDGE_COLOURS.closure},stroke-width:3px`;
    case "connection":
      return `stroke:${EDGE_COLOURS.connection},stroke-width:2px`;
    case "sequence":
      return undefined;
    default:
      return `stroke:${EDGE_COLOURS[edge.kind]}`;
  }
}
