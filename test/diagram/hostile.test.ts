/**
 * Labels come from manifests, and manifests come from anyone: quotes, brackets, `end`, `#`,
 * `;`, `|`, markup, non-ASCII and newlines must render as text and never break Mermaid or DOT,
 * and bidi controls must never reorder what a diagram shows (Trojan Source).
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { buildGraph } from "../../src/diagram/build.js";
import { dotString, htmlText, mermaidText } from "../../src/diagram/escape.js";
import { toDot } from "../../src/diagram/dot.js";
import { clean } from "../../src/diagram/labels.js";
import { toMermaid } from "../../src/diagram/mermaid.js";
import { renderDiagram } from "../../src/diagram/render.js";
import { renderSvg } from "../../src/diagram/svg.js";
import { parseSourceText } from "../../src/source/parse-text.js";
import { validateSources } from "../../src/validator/validate.js";
import { baseManifest } from "../helpers/manifests.js";
import { checkMermaid, decodeMermaidLabel } from "./mermaid-check.js";
import { parseXml, textOf, walk, type XmlElement } from "./xml.js";

/** Every bidirectional control: embeddings and overrides, isolates, and the LRM, RLM and ALM marks. */
const BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f", "\u061c"];
const HAS_BIDI = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/;

/** Every text and attribute value of an SVG, character references decoded. */
function svgStrings(svg: string): string[] {
  const strings = (e: XmlElement): string[] => [...Object.values(e.attrs), ...e.children.filter((c): c is string => typeof c === "string")];
  return [...walk(parseXml(svg))].flatMap(strings);
}

const TOKENS = ['"', "'", "[", "]", "(", ")", "{", "}", "<", ">", "&", "#", ";", "|", "`", "\\", "\\N", "\\l", "end", "End", " end ", "%%", "%%{init: {}}%%", "style", "classDef", ":", "-->", "==>", "\n", "\r\n", "\t", "κ", "→", "😀", ...BIDI, "#quot;", "&amp;", "&#60;", "<br/>", "<b>x</b>", "subgraph", "click", "a", " ", "1"];
const hostile = fc.string({ unit: fc.constantFrom(...TOKENS), minLength: 1, maxLength: 10 });

