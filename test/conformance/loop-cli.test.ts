/**
 * `pulse-conform --loop`: every shipped manifest certified on pulse's runtime (the directory is
 * enumerated, so manifests added later are certified too), user handler modules in both forms,
 * a loop whose handler breaks its feedback path, and the mistakes a user makes. Runs the built bin.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { ROOT, runBin } from "../cli/run-bin.js";

const HANDLERS = join(ROOT, "test/conformance/fixtures/handlers");
const HELLO = "manifests/examples/hello.loop.yaml";
const tmp = () => mkdtempSync(join(tmpdir(), "pulse-conform-loop-"));
const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"));

/** Every manifest under manifests/, at any depth: what the repository ships. */
function shippedManifests(dir = join(ROOT, "manifests")): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return shippedManifests(path);
      if (!/\.(ya?ml|jsonc?)$/.test(name)) return [];
      const text = readFileSync(path, "utf8");
      return /\bloop_id\b/.test(text) ? [relative(ROOT, path)] : [];
    });
}

const validateReport = (() => {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  return ajv.compile(readJson(join(ROOT, "schema/conformance/report.v1.json")));
})();

describe("pulse-conform --loop certifies every shipped manifest", () => {
  const manifests = shippedManifests();
  it("finds them all, wherever they are under manifests/", () => {
    expect(manifests.length).toBeGreaterThanOrEqual(7);
    expect(manifests).toContain("manifests/examples/hello.loop.yaml");
  });

  it.each(manifests)("%s", (file) => {
    const dir = tmp();
    const r = runBin("pulse-conform", ["--loop", file, "--report", join(dir, "r.json"), "--junit", join(dir, "j.xml"), "--markdown", join(dir, "r.md"), "--badge", join(dir, "b.json")]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const report = readJson(join(dir, "r.json"));
    expect(validateReport(report), JSON.stringify(validateReport.errors)).toBe(true);
    const loopId = (parse(readFileSync(join(ROOT, file), "utf8")) as { loop_id: string }).loop_id;
    expect(report).toMatchObject({ verdict: "conformant", certification: false, loop: { loop_id: loopId, manifest: file, handlers: "recording" } });
    expect(report.test_results.map((t: { number: number }) => t.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    // The report says which tests applied; the others are not_applicable with a reason, never passed.
    const applied = report.test_results.filter((t: { status: string }) => t.status !== "not_applicable");
    expect(report.loop.applied).toEqual(applied.map((t: { number: number }) => t.number));
    expect(applied.every((t: { status: string }) => t.status === "passed")).toBe(true);
    for (const t of report.test_results.filter((t: { status: string }) => t.status === "not_applicable")) expect(t.reason).toMatch(/\w/);
    expect(report.loop.applied).toContain(12);
    expect(report.summary.not_applicable).toBe(12 - applied.length);
    const tail = r.stdout.trimEnd().split("\n").slice(-3);
    expect(tail[0]).toMatch(new RegExp(`^conformant: loop ${loopId.replace(".", "\\.")} \\S+ on pulse \\S+, judged on the ${applied.length} tests? that apply to it`));
    expect(tail[2]).toBe(`${applied.length} passed, 0 failed`);
    expect(readFileSync(join(dir, "j.xml"), "utf8")).toMatch(new RegExp(`<testsuite [^>]*tests="12" failures="0" errors="0" skipped="${12 - applied.length}"`));
    expect(readJson(join(dir, "b.json"))).toEqual({ schemaVersion: 1, label: "PULSE v0.1 loop", message: `conformant ${applied.length}/${applied.length} applicable`, color: "brightgreen" });
    expect(readFileSync(join(dir, "r.md"), "utf8")).toMatch(/^# PULSE conformance: loop \S+ /);
  }, 60_000);
});

describe("pulse-conform --loop with the loop's own handlers", () => {
  it("takes a module of handlers by phase id; the phases it lacks run the recording handlers, and the report says which", () => {
    const dir = tmp();
    const r = runBin("pulse-conform", ["--loop", HELLO, "--handlers", join(HANDLERS, "hello-handlers.mjs"), "--report", join(dir, "r.json")]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^phases without a handler in .*hello-handlers\.mjs, played by pulse's recording handlers: learn$/m);
    expect(readJson(join(dir, "r.json")).loop).toMatchObject({ handlers: join(HANDLERS, "hello-handlers.mjs"), recording_phases: ["learn"] });
  });

  it("takes a module whose default export registers handlers by kind", () => {
    const dir = tmp();
    const r = runBin("pulse-conform", ["--loop", HELLO, "--handlers", join(HANDLERS, "register-handlers.mjs"), "--report", join(dir, "r.json")]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(readJson(join(dir, "r.json")).loop.recording_phases).toEqual(["decide", "learn"]);
  });

  it("reports a loop whose learn handler always fails as nonconformant, naming the check", () => {
    const r = runBin("pulse-conform", ["--loop", HELLO, "--handlers", join(HANDLERS, "failing-learn.mjs")]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^✗  2 feedback_path_cannot_be_skipped +failed/m);
    expect(r.stdout).toMatch(/FAIL control: in an iteration where an act ran first, learn completes/);
    expect(r.stdout).toMatch(/^nonconformant: loop examples\.hello/m);
    expect(r.stdout).toMatch(/repro: pulse-conform --loop manifests\/examples\/hello\.loop\.yaml --handlers \S+failing-learn\.mjs --only 2 --seed 1$/m);
  });

  it.each([
    [["--handlers", join(HANDLERS, "not-handlers.mjs")], /^pulse-conform: --handlers \S+not-handlers\.mjs: handlers\.fetch must be a function \(a phase handler\), got number\n$/],
    [["--handlers", join(HANDLERS, "missing.mjs")], /^pulse-conform: --handlers \S+missing\.mjs: cannot find the module/],
    [["--input", "{nope"], /^pulse-conform: --input takes JSON/],
    [["--driver", "node adapter.js"], /^pulse-conform: --loop certifies a loop on pulse's own runtime: --driver does not apply to it/],
    [["--manifest", "manifests/"], /--loop certifies one loop; --manifest adds manifests/],
  ])("refuses %j as a usage error (exit 4), before any test", (args, message) => {
    const r = runBin("pulse-conform", ["--loop", HELLO, ...args]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe("");
  });

  it("refuses an invalid manifest and the loop flags without --loop (exit 4)", () => {
    const file = join(tmp(), "broken.yaml");
    writeFileSync(file, readFileSync(join(ROOT, HELLO), "utf8").replace("to_phase: fetch", "to_phase: nowhere"));
    const invalid = runBin("pulse-conform", ["--loop", file]);
    expect(invalid.code).toBe(4);
    expect(invalid.stderr).toBe(`pulse-conform: --loop ${file} is not a valid manifest (pulse validate ${file} shows why); only a valid loop can be certified\n`);
    const stray = runBin("pulse-conform", ["--handlers", join(HANDLERS, "hello-handlers.mjs")]);
    expect(stray.code).toBe(4);
    expect(stray.stderr).toBe("pulse-conform: --handlers goes with --loop (certifying a loop), not with a runtime's certification\n");
  });
});
