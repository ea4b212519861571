/**
 * Graphviz DOT. Loops are clusters (nested for loaded inner loops), phases rounded boxes in
 * array order coloured by kind, the closure a thick edge that does not constrain the layout,
 * substrates one cylinder per URI outside every cluster. Edges to a whole loop attach to its
 * entry and are clipped at the cluster border (compound=true). Every id is n<i> or cluster_<i>,
 * every string goes through dotString, and the ring layout is Graphviz's circo.
 */
import { dotString, dotTooltip } from "./escape.js";
import type { DiagramEdge, DiagramGraph, DiagramNode, Layout } from "./model.js";
import { CADENCE, CLUSTER, DANGLING_COLOUR, EDGE_COLOURS, MISSING, NEUTRAL, SUBSTRATE, TEXT, kindKey, kindStyles, type Swatch } from "./palette.js";
import { Structure } from "./structure.js";

/** A left-aligned label (Graphviz `\l` line ends). */
class Left {
  constructor(readonly text: string) {}
}

type Attrs = Record<string, string | number | boolean | Left>;

function attrs(a: Attrs): string {
  const value = (v: Attrs[string]): string => (typeof v === "string" ? dotString(v) : v instanceof Left ? dotString(v.text, "left") : String(v));
  const parts = Object.entries(a).map(([k, v]) => `${k}=${value(v)}`);
  return parts.length ? ` [${parts.join(", ")}]` : "";
}

const FONT = "Helvetica";

const NODE_STYLE: Record<Exclude<DiagramNode["kind"], "phase">, { swatch: Swatch; attrs: Attrs }> = {
  // cds points right: the margin keeps the text out of the point Graphviz does not size for.
  cadence: { swatch: CADENCE, attrs: { shape: "cds", style: "filled", class: "cadence", margin: "0.32,0.08" } },
  substrate: { swatch: SUBSTRATE, attrs: { shape: "cylinder", style: "filled", class: "substrate" } },
  inner_loop: { swatch: NEUTRAL, attrs: { style: "rounded,dashed,filled", class: "inner-loop" } },
  external_loop: { swatch: NEUTRAL, attrs: { style: "dashed,filled", class: "external-loop" } },
  missing: { swatch: MISSING, attrs: { style: "dashed,filled,bold", fontcolor: MISSING.stroke, class: "missing" } },
};

export function toDot(graph: DiagramGraph, layout: Layout = "lr"): string {
  const s = new Structure(graph);
  const kinds = kindStyles(graph);
  const graphAttrs: Attrs = { compound: true, fontname: FONT, fontsize: 12, nodesep: 0.3, ranksep: 0.45, pad: 0.25, bgcolor: "white" };
  // circo draws no cluster boxes, so the loops' titles would be lost: they head the drawing instead.
  if (layout === "ring") Object.assign(graphAttrs, { layout: "circo", mindist: 1.1, label: new Left(graph.loops.map((l) => l.label).join("\n\n")), labelloc: "t", labeljust: "l", fontsize: 13 });
  else graphAttrs.rankdir = layout === "tb" ? "TB" : "LR";
  const lines = [
    'digraph "pulse" {',
    `  graph${attrs(graphAttrs)};`,
    `  node${attrs({ fontname: FONT, fontsize: 11, shape: "box", style: "rounded,filled", penwidth: 1.2, color: NEUTRAL.stroke, fillcolor: NEUTRAL.fill, fontcolor: TEXT, margin: "0.12,0.06" })};`,
    `  edge${attrs({ fontname: FONT, fontsize: 9, color: EDGE_COLOURS.sequence, fontcolor: EDGE_COLOURS.sequence, arrowsize: 0.7 })};`,
  ];

  const nodeLine = (node: DiagramNode): string => {
    if (node.kind === "phase") {
      const k = kinds.findIndex((style) => style.key === kindKey(node));
      const swatch = kinds[k]?.swatch ?? NEUTRAL;
      const a: Attrs = { label: node.label, fillcolor: swatch.fill, color: swatch.stroke, class: `phase k${k}` };
      if (kinds[k]?.double) a.peripheries = 2;
      if (node.description) a.tooltip = dotTooltip(node.description);
      return `"${s.node(node.id)}"${attrs(a)};`;
    }
    const style = NODE_STYLE[node.kind];
    return `"${s.node(node.id)}"${attrs({ label: node.label, ...style.attrs, fillcolor: style.swatch.fill, color: style.swatch.stroke })};`;
  };

  const emitLoop = (loopId: string | null, indent: string): void => {
    for (const node of s.nodesIn(loopId)) lines.push(`${indent}${nodeLine(node)}`);
    for (const loop of s.loopsIn(loopId)) {
      lines.push(`${indent}subgraph cluster_${s.loop(loop.id)} {`);
      // Every cluster sets its own label: a nested cluster would otherwise inherit its parent's.
      lines.push(`${indent}  graph${attrs({ label: new Left(loop.label), style: "rounded", color: CLUSTER.stroke, fontcolor: CLUSTER.text, margin: 10, labeljust: "l", class: "loop" })};`);
      emitLoop(loop.id, `${indent}  `);
      lines.push(`${indent}}`);
    }
  };
  emitLoop(null, "  ");

  for (const edge of graph.edges) {
    const line = edgeLine(s, edge);
    if (line) lines.push(`  ${line}`);
  }
  lines.push("}");
  return `${lines.join("\n")}\n`;
}

