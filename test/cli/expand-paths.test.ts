import { describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expandOperands, globToRegExp } from "../../src/cli/expand-paths.js";

function tree(): string {
  const dir = mkdtempSync(join(tmpdir(), "pulse-expand-"));
  for (const f of ["a.yaml", "b.json", "notes.txt", "sub/c.yml", "sub/deep/d.jsonc", ".hidden/e.yaml", "node_modules/f.yaml"]) {
    mkdirSync(join(dir, f, ".."), { recursive: true });
    writeFileSync(join(dir, f), "{}");
  }
  return dir;
}

describe("expandOperands", () => {
  it("walks directories for manifest extensions, sorted, skipping dot folders and node_modules", async () => {
    const cwd = tree();
    expect(await expandOperands(["."], cwd)).toEqual({ files: ["a.yaml", "b.json", "sub/c.yml", "sub/deep/d.jsonc"], unmatched: [] });
    expect((await expandOperands(["sub/"], cwd)).files).toEqual(["sub/c.yml", "sub/deep/d.jsonc"]);
  });

  it("expands quoted globs relative to the working directory, and absolute ones", async () => {
    const cwd = tree();
    expect((await expandOperands(["**/*.{yaml,yml}"], cwd)).files).toEqual(["a.yaml", "sub/c.yml"]);
    expect((await expandOperands(["sub/*"], cwd)).files).toEqual(["sub/c.yml"]);
    expect((await expandOperands([join(cwd, "sub", "**", "*.jsonc")], "/")).files).toEqual([join(cwd, "sub", "deep", "d.jsonc")]);
  });

  it("takes a named file whatever its extension, and reports what matched nothing", async () => {
    const cwd = tree();
    expect(await expandOperands(["notes.txt", "missing/*.yaml", "a.yaml", "a.yaml"], cwd)).toEqual({ files: ["notes.txt", "a.yaml"], unmatched: ["missing/*.yaml"] });
  });

  it("compiles globs: *, ?, **, [..], {a,b}", () => {
    expect(globToRegExp("a/*.yaml").test("a/x.yaml")).toBe(true);
    expect(globToRegExp("a/*.yaml").test("a/b/x.yaml")).toBe(false);
    expect(globToRegExp("a/**/x.yaml").test("a/x.yaml")).toBe(true);
    expect(globToRegExp("a/**/x.yaml").test("a/b/c/x.yaml")).toBe(true);
    expect(globToRegExp("?.[jy]ml").test("a.yml")).toBe(true);
    expect(globToRegExp("{a,b}.json").test("c.json")).toBe(false);
  });
});
