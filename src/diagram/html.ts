/**
 * One self-contained HTML page: the SVG inline, a legend, each loop's phases, cadence,
 * invariants and connections in a side table, and the Mermaid source. No network, and one small
 * inline script (zoom and pan), allowed by its hash: a Content-Security-Policy of
 * default-src 'none' makes the browser enforce both.
 */
import { createHash } from "node:crypto";
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
.tools{display:flex;gap:6px;align-items:center;font-size:12px;color:#475569}
.tools button{font:inherit;padding:2px 10px;border:1px solid #cbd5e1;border-radius:6px;background:#fff;color:#0f172a;cursor:pointer}
.tools output{min-width:44px;text-align:right}
figure{margin:0;background:#fff;border:1px solid #e2e8f0;border-radius:8px;padding:12px;overflow:auto;height:calc(100vh - 150px);min-height:320px;cursor:grab}
figure.panning{cursor:grabbing;user-select:none}
figure svg{display:block}
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

/**
 * Zoom and pan. The page opens with the drawing fitted to its frame only when that keeps it
 * readable (at least READABLE of its natural size: 11 pt labels stay above 9 px);
 * otherwise at that size, to be panned. Without script the SVG shows at its natural size.
 */
const SCRIPT = `(() => {
  const READABLE = 0.65, MIN = 0.1, MAX = 4;
  const figure = document.getElementById("diagram"), svg = figure.querySelector("svg"), level = document.getElementById("zoom-level");
  if (!svg) return;
  const box = svg.viewBox.baseVal, natural = { w: box.width * 4 / 3, h: box.height * 4 / 3 };
  let scale = 1;
  const frame = () => ({ w: figure.clientWidth - 24, h: figure.clientHeight - 24 });
  const fit = () => Math.min(1, frame().w / natural.w, frame().h / natural.h);
  const apply = (next, at) => {
    const old = scale;
    scale = Math.min(MAX, Math.max(MIN, next));
    const px = at ? at.x + figure.scrollLeft : 0, py = at ? at.y + figure.scrollTop : 0;
    svg.style.width = natural.w * scale + "px";
    svg.style.height = natural.h * scale + "px";
    if (at) { figure.scrollLeft = px * scale / old - at.x; figure.scrollTop = py * scale / old - at.y; }
    level.value = Math.round(scale * 100) + "%";
  };
  const fitted = fit();
  apply(fitted >= READABLE ? fitted : READABLE);
  document.getElementById("zoom-in").onclick = () => apply(scale * 1.25);
  document.getElementById("zoom-out").onclick = () => apply(scale / 1.25);
  document.getElementById("zoom-fit").onclick = () => apply(fit());
  document.getElementById("zoom-reset").onclick = () => apply(1);
  figure.addEventListener("wheel", (e) => {
    if (!e.ctrlKey && !e.metaKey) return;
    e.preventDefault();
    const r = figure.getBoundingClientRect();
    apply(scale * Math.exp(-e.deltaY / 300), { x: e.clientX - r.left, y: e.clientY - r.top });
  }, { passive: false });
  let drag;
  figure.addEventListener("pointerdown", (e) => { if (e.button !== 0) return; drag = { x: e.clientX, y: e.clientY, left: figure.scrollLeft, top: figure.scrollTop }; figure.classList.add("panning"); figure.setPointerCapture(e.pointerId); });
  figure.addEventListener("pointermove", (e) => { if (!drag) return; figure.scrollLeft = drag.left - (e.clientX - drag.x); figure.scrollTop = drag.top - (e.clientY - drag.y); });
  const end = () => { drag = undefined; figure.classList.remove("panning"); };
  figure.addEventListener("pointerup", end);
  figure.addEventListener("pointercancel", end);
})();`;
const SCRIPT_HASH = `sha256-${createHash("sha256").update(SCRIPT).digest("base64")}`;

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
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src '${SCRIPT_HASH}'">
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
<div class="tools"><button type="button" id="zoom-out" title="zoom out (Ctrl/⌘ + wheel)">−</button><output id="zoom-level">100%</output><button type="button" id="zoom-in" title="zoom in (Ctrl/⌘ + wheel)">+</button><button type="button" id="zoom-fit">fit</button><button type="button" id="zoom-reset">100%</button><span>drag or scroll to pan</span></div>
<figure id="diagram">
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
<script>${SCRIPT}</script>
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

const swatch = (s: Swatch, dashed = false, double = false): string =>
  `<span class="swatch" style="background:${s.fill};border-color:${s.stroke}${dashed ? ";border-style:dashed" : double ? ";border-style:double;border-width:4px" : ""}"></span>`;
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
  const kinds = kindStyles(graph).map((k) => `<li>${swatch(k.swatch, false, k.double)}${h(k.name)}</li>`);
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
    return `<tr><td>${p.index}</td><td><code>${h(p.phase)}</code></td><td>${style ? swatch(style.swatch, false, style.double) : ""}${h(p.label.split("\n")[1] ?? "")}</td><td>${h(p.description ?? "")}</td></tr>`;
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
