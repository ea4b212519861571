/**
 * Graph model → text in one of the five formats. Only svg and html load Graphviz (svg.ts
 * imports it on first use), so the text formats stay as fast as the validator.
 */
import { toDot } from "./dot.js";
import { toMermaid } from "./mermaid.js";
import type { DiagramFormat, DiagramGraph, Layout } from "./model.js";

export function toJson(graph: DiagramGraph): string {
  return `${JSON.stringify(graph, null, 2)}\n`;
}

export async function renderDiagram(graph: DiagramGraph, format: DiagramFormat, layout: Layout = "lr", generator = "pulse-diagram"): Promise<string> {
  switch (format) {
    case "mermaid":
      return toMermaid(graph, layout);
    case "dot":
      return toDot(graph, layout);
    case "json":
      return toJson(graph);
    case "svg": {
      const { renderSvg } = await import("./svg.js");
      return renderSvg(toDot(graph, layout), layout);
    }
    case "html": {
      const [{ renderSvg }, { toHtml }] = await Promise.all([import("./svg.js"), import("./html.js")]);
      const svg = await renderSvg(toDot(graph, layout), layout);
      return toHtml({ graph, svg, mermaid: toMermaid(graph, layout), generator });
    }
  }
}
