// The README's runtime snippet type-checks in a strict project that depends on the built package,
// as a user's would: handlers get typed inputs (handle<I>()), no cast needed.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

function runtimeSnippet(): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  const snippet = blocks.find((b) => b.includes("createRuntime"));
  if (!snippet) throw new Error("README.md has no ```ts block with createRuntime");
  return snippet;
}

function typecheck(source: string): { code: number | null; output: string } {
  const dir = mkdtempSync(join(tmpdir(), "pulse-readme-"));
  try {
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "user-project", type: "module", private: true }));
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", skipLibCheck: true, types: [] }, files: ["snippet.ts"] }));
    writeFileSync(join(dir, "snippet.ts"), source);
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(ROOT, join(dir, "node_modules", "pulse"), "dir");
    const r = spawnSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", dir], { encoding: "utf8" });
    return { code: r.status, output: r.stdout + r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("the README's runtime snippet", () => {
  it("type-checks in a strict project importing the built package", () => {
    if (!existsSync(join(ROOT, "dist/src/index.d.ts"))) throw new Error("run `npm run build` first (npm test does)");
    const r = typecheck(runtimeSnippet());
    expect(r.output).toBe("");
    expect(r.code).toBe(0);
  });

  it("the near miss: without the input type the same handler does not compile (input is unknown)", () => {
    const untyped = runtimeSnippet().replace("runtime.handle<{ query: string }>(", "runtime.handle(");
    const r = typecheck(untyped);
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(/'input' is of type 'unknown'/);
  });
});