/** What DOT's string syntax and Graphviz's entity decoding turn a dotString back into. */
function undot(quoted: string): string {
  return quoted
    .slice(1, -1)
    .replace(/\\(["\\n])|&amp;/g, (_, esc: string | undefined) => (esc === "n" ? "\n" : (esc ?? "&")));
}

describe("escaping", () => {
  it("writes Mermaid's dangerous characters and words as entities", () => {
    expect(mermaidText('say "hi" [x] (y) {z}')).toBe("say #quot;hi#quot; #91;x#93; #40;y#41; #123;z#125;");
    expect(mermaidText("a#b;c|d`e<f>&")).toBe("a#35;b#59;c#124;d#96;e#lt;f#gt;#amp;");
    expect(mermaidText("end of the end_phase, legend, End")).toBe("#101;nd of the end_phase, legend, End");
    expect(mermaidText("κ → 😀\nnext")).toBe("#954; #8594; #128512;<br/>next");
    expect(mermaidText("%%{init}%%")).toBe("#37;#37;#123;init#125;#37;#37;");
    // Mermaid drops the last `;` of a line where style or classDef precedes `:…#…;`.
    expect(mermaidText("lifestyle: #1")).toBe("lifestyle#58; #35;1");
    expect(mermaidText("closure via substrate:memory")).toBe("closure via substrate:memory");
  });

  it("Mermaid labels hold only safe characters and decode to exactly the text (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(fc.constantFrom(...TOKENS), fc.string({ unit: "grapheme", maxLength: 2 })), maxLength: 12 }), (text) => {
        const label = mermaidText(text);
        expect(checkMermaid(`flowchart LR\n  n0["${label}"]\n`).problems).toEqual([]);
        expect(decodeMermaidLabel(label)).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it("DOT strings keep quotes, backslash sequences and entities literal and decode to exactly the text (property)", () => {
    expect(dotString('a "b" \\N \\l &lt; κ\nx')).toBe('"a \\"b\\" \\\\N \\\\l &amp;lt; κ\\nx"');
    expect(dotString("loop\nname", "left")).toBe('"loop\\lname\\l"');
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(fc.constantFrom(...TOKENS.filter((t) => !/[\r\t]/.test(t))), fc.string({ unit: "grapheme", maxLength: 2 })), maxLength: 12 }), (text) => {
        fc.pre(!/[\u0000-\u0009\u000b-\u001f\u007f]/.test(text));
        const quoted = dotString(text);
        // Only escaped quotes inside: the string cannot end early.
        expect(quoted.slice(1, -1).replace(/\\\\|\\"/g, "")).not.toContain('"');
        expect(undot(quoted)).toBe(text);
      }),
      { numRuns: 500 },
    );
  });
});

describe("bidi controls", () => {
  it("are shown as U+FFFD in labels, in place, so the text keeps its stored order", () => {
    expect(clean("admin\u202e \u2066user\u2069 \u200e\u200f\u061c x")).toBe("admin\ufffd \ufffduser\ufffd \ufffd\ufffd\ufffd x");
    for (const c of BIDI) expect(clean(`a${c}b`), `U+${c.codePointAt(0)!.toString(16)}`).toBe("a\ufffdb");
    // Near misses: code points beside the bidi ranges stay text (ZWJ keeps the emoji whole);
    // U+2029 and U+202F stay whitespace.
    expect(clean("\u2029a\u202fb\u2065\u206a\u200d\u200b\u0610c")).toBe("a b\u2065\u206a\u200d\u200b\u0610c");
    expect(clean("שלום, עולם 1-2 · مرحبا 👩‍👩‍👧")).toBe("שלום, עולם 1-2 · مرحبا 👩‍👩‍👧");
  });

  it("are shown as U+FFFD in HTML text, which also prints fields clean() never saw", () => {
    expect(htmlText("<a \u202eb&\u2067>")).toBe("&lt;a \ufffdb&amp;\ufffd&gt;");
    expect(htmlText("עולם \u200d")).toBe("עולם \u200d");
  });
});

/** A manifest the schema accepts, with hostile text wherever the schema allows free text. */
function hostileManifest(t: string[]): Record<string, any> {
  const m = baseManifest();
  m.loop_name = t[0];
  m.phases[0].id = "end";
  m.phases[0].description = t[1];
  m.phases[1] = { id: "decide", kind: "custom", custom_kind: t[2], description: t[3] };
  m.closure.from_phase = "learn";
  m.closure.to_phase = "end";
  m.substrates.memory = `memory://${t[4]}`;
  m.cadence = { type: "event", params: { trigger: t[5] }, fallback: { type: "manual", params: { interface: t[6] } } };
  m.connections = [{ id: t[7], emit_phase: "learn", token: "OutcomeSignal", to_loop: t[8], to_phase: t[9] }];
  m.nesting = { inner_loops: [{ loop_id: t[10], trigger: "phase:decide when name == 'x'", wait: "until_done" }] };
  return m;
}

describe("hostile manifests through the whole pipeline", () => {
  it("are valid manifests (so the CLI draws them)", () => {
    const m = hostileManifest(Array.from({ length: 11 }, () => 'x"]; end #;|<b>κ\n'));
    const [result] = validateSources([parseSourceText("h.json", JSON.stringify(m), "json")]);
    expect(result!.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  });

  it("produce Mermaid that passes the grammar check and shows every label verbatim (property)", () => {
    fc.assert(
      fc.property(fc.array(hostile, { minLength: 11, maxLength: 11 }), (t) => {
        const graph = buildGraph([{ file: "h.json", manifest: hostileManifest(t) }], { substrates: "all" });
        for (const layout of ["lr", "tb", "ring"] as const) {
          const shape = checkMermaid(toMermaid(graph, layout));
          expect(shape.problems).toEqual([]);
          const shown = new Set(shape.labels.map(decodeMermaidLabel));
          for (const label of shown) expect(label).not.toMatch(HAS_BIDI);
          for (const item of [...graph.nodes, ...graph.loops]) expect(shown.has(item.label), item.label).toBe(true);
          for (const edge of graph.edges) if (edge.label !== null) expect(shown.has(edge.label), edge.label).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  it("produce DOT that Graphviz renders, into well-formed SVG showing every label line (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(hostile, { minLength: 11, maxLength: 11 }), async (t) => {
        const graph = buildGraph([{ file: "h.json", manifest: hostileManifest(t) }], { substrates: "all" });
        const dot = toDot(graph);
        const svg = await renderSvg(dot);
        const texts = [...walk(parseXml(svg))].filter((e) => e.name === "text").map((e) => textOf(e));
        for (const item of [...graph.nodes, ...graph.loops]) for (const line of item.label.split("\n")) expect(texts, line).toContain(line);
        expect(dot).not.toMatch(HAS_BIDI);
        for (const text of svgStrings(svg)) expect(text).not.toMatch(HAS_BIDI);
      }),
      { numRuns: 30 },
    );
  });
});

describe("bidi controls in every free-text field", () => {
  const t = Array.from({ length: 11 }, (_, i) => `x${BIDI[i]}y${BIDI[(i + 5) % BIDI.length]}z`);
  const graph = buildGraph([{ file: "h\u202e.json", manifest: hostileManifest(t) }], { substrates: "all" });

  it("reach no Mermaid, DOT, SVG or HTML output, even as character references", async () => {
    const charRefs = (text: string) => text.replace(/&#(?:x([0-9a-f]+)|(\d+));/gi, (_, hex?: string, dec?: string) => String.fromCodePoint(hex ? parseInt(hex, 16) : Number(dec)));
    const mermaid = checkMermaid(await renderDiagram(graph, "mermaid"));
    expect(mermaid.labels.map(decodeMermaidLabel).filter((l) => HAS_BIDI.test(l))).toEqual([]);
    expect(await renderDiagram(graph, "dot")).not.toMatch(HAS_BIDI);
    expect(svgStrings(await renderDiagram(graph, "svg")).filter((s) => HAS_BIDI.test(s))).toEqual([]);
    const html = await renderDiagram(graph, "html");
    expect(charRefs(html)).not.toMatch(HAS_BIDI);
    // The raw loop name and file reach the page too, marked where each control was.
    expect(html).toContain("x\ufffdy\ufffdz");
    expect(html).toContain("h\ufffd.json");
  });

  it("stay in the JSON model's raw fields, which are data (labels and descriptions are marked)", () => {
    const loop = graph.loops[0]!;
    expect(loop.name).toBe(t[0]);
    expect(loop.file).toBe("h\u202e.json");
    expect(loop.label).toBe("test.loop\nx\ufffdy\ufffdz");
    expect(graph.nodes.find((n) => n.kind === "phase")).toMatchObject({ description: "x\ufffdy\ufffdz" });
  });
});

describe("phase descriptions in SVG tooltips", () => {
  /** The xlink:title of each phase's node, in phase order (undefined: no tooltip). */
  async function tooltips(descriptions: string[]): Promise<(string | undefined)[]> {
    const m = baseManifest();
    descriptions.forEach((d, i) => (m.phases[i].description = d));
    const svg = parseXml(await renderSvg(toDot(buildGraph([{ file: "t.json", manifest: m }]))));
    const phases = [...walk(svg)].filter((e) => e.name === "g" && /\bphase\b/.test(e.attrs.class ?? ""));
    return phases.map((g) => [...walk(g)].find((e) => e.name === "a")?.attrs["xlink:title"]);
  }

  it("show the text as written, each backslash as its look-alike ⧵ (Graphviz expands \\N, \\l, … even when escaped)", async () => {
    const hostileTip = String.raw`tip\N \l \G \L \E \T \H \n \\ \ &#92; &lt; "q"`;
    expect(await tooltips([hostileTip, String.raw`C:\loops\new`])).toEqual([hostileTip.replace(/\\/g, "\u29f5"), "C:\u29f5loops\u29f5new", undefined, undefined]);
    // The model keeps the real backslashes: only the tooltip draws a look-alike.
    const m = baseManifest();
    m.phases[0].description = String.raw`a\N`;
    expect(buildGraph([{ file: "t.json", manifest: m }]).nodes.find((n) => n.kind === "phase")).toMatchObject({ description: String.raw`a\N` });
  });

  it("show text without backslashes exactly, entities, quotes and markup included (near miss)", async () => {
    const plain = `tip N l &lt; &amp; &#60; "q" 'a' <b>κ</b> 😀 ⧵`;
    expect(await tooltips([plain, "x"])).toEqual([plain, "x", undefined, undefined]);
  });
});
