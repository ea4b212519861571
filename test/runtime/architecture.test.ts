// The house style's rules for the runtime, checked on the import graph of the sources: the runtime
// depends on the contracts only (adapters are bound where the program is assembled), and the
// runtime, the host, connections, transports and adapters have no import circles.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = process.cwd();

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== "generated") out.push(...files(path));
    } else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) out.push(relative(ROOT, path));
  }
  return out;
}

/** Every relative import of a module (type-only ones too: a circle of types is still a circle). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"|import\(\s*"(\.[^"]+)"\s*\)/g)) {
    const spec = (m[1] ?? m[2]) as string;
    out.push(normalize(join(dirname(file), spec.replace(/\.js$/, ".ts"))));
  }
  return out;
}

const AREA = ["src/runtime", "src/host", "src/connections", "src/transports", "src/substrates", "adapters"];
const graph = new Map<string, string[]>();
for (const dir of AREA) for (const f of files(join(ROOT, dir))) graph.set(f, importsOf(f));

function cycles(): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, 1);
    stack.push(f);
    for (const dep of graph.get(f) ?? []) {
      if (!graph.has(dep)) continue;
      if (state.get(dep) === 1) found.push([...stack.slice(stack.indexOf(dep)), dep]);
      else if (state.get(dep) === undefined) visit(dep);
    }
    stack.pop();
    state.set(f, 2);
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return found;
}

describe("the runtime's architecture", () => {
  it("the runtime imports no adapter and nothing of the host, connections, transports or CLI", () => {
    const offending = [...graph].filter(([f]) => f.startsWith("src/runtime/")).flatMap(([f, deps]) => deps.filter((d) => /^(adapters|src\/(host|connections|transports|cli))\//.test(d)).map((d) => `${f} -> ${d}`));
    expect(offending).toEqual([]);
  });

  it("has no import circles among the runtime, host, connections, transports, substrates and adapters", () => {
    expect(cycles().map((c) => c.join(" -> "))).toEqual([]);
  });

  it("keeps modules under ~400 lines", () => {
    const long = [...graph.keys()].map((f) => [f, readFileSync(f, "utf8").split("\n").length] as const).filter(([, n]) => n > 420);
    expect(long).toEqual([]);
  });
});
