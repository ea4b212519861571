/**
 * Labels come from manifests, and manifests come from anyone: quotes, brackets, `end`, `#`,
 * `;`, `|`, markup, non-ASCII and newlines must render as text and never break Mermaid or DOT.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { buildGraph } from "../../src/diagram/build.js";
import { dotString, mermaidText } from "../../src/diagram/escape.js";
import { toDot } from "../../src/diagram/dot.js";
import { toMermaid } from "../../src/diagram/mermaid.js";
import { renderSvg } from "../../src/diagram/svg.js";
import { parseSourceText } from "../../src/source/load.js";
import { validateSources } from "../../src/validator/validate.js";
import { baseManifest } from "../helpers/manifests.js";
import { checkMermaid, decodeMermaidLabel } from "./mermaid-check.js";
import { parseXml, textOf, walk } from "./xml.js";

const TOKENS = ['"', "'", "[", "]", "(", ")", "{", "}", "<", ">", "&", "#", ";", "|", "`", "\\", "\\N", "\\l", "end", "End", " end ", "%%", "%%{init: {}}%%", "style", "classDef", ":", "-->", "==>", "\n", "\r\n", "\t", "κ", "→", "😀", "\u202e", "#quot;", "&amp;", "&#60;", "<br/>", "<b>x</b>", "subgraph", "click", "a", " ", "1"];
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
      }),
      { numRuns: 30 },
    );
  });
});