const EDGE_STYLE: Record<DiagramEdge["kind"], Attrs> = {
  sequence: {},
  route: { style: "dashed", color: EDGE_COLOURS.route },
  closure: { penwidth: 2.5, color: EDGE_COLOURS.closure, fontcolor: EDGE_COLOURS.closure },
  cadence: { style: "dashed", color: EDGE_COLOURS.cadence, fontcolor: EDGE_COLOURS.cadence },
  nesting: { style: "dashed", color: EDGE_COLOURS.nesting, fontcolor: EDGE_COLOURS.nesting },
  connection: { penwidth: 1.6, color: EDGE_COLOURS.connection, fontcolor: EDGE_COLOURS.connection, constraint: false },
  substrate: { style: "dotted", color: EDGE_COLOURS.substrate, fontcolor: EDGE_COLOURS.substrate },
};

function swapClips(a: Attrs): Attrs {
  const { ltail, lhead, ...rest } = a;
  return { ...rest, ...(lhead === undefined ? {} : { ltail: lhead }), ...(ltail === undefined ? {} : { lhead: ltail }) };
}

function edgeLine(s: Structure, edge: DiagramEdge): string | undefined {
  const a: Attrs = { ...EDGE_STYLE[edge.kind], class: edge.dangling ? `${edge.kind} dangling` : edge.kind };
  const end = (id: string, clip: "ltail" | "lhead"): string | undefined => {
    const node = s.node(id);
    if (node !== undefined) return node;
    const cluster = s.loop(id);
    if (cluster === undefined) return undefined;
    a[clip] = `cluster_${cluster}`;
    return s.anchorOf(id);
  };
  const from = end(edge.from, "ltail");
  const to = end(edge.to, "lhead");
  if (from === undefined || to === undefined) return undefined;
  // Graphviz cannot clip an edge whose ends share the cluster it is clipped to.
  if (from === to) {
    delete a.ltail;
    delete a.lhead;
  }
  if (edge.label !== null) a.label = edge.label;
  // A substrate read is laid out as a write drawn backwards, so every store ranks after the
  // phases that use it instead of pulling readers behind it.
  // The closure runs back against the phase order. Laid out forwards (to_phase → from_phase,
  // drawn with the arrow at to_phase) it is routed like the order it spans, inside its loop's
  // box and around nested loops, where an unconstrained back edge cut straight across them.
  if (edge.kind === "closure" && from !== to) {
    a.dir = "back";
    return `"${to}" -> "${from}"${attrs(swapClips(a))};`;
  }
  if (edge.kind === "substrate" && s.isSubstrate(edge.from)) {
    a.dir = "back";
    return `"${to}" -> "${from}"${attrs(swapClips(a))};`;
  }
  if (edge.dangling) Object.assign(a, { color: DANGLING_COLOUR, fontcolor: DANGLING_COLOUR, style: "dashed", penwidth: 2 });
  return `"${from}" -> "${to}"${attrs(a)};`;
}
