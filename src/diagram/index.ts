/** The diagram library: build the graph model once, then render it in any format. */
export { buildGraph } from "./build.js";
export { toDot } from "./dot.js";
export { toMermaid } from "./mermaid.js";
export { renderDiagram, toJson } from "./render.js";
export { dotString, htmlText, mermaidText } from "./escape.js";
export * from "./model.js";
