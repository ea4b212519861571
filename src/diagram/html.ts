/**
 * One self-contained HTML page: the SVG inline, a legend, each loop's phases, cadence,
 * invariants and connections in a side table, and the Mermaid source. No script and no network:
 * a Content-Security-Policy of default-src 'none' makes the browser enforce that.
 */
import { htmlText as h } from "./escape.js";
import type { DiagramEdge, DiagramGraph, DiagramLoop, DiagramNode, EdgeKind, PhaseNode } from "./model.js";
import { CADENCE, DANGLING_COLOUR, EDGE_COLOURS, MISSING, NEUTRAL, SUBSTRATE, kindKey, kindStyles, type Swatch } from "./palette.js";
import { inlineSvg } from "./svg.js";

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#0f172a;background:#f8fafc}
header{padding:14px 24px;background:#0f172a;color:#f8fafc}
header h1{margin:0;font-size:20px}
header p{margin:4px 0 0;color:#cbd5e1;font-size:13px}
main{display:grid;grid-template-columns:minmax(0,1fr) 380px;gap:16px;padding:16px 24px;align-items:start}
.view{display:flex;flex-direction:column;gap:6px;min-width:0}
.view label{font-size:12px;color:#475569;user-select:none}
figure{margin:0;background:#fff;border:1px solid #e2e8f0;border-radius:8px;padding:12px;overflow:auto;max-height:calc(100vh - 140px)}
figure svg{max-width:100%;height:auto}
#actual-size:checked~figure svg{max-width:none}
aside{display:flex;flex-direction:column;gap:12px}
section.card{background:#fff;border:1px solid #e2e8f0;border-radius:8px;padding:12px}
h2{font-size:15px;margin:0 0 6px}
h3{font-size:13px;margin:10px 0 4px;color:#475569;text-transform:uppercase;letter-spacing:.04em}
table{border-collapse:collapse;width:100%;font-size:12px}
td,th{border-bottom:1px solid #f1f5f9;padding:3px 4px;text-align:left;vertical-align:top}
th{color:#64748b;font-weight:600}
code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.swatch{display:inline-block;width:14px;height:14px;border-radius:4px;border:2px solid;vertical-align:-3px;margin-right:6px}
.line{display:inline-block;width:26px;height:0;border-top:3px solid;vertical-align:middle;margin-right:6px}
.legend li{list-style:none;margin:2px 0}
.legend ul{padding:0;margin:0;columns:2}
.off{color:#94a3b8}
.dangling{color:${DANGLING_COLOUR};font-weight:600}
details{margin:0 24px 24px;background:#fff;border:1px solid #e2e8f0;border-radius:8px;padding:8px 12px}
pre{overflow:auto;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
@media (max-width:900px){main{grid-template-columns:1fr}}
`;

export interface HtmlParts {
  graph: DiagramGraph;
  svg: string;
  mermaid: string;
  generator: string;
}

export function toHtml({ graph, svg, mermaid, generator }: HtmlParts): string {
  const loopIds = graph.loops.map((l) => l.loopId);
  const phases = graph.nodes.filter((n) => n.kind === "phase").length;
  const connections = graph.edges.filter((e) => e.kind === "connection").length;
  const title = `PULSE loops: ${loopIds.join(", ") || "(none)"}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="generator" content="${h(generator)}">
<title>${h(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>${h(title)}</h1>
<p>${count(graph.loops.length, "loop")} · ${count(phases, "phase")} · ${count(connections, "connection")}${danglingCount(graph.edges)}</p>
</header>
<main>
<div class="view">
<input type="checkbox" id="actual-size" hidden>
<label for="actual-size">Fit to width / actual size (click to switch)</label>
<figure>
${inlineSvg(svg)}
</figure>
</div>
<aside>
${legend(graph)}
${danglingList(graph)}
${graph.loops.map((loop) => loopCard(graph, loop)).join("\n")}
</aside>
</main>
<details>
<summary>Mermaid source</summary>
<pre><code>${h(mermaid)}</code></pre>
</details>
</body>
</html>
`;
}

function count(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function danglingCount(edges: readonly DiagramEdge[]): string {
  const n = edges.filter((e) => e.dangling).length;
  return n ? ` · <span class="dangling">${count(n, "dangling reference")}</span>` : "";
}

const swatch = (s: Swatch, dashed = false): string => `<span class="swatch" style="background:${s.fill};border-color:${s.stroke}${dashed ? ";border-style:dashed" : ""}"></span>`;
const line = (colour: string, dashed = false): string => `<span class="line" style="border-top-color:${colour}${dashed ? ";border-top-style:dashed" : ""}"></span>`;

const EDGE_LEGEND: [EdgeKind, string, boolean][] = [
  ["sequence", "phase order", false],
  ["closure", "closure", false],
  ["cadence", "trigger", true],
  ["route", "route (phase:…)", true],
  ["nesting", "inner loop", true],
  ["connection", "connection", false],
  ["substrate", "substrate", true],
];

function legend(graph: DiagramGraph): string {
  const kinds = kindStyles(graph).map((k) => `<li>${swatch(k.swatch)}${h(k.name)}</li>`);
  const nodes = [
    `<li>${swatch(CADENCE)}cadence (trigger)</li>`,
    `<li>${swatch(SUBSTRATE)}substrate</li>`,
    `<li>${swatch(NEUTRAL, true)}inner or external loop</li>`,
    `<li>${swatch(MISSING, true)}phase not found</li>`,
  ];
  const edges = EDGE_LEGEND.map(([kind, text, dashed]) => `<li>${line(EDGE_COLOURS[kind], dashed)}${h(text)}</li>`);
  edges.push(`<li>${line(DANGLING_COLOUR, true)}dangling reference</li>`);
  return `<section class="card legend">
<h2>Legend</h2>
<h3>Phase kinds</h3><ul>${kinds.join("")}</ul>
<h3>Nodes</h3><ul>${nodes.join("")}</ul>
<h3>Edges</h3><ul>${edges.join("")}</ul>
</section>`;
}

function danglingList(graph: DiagramGraph): string {
  const items = graph.edges.flatMap((e) => e.unresolved ?? []).map((u) => `<li><code>${h(u.file)}</code> <code>${h(u.pointer)}</code>: phase <code>${h(u.phase)}</code> of <code>${h(u.target)}</code> not found</li>`);
  if (!items.length) return "";
  return `<section class="card"><h2 class="dangling">Dangling references</h2><ul>${items.join("")}</ul></section>`;
}

function loopCard(graph: DiagramGraph, loop: DiagramLoop): string {
  const phases = graph.nodes.filter((n): n is PhaseNode => n.kind === "phase" && n.loop === loop.id);
  const byId = new Map<string, DiagramNode>(graph.nodes.map((n) => [n.id, n]));
  const connections = graph.edges.filter((e) => e.kind === "connection" && byId.get(e.from)?.loop === loop.id);
  const meta = [loop.version ? `v${h(loop.version)}` : "", `<code>${h(loop.file)}</code>`, loop.parent ? `inside <code>${h(loop.parent.slice("loop:".length))}</code>` : "", loop.collapsed ? "collapsed" : ""].filter(Boolean);
  const kinds = kindStyles(graph);
  const phaseRows = phases.map((p) => {
    const style = kinds.find((k) => k.key === kindKey(p));
    return `<tr><td>${p.index}</td><td><code>${h(p.phase)}</code></td><td>${style ? swatch(style.swatch) : ""}${h(p.label.split("\n")[1] ?? "")}</td><td>${h(p.description ?? "")}</td></tr>`;
  });
  const cadence = loop.cadence.map((c, i) => `<tr><th>${i === 0 ? "cadence" : "fallback"}</th><td>${h(c.label)}</td></tr>`);
  const invariants = loop.invariants.map((inv) => `<tr><td${inv.enabled ? "" : ' class="off"'}>${inv.enabled ? "✓" : "·"} <code>${h(inv.name)}</code></td></tr>`);
  const substrates = loop.substrates.filter((sub) => sub.uri !== null).map((sub) => `<tr><th>${h(sub.slot)}</th><td><code>${h(sub.uri ?? "")}</code></td></tr>`);
  const connectionRows = connections.map((e) => {
    const target = byId.get(e.to);
    const to = target ? target.label.replace(/\n/g, " / ") : e.to;
    return `<tr><td><code>${h(e.connection?.id ?? "")}</code></td><td>${h(e.label ?? "")}${e.connection?.condition ? `<br><code>${h(e.connection.condition)}</code>` : ""}</td><td${e.dangling ? ' class="dangling"' : ""}>${h(to)}</td></tr>`;
  });
  return `<section class="card loop">
<h2><code>${h(loop.loopId)}</code>${loop.name ? ` ${h(loop.name)}` : ""}</h2>
<div>${meta.join(" · ")}</div>
<h3>Cadence</h3><table>${cadence.join("")}</table>
${phaseRows.length ? `<h3>Phases</h3><table><tr><th>#</th><th>id</th><th>kind</th><th>description</th></tr>${phaseRows.join("")}</table>` : ""}
${connectionRows.length ? `<h3>Connections</h3><table><tr><th>id</th><th>token · delivery</th><th>to</th></tr>${connectionRows.join("")}</table>` : ""}
<h3>Invariants</h3><table>${invariants.join("")}</table>
${substrates.length ? `<h3>Substrates</h3><table>${substrates.join("")}</table>` : ""}
</section>`;
}
