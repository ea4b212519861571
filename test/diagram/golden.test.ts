/**
 * The Mermaid, DOT and JSON of the shipped manifests are compared with committed files, so any
 * change in what users get is visible in review. SVG is not compared here: its bytes follow the
 * Graphviz build (svg.test.ts checks its content instead).
 */
import { describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EXTENSIONS, GOLDEN_CASES } from "./cases.js";
import { diagram, expectGolden, GOLDEN_DIR } from "./helpers.js";
import { checkMermaid } from "./mermaid-check.js";

describe("golden files of the shipped manifests", () => {
  for (const c of GOLDEN_CASES) {
    for (const format of c.formats) {
      it(`${c.name}.${EXTENSIONS[format]}: pulse-diagram ${c.args.join(" ")} --format ${format}`, async () => {
        const r = await diagram([...c.args, "--format", format]);
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
        expectGolden(join(GOLDEN_DIR, `${c.name}.${EXTENSIONS[format]}`), r.stdout);
        if (format === "mermaid") expect(checkMermaid(r.stdout).problems).toEqual([]);
        if (format === "json") expect(() => JSON.parse(r.stdout)).not.toThrow();
      });
    }
  }

  it("has no stale golden files (each one belongs to a case above)", () => {
    const expected = new Set(GOLDEN_CASES.flatMap((c) => c.formats.map((f) => `${c.name}.${EXTENSIONS[f]}`)));
    expect(readdirSync(GOLDEN_DIR).filter((f) => !expected.has(f))).toEqual([]);
  });
});

describe("regenerating golden files is a deliberate act", () => {
  const dir = () => mkdtempSync(join(tmpdir(), "pulse-golden-"));

  it("a missing golden fails and is not created", () => {
    const file = join(dir(), "new.mmd");
    expect(() => expectGolden(file, "flowchart LR\n", {})).toThrow(/does not exist; create it deliberately with UPDATE_GOLDEN=1/);
    expect(existsSync(file)).toBe(false);
  });

  it("a different output fails and leaves the golden as it was", () => {
    const file = join(dir(), "old.mmd");
    writeFileSync(file, "flowchart LR\n");
    expect(() => expectGolden(file, "flowchart TB\n", {})).toThrow(/differs/);
    expect(readFileSync(file, "utf8")).toBe("flowchart LR\n");
  });

  it("only UPDATE_GOLDEN=1 writes, and an equal output passes untouched", () => {
    const file = join(dir(), "old.mmd");
    writeFileSync(file, "flowchart LR\n");
    expect(() => expectGolden(file, "flowchart LR\n", {})).not.toThrow();
    expect(() => expectGolden(file, "flowchart TB\n", { UPDATE_GOLDEN: "true" })).toThrow(/differs/);
    expectGolden(file, "flowchart TB\n", { UPDATE_GOLDEN: "1" });
    expect(readFileSync(file, "utf8")).toBe("flowchart TB\n");
  });
});
