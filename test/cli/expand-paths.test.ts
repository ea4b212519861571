import { describe, expect, it } from "vitest";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expandOperands, globToRegExp } from "../../src/cli/expand-paths.js";

function tree(): string {
  const dir = mkdtempSync(join(tmpdir(), "pulse-expand-"));
  for (const f of ["a.yaml", "b.json", "notes.txt", "sub/c.yml", "sub/deep/d.jsonc", ".hidden/e.yaml", "node_modules/f.yaml"]) {
    mkdirSync(join(dir, f, ".."), { recursive: true });
    writeFileSync(join(dir, f), f.endsWith(".json") || f.endsWith(".jsonc") ? '{ "loop_id": "a.b" }' : "loop_id: a.b\n");
  }
  return dir;
}

describe("expandOperands", () => {
  it("walks directories for manifest extensions, sorted, skipping dot folders and node_modules", async () => {
    const cwd = tree();
    expect(await expandOperands(["."], cwd)).toEqual({ files: ["a.yaml", "b.json", "sub/c.yml", "sub/deep/d.jsonc"], unmatched: [], skipped: [] });
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
    expect(await expandOperands(["notes.txt", "missing/*.yaml", "a.yaml", "a.yaml"], cwd)).toEqual({ files: ["notes.txt", "a.yaml"], unmatched: ["missing/*.yaml"], skipped: [] });
  });

  it("takes from a directory only the files that name pulse_protocol_version or loop_id; named files always", async () => {
    const cwd = tree();
    writeFileSync(join(cwd, "package.json"), '{ "name": "x", "scripts": { "loop_id": "not a key of an object at the top" } }');
    writeFileSync(join(cwd, "diagram.json"), '{ "version": 1, "loops": [{ "id": "a.b" }] }');
    writeFileSync(join(cwd, "report.yaml"), "files: []\n");
    writeFileSync(join(cwd, "min.json"), '{"pulse_protocol_version":"0.1"}');
    writeFileSync(join(cwd, "quoted.yaml"), "'loop_id': a.b\n");
    const found = await expandOperands(["."], cwd);
    expect(found.files).toEqual(["a.yaml", "b.json", "min.json", "package.json", "quoted.yaml", "sub/c.yml", "sub/deep/d.jsonc"]);
    expect(found.skipped).toEqual(["diagram.json", "report.yaml"]);
    expect((await expandOperands(["diagram.json"], cwd)).files).toEqual(["diagram.json"]);
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
