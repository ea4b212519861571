/**
 * SVG without a browser: Graphviz compiled to WebAssembly (@viz-js/viz). The module is large
 * (about 1 MB of JavaScript and wasm), so it is imported on the first SVG or HTML render only;
 * the other formats and `pulse validate` never load it.
 */
import type { Layout } from "./model.js";

type Viz = Awaited<ReturnType<typeof import("@viz-js/viz").instance>>;

let viz: Promise<Viz> | undefined;

async function graphviz(): Promise<Viz> {
  viz ??= import("@viz-js/viz").then((m) => m.instance());
  return viz;
}

export class GraphvizError extends Error {}

/** Renders DOT to SVG. Graphviz warnings (e.g. font metrics for non-ASCII text) are not errors. */
export async function renderSvg(dot: string, layout: Layout = "lr"): Promise<string> {
  const result = (await graphviz()).render(dot, { format: "svg", engine: layout === "ring" ? "circo" : "dot" });
  if (result.status !== "success") {
    const errors = result.errors.filter((e) => e.level !== "warning").map((e) => e.message.trim());
    throw new GraphvizError(`Graphviz could not render the diagram: ${errors.join("; ") || "unknown error"}`);
  }
  return result.output;
}

/** The SVG element alone, for embedding in HTML: no XML declaration, doctype or comments. */
export function inlineSvg(svg: string): string {
  const start = svg.indexOf("<svg");
  return (start < 0 ? svg : svg.slice(start)).replace(/<!--[\s\S]*?-->\n?/g, "").trim();
}
