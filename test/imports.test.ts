/**
 * The module graph a new engineer reads: no import circles, and the layers point one way (the
 * grammars know nothing of the validator; reporters know nothing of each other's internals).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "generated" ? [] : sources(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/** Relative imports and re-exports (type-only ones too: they tie the modules just the same). */
function graph(dirs: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of dirs.flatMap((d) => sources(join(ROOT, d)))) {
    const text = readFileSync(file, "utf8");
    const deps: string[] = [];
    for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;'"]*?from\s+["'](\.{1,2}\/[^"']+)["']/g)) {
      const target = resolve(dirname(file), m[1]!.replace(/\.js$/, ".ts"));
      if (existsSync(target)) deps.push(relative(ROOT, target));
    }
    out.set(relative(ROOT, file), deps);
  }
  return out;
}

function cycles(g: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string) => {
    state.set(node, "open");
    stack.push(node);
    for (const dep of g.get(node) ?? []) {
      if (state.get(dep) === "open") found.push(stack.slice(stack.indexOf(dep)));
      else if (!state.has(dep)) visit(dep);
    }
    stack.pop();
    state.set(node, "done");
  };
  for (const node of g.keys()) if (!state.has(node)) visit(node);
  return found;
}

describe("the module graph", () => {
  const g = graph(["src", "adapters", "conformance"]);

  it("has no import circle", () => {
    expect(cycles(g)).toEqual([]);
  });

  it("finds a circle when there is one (the check can fail)", () => {
    expect(cycles(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]]]))).toEqual([["a", "b", "c"]]);
  });

  it("keeps the grammars free of the validator, the CLI and the runtime", () => {
    const outward = [...g].filter(([f]) => f.startsWith("src/grammar/")).flatMap(([f, deps]) => deps.filter((d) => !d.startsWith("src/grammar/") && !d.startsWith("src/source/intern")).map((d) => `${f} -> ${d}`));
    expect(outward).toEqual([]);
  });

  it("keeps parsing (src/source) and reporting (src/format) free of the CLI, the runtime and the diagrams", () => {
    const outward = [...g]
      .filter(([f]) => f.startsWith("src/source/") || f.startsWith("src/format/"))
      .flatMap(([f, deps]) => deps.filter((d) => /^src\/(cli|runtime|host|diagram)\//.test(d)).map((d) => `${f} -> ${d}`));
    expect(outward).toEqual([]);
  });
});
