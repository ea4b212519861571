/**
 * runValidate in-process: the exit code, what reaches stderr, and the GitHub step summary, for
 * the cases where a run fails (or must not fail) for a reason its report alone would not show.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runValidate, type ValidateCliOptions } from "../../src/cli/validate-command.js";
import type { CliIO } from "../../src/cli/io.js";

const ROOT = resolve(import.meta.dirname, "../..");
/** Valid, with 3 warnings and 1 info. */
const PRISM = "manifests/prism.benchmark.yaml";
const tmp = () => mkdtempSync(join(tmpdir(), "pulse-validate-"));

async function run(paths: string[], opts: ValidateCliOptions, env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), readStdin: async () => new Uint8Array(), env, stdoutIsTTY: false, cwd: ROOT };
  const code = await runValidate(paths, opts, io);
  return { code, stdout: out.join(""), stderr: err.join("") };
}

describe("--max-warnings", () => {
  it("says on stderr why the run failed, and the pretty verdict does not claim success", async () => {
    const over = await run([PRISM], { format: "pretty", maxWarnings: "2" });
    expect(over.code).toBe(1);
    expect(over.stderr).toBe("pulse-validate: 3 warnings, more than --max-warnings 2\n");
    expect(over.stdout.trimEnd().split("\n").at(-1)).toBe("✖ 3 warnings, 1 info in 1 file (1 valid): more than --max-warnings 2");
    // The near miss: exactly the budget passes, silently.
    const within = await run([PRISM], { format: "pretty", maxWarnings: "3" });
    expect(within).toMatchObject({ code: 0, stderr: "" });
    expect(within.stdout.trimEnd().split("\n").at(-1)).toBe("✔ 1 file valid (3 warnings, 1 info)");
  });

  it("is not silent under --quiet, which hides the warnings it counts", async () => {
    expect(await run([PRISM], { quiet: true, maxWarnings: "0" })).toEqual({ code: 1, stdout: "", stderr: "pulse-validate: 3 warnings, more than --max-warnings 0\n" });
    expect(await run([PRISM], { quiet: true })).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  it("is an explicit gate that --fail-on never does not switch off", async () => {
    expect(await run([PRISM], { failOn: "never", maxWarnings: "0", format: "compact" })).toMatchObject({ code: 1, stderr: "pulse-validate: 3 warnings, more than --max-warnings 0\n" });
    expect(await run([PRISM], { failOn: "never", maxWarnings: "3", format: "compact" })).toMatchObject({ code: 0, stderr: "" });
  });
});

describe("--fail-on warning", () => {
  it("explains a failure caused by warnings alone, even under --quiet", async () => {
    expect(await run([PRISM], { failOn: "warning", quiet: true })).toEqual({ code: 1, stdout: "", stderr: "pulse-validate: 3 warnings, failing the run under --fail-on warning\n" });
    const pretty = await run([PRISM], { failOn: "warning", format: "pretty" });
    expect(pretty.stdout.trimEnd().split("\n").at(-1)).toBe("✖ 3 warnings, 1 info in 1 file (1 valid): --fail-on warning");
  });

  it("adds nothing when errors already explain the failure", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "bad.yaml"), readFileSync(join(ROOT, PRISM), "utf8").replace(/^loop_id: .*$/m, "loop_id: 42"));
    const r = await run([join(dir, "bad.yaml")], { failOn: "warning", format: "compact" });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/: error: /);
    expect(r.stderr).toBe("");
  });
});

describe("the GitHub step summary", () => {
  const actions = (summary: string) => ({ GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summary });

  it("cannot hide the result when it cannot be written: a warning, and the real exit code", async () => {
    const clean = await run([PRISM], {}, actions("/nonexistent-dir/summary.md"));
    expect(clean.code).toBe(0);
    expect(clean.stderr).toBe("pulse-validate: cannot write the step summary to /nonexistent-dir/summary.md: no such directory\n");
    expect(clean.stdout).toMatch(/^::warning file=manifests\/prism\.benchmark\.yaml,/m);
    const failing = await run([PRISM], { maxWarnings: "0" }, actions("/nonexistent-dir/summary.md"));
    expect(failing.code).toBe(1);
    expect(failing.stderr).toContain("cannot write the step summary");
    // The near miss: a writable summary file is appended to, with nothing on stderr.
    const summary = join(tmp(), "summary.md");
    writeFileSync(summary, "previous step\n");
    expect(await run([PRISM], {}, actions(summary))).toMatchObject({ code: 0, stderr: "" });
    expect(readFileSync(summary, "utf8")).toMatch(/^previous step\n### pulse-validate\n\n✔ 1 file valid \(3 warnings, 1 info\)\n/);
  });

  it("is written under Actions whatever the format, so a SARIF upload run gets one too", async () => {
    const dir = tmp();
    const summary = join(dir, "summary.md");
    const r = await run([PRISM], { format: "sarif", output: join(dir, "pulse.sarif"), maxWarnings: "2" }, actions(summary));
    expect(r.code).toBe(1);
    expect(JSON.parse(readFileSync(join(dir, "pulse.sarif"), "utf8")).version).toBe("2.1.0");
    // A failing gate shows in the summary's verdict as well.
    expect(readFileSync(summary, "utf8")).toContain("✖ 3 warnings, 1 info in 1 file (1 valid): more than --max-warnings 2\n");
    // The near miss: outside Actions a stray GITHUB_STEP_SUMMARY is left alone by the other formats.
    const outside = join(dir, "outside.md");
    await run([PRISM], { format: "sarif", output: join(dir, "again.sarif") }, { GITHUB_STEP_SUMMARY: outside });
    expect(existsSync(outside)).toBe(false);
  });
});
