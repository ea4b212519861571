/**
 * docs/diagrams.md shows what the tool draws today: each committed SVG under docs/diagrams/ and
 * each ```mermaid block is regenerated here and compared. Update them together with the golden
 * files (UPDATE_GOLDEN=1 npx vitest run test/diagram) and review the diff.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { DOC_PICTURES } from "./cases.js";
import { NODE_KINDS } from "../../src/diagram/model.js";
import { diagram, expectGolden, graphOf, ROOT, UPDATE_HINT } from "./helpers.js";
import { checkMermaid } from "./mermaid-check.js";

const DOC = resolve(ROOT, "docs/diagrams.md");
const block = (name: string) => new RegExp(`(<!-- mermaid:${name} -->\\n\`\`\`mermaid\\n)([\\s\\S]*?)(\`\`\`\\n<!-- /mermaid:${name} -->)`);

describe("docs/diagrams.md", () => {
  for (const picture of DOC_PICTURES) {
    it(`shows ${picture.name}: pulse-diagram ${picture.args.join(" ")}`, async () => {
      const svgFile = join(mkdtempSync(join(tmpdir(), "pulse-docs-")), `${picture.name}.svg`);
      const svg = await diagram([...picture.args, "-o", svgFile]);
      expect(svg.code).toBe(0);
      expectGolden(resolve(ROOT, `docs/diagrams/${picture.name}.svg`), readFileSync(svgFile, "utf8"));

      const mermaid = await diagram([...picture.args, "--format", "mermaid"]);
      expect(checkMermaid(mermaid.stdout).problems).toEqual([]);
      const doc = readFileSync(DOC, "utf8");
      const m = block(picture.name).exec(doc);
      expect(m, `docs/diagrams.md has no mermaid block for ${picture.name}`).not.toBeNull();
      if (process.env.UPDATE_GOLDEN === "1") writeFileSync(DOC, doc.replace(block(picture.name), (_, open: string, __: string, close: string) => open + mermaid.stdout + close));
      else expect(m![2], `the ${picture.name} block of docs/diagrams.md is out of date: ${UPDATE_HINT}`).toBe(mermaid.stdout);

      expect(doc).toContain(`](diagrams/${picture.name}.svg)`);
      expect(doc).toContain(`pulse-diagram ${picture.args.join(" ")} -o docs/diagrams/${picture.name}.svg`);
    });
  }
});

/** A documented field row: the names it gives a field, and the names inside its `{…}` shapes. */
interface Row {
  names: string[];
  nested: string[];
}

/** Rows of the markdown tables in text; `nameCell` is the cell that names the fields. */
function rows(text: string, nameCell: number): Row[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      const cells = line.split(/(?<!\\)\|/).slice(1, -1);
      const codes = (cell: string) => [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);
      return {
        names: codes(cells[nameCell] ?? "").flatMap((c) => /^\w+/.exec(c) ?? []),
        nested: codes(line).flatMap((c) => [...c.matchAll(/\{([^}]*)\}/g)].flatMap((m) => m[1]!.split(",").map((n) => n.trim()))),
      };
    });
}

/** Every key below a JSON value, array items merged. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return [...new Set(value.flatMap(keysOf))];
  if (value === null || typeof value !== "object") return [];
  return [...new Set(Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)]))];
}

/** Fields of the objects no row names, and nested fields their row's shapes lack, as `field` or `field.nested`. */
function undocumented(objects: readonly object[], table: readonly Row[]): string[] {
  const missing = new Set<string>();
  for (const object of objects) {
    for (const [key, value] of Object.entries(object)) {
      const row = table.find((r) => r.names.includes(key));
      if (!row) missing.add(key);
      else for (const nested of keysOf(value)) if (!row.nested.includes(nested)) missing.add(`${key}.${nested}`);
    }
  }
  return [...missing];
}

describe("docs/diagrams.md, the JSON model", () => {
  const doc = readFileSync(DOC, "utf8");
  const model = doc.slice(doc.indexOf("## The JSON model"), doc.indexOf("## Pictures"));
  /** The text under a bold heading such as **loops[]**, up to the next one. */
  const part = (title: string): string => {
    const at = model.indexOf(`**${title}**`);
    expect(at, title).toBeGreaterThan(0);
    return model.slice(at).split(/\n\*\*/)[0]!;
  };

  it("names every field the model emits, in the table of what holds it", async () => {
    const graphs = [
      await graphOf(["manifests/"], { substrates: "all" }),
      await graphOf(["manifests/"], { depth: 0 }),
      await graphOf(["test/fixtures/spec/graphonomous.jsonc", "test/fixtures/spec/prism.jsonc"]),
    ];
    const nodes = graphs.flatMap((g) => g.nodes);
    expect([...new Set(nodes.map((n) => n.kind))].sort(), "the sample draws every node kind").toEqual([...NODE_KINDS].sort());
    const edges = graphs.flatMap((g) => g.edges);
    expect(edges.some((e) => e.unresolved && e.connection && e.source), "the sample has every optional edge field").toBe(true);

    const jsonc = model.slice(model.indexOf("```jsonc"), model.indexOf("```\n"));
    for (const key of keysOf(graphs.map(({ loops, nodes, edges, ...top }) => top))) expect(jsonc, key).toContain(`"${key}":`);
    expect(undocumented(graphs.flatMap((g) => g.loops), rows(part("loops[]"), 0))).toEqual([]);
    expect(undocumented(edges, rows(part("edges[]"), 0))).toEqual([]);
    const nodesPart = part("nodes[]");
    expect(nodesPart).toMatch(/every node has `id`, `kind`, `label` .* and `loop`/);
    for (const kind of NODE_KINDS) {
      const table = rows(nodesPart, 1).filter((_, i) => rows(nodesPart, 0)[i]!.names[0] === kind);
      expect(undocumented(nodes.filter((n) => n.kind === kind).map(({ id, kind, label, loop, ...extra }) => extra), table), kind).toEqual([]);
    }
  });

  it("counts a field as named only by its own row (near misses: a nested or longer name)", () => {
    const table = rows("| `cadence` | `{type, label}[]` | the cadence |\n| `labels` | string | |\n| `loopId`, `name` | string | |", 0);
    expect(undocumented([{ label: "x", loopId: "a", name: null, cadence: [{ type: "t", label: "l", extra: 1 }] }], table)).toEqual(["label", "cadence.extra"]);
    expect(undocumented([{ labels: "x", cadence: [] }], table)).toEqual([]);
  });
});
