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
import { diagram, expectGolden, ROOT, UPDATE_HINT } from "./helpers.js";
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
