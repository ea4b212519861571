/**
 * Using pulse from another project, as the README says: the packed tarball (`npm pack`) and a
 * git URL, each installed into a fresh project with npm, offline (from the cache `npm ci`
 * filled), then every export path imported, type-checked by a strict TypeScript project, and
 * every bin run.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string; bin: Record<string, string>; exports: Record<string, string> };
const dirs: string[] = [];
// An installed package per directory: removing them can outlast a hook's default 30 s on a loaded machine.
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true, maxRetries: 3 })));
}, 180_000);

function sh(cmd: string, args: string[], cwd: string, timeout = 300_000) {
  // npm's own variables (set when this runs under `npm test`) would point npm at this checkout.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/.test(k)));
  const r = spawnSync(cmd, args, { cwd, env, encoding: "utf8", timeout });
  return { code: r.status, out: `${r.stdout}${r.stderr}`, stdout: r.stdout };
}

/**
 * A project that depends on pulse through `spec`, with a lockfile that pins pulse's dependencies
 * as this checkout's lockfile does: `npm ci --offline` then installs from npm's cache alone (an
 * unlocked install would ask the registry for each package's version list, which no cache keeps).
 */
function freshProject(spec: string): string {
  const dir = mkdtempSync(join(tmpdir(), "pulse-consumer-"));
  dirs.push(dir);
  const manifest = { name: "consumer", version: "1.0.0", private: true, type: "module", dependencies: { pulse: spec } };
  writeFileSync(join(dir, "package.json"), JSON.stringify(manifest, null, 2));
  const ours = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, { dev?: boolean; devOptional?: boolean }> };
  const runtime = Object.entries(ours.packages).filter(([path, entry]) => path.startsWith("node_modules/") && !entry.dev && !entry.devOptional);
  const lock = {
    name: "consumer",
    version: "1.0.0",
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { name: "consumer", version: "1.0.0", dependencies: { pulse: spec } },
      "node_modules/pulse": { version: pkg.version, resolved: spec, license: "Apache-2.0", dependencies: (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: object }).dependencies, bin: pkg.bin, engines: { node: ">=20.19" } },
      ...Object.fromEntries(runtime),
    },
  };
  writeFileSync(join(dir, "package-lock.json"), JSON.stringify(lock, null, 2));
  return dir;
}

const PROGRAM = `
import { createRuntime, parseSourceText, validateSources, type Diagnostic } from "pulse";
import { createHost } from "pulse/host";
import { inMemorySubstrates } from "pulse/adapters";

const source = parseSourceText("loop.yaml", "loop_id: a.b\\n");
const diagnostics: Diagnostic[] = validateSources([source])[0]!.diagnostics;
const runtime = await createRuntime();
const host = await createHost();
await host.stop();
console.log(JSON.stringify({ rules: diagnostics.map((d) => d.rule), runtime: typeof runtime.load, slots: Object.keys(inMemorySubstrates()).sort() }));
`;

/** Imports every export path, type-checks a strict program against them, runs it and every bin. */
function checkInstalled(dir: string): void {
  const installed = join(dir, "node_modules", "pulse");
  expect(existsSync(join(installed, "dist", "bin", "pulse.mjs"))).toBe(true);
  for (const specifier of Object.keys(pkg.exports).map((k) => (k === "." ? "pulse" : `pulse/${k.slice(2)}`))) {
    const r = sh(process.execPath, ["--input-type=module", "-e", `const m = await import(${JSON.stringify(specifier)}); if (Object.keys(m).length === 0) process.exit(1);`], dir);
    expect(r, specifier).toMatchObject({ code: 0 });
  }
  // A strict TypeScript project compiles against the shipped declarations.
  writeFileSync(join(dir, "main.ts"), PROGRAM);
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", outDir: "out", skipLibCheck: false, types: ["node"], typeRoots: [join(ROOT, "node_modules", "@types")] }, files: ["main.ts"] }));
  const tsc = sh(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], dir);
  expect(tsc.out).toBe("");
  const run = sh(process.execPath, ["out/main.js"], dir);
  expect(run.code, run.out).toBe(0);
  expect(JSON.parse(run.stdout)).toMatchObject({ rules: ["schema/required"], runtime: "function", slots: ["audit", "auth", "memory", "policy", "time"] });
  // Every bin, through npx as a user runs it, and one real job each.
  for (const bin of Object.keys(pkg.bin)) {
    const r = sh("npx", ["--offline", bin, "--version"], dir);
    expect(r.stdout.trim(), `${bin}: ${r.out}`).toBe(pkg.version);
  }
  // The README's offline session demo names the scripted driver's example: it ships too.
  expect(existsSync(join(installed, "examples", "coding", "session.json"))).toBe(true);
  // And the agent's offline demo: its script and its home's actions.
  expect(existsSync(join(installed, "examples", "agent", "welcome.json"))).toBe(true);
  expect(existsSync(join(installed, "examples", "agent", "home", "actions", "word-count", "SKILL.md"))).toBe(true);
  const manifests = join(installed, "manifests");
  expect(sh("npx", ["--offline", "pulse-validate", "--format", "compact", manifests], dir).code).toBe(0);
  expect(sh("npx", ["--offline", "pulse-diagram", join(manifests, "examples", "hello.loop.yaml"), "-f", "dot"], dir).out).toContain("digraph");
  expect(sh("npx", ["--offline", "pulse", "run", join(manifests, "examples"), "--once"], dir).code).toBe(0);
  expect(sh("npx", ["--offline", "pulse-conform", "--only", "12"], dir).out).toMatch(/12 manifest_validates_against_schema\s+passed/);
}

describe("pulse as a dependency of another project", () => {
  it("installs from the packed tarball (npm pack), offline, with every export path and bin working", () => {
    if (!existsSync(join(ROOT, "dist", "bin", "pulse.mjs"))) throw new Error("run `npm run build` first (npm test does)");
    const out = mkdtempSync(join(tmpdir(), "pulse-pack-"));
    dirs.push(out);
    // --ignore-scripts: dist/ is already built; prepare would rebuild it under the running tests.
    const packed = sh("npm", ["pack", "--ignore-scripts", "--pack-destination", out, "--json"], ROOT);
    expect(packed.code, packed.out).toBe(0);
    const tarball = join(out, `pulse-${pkg.version}.tgz`);
    expect(existsSync(tarball)).toBe(true);
    const dir = freshProject(`file:${tarball}`);
    const install = sh("npm", ["ci", "--offline", "--no-audit", "--no-fund"], dir);
    expect(install.code, install.out).toBe(0);
    checkInstalled(dir);
  }, 600_000);

  it("installs from a git URL (building itself on install, as npm does for git dependencies), offline", () => {
    const head = sh("git", ["rev-parse", "HEAD"], ROOT);
    expect(head.code).toBe(0);
    const dir = freshProject(`git+file://${ROOT}#${head.out.trim()}`);
    const install = sh("npm", ["ci", "--offline", "--no-audit", "--no-fund"], dir, 900_000);
    expect(install.code, install.out).toBe(0);
    checkInstalled(dir);
  }, 1_200_000);
});
