/**
 * What a directory search leaves out is said, never silent: a count on stderr, the list under
 * --verbose, and each file as a warning under --strict. And a clean compact run on a terminal
 * ends with one verdict line (piped, it prints nothing).
 */
import { describe, expect, it } from "vitest";
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runValidate, type ValidateCliOptions } from "../../src/cli/validate-command.js";
import type { CliIO } from "../../src/cli/io.js";
import { baseManifest } from "../helpers/manifests.js";

const ROOT = resolve(import.meta.dirname, "../..");

function project(): string {
  const dir = mkdtempSync(join(tmpdir(), "pulse-validate-dir-"));
  mkdirSync(join(dir, "loops", "sub"), { recursive: true });
  copyFileSync(join(ROOT, "manifests/examples/listener.loop.yaml"), join(dir, "loops", "listener.loop.yaml"));
  // A manifest that lost its identifying keys in an edit, and an ordinary JSON file.
  writeFileSync(join(dir, "loops", "sub", "broken.yaml"), "phases: [\n");
  writeFileSync(join(dir, "loops", "package.json"), '{"name": "x"}\n');
  writeFileSync(join(dir, "loops", "notes.txt"), "not JSON or YAML\n");
  writeFileSync(join(dir, "clean.json"), JSON.stringify(baseManifest(), null, 2));
  return dir;
}

async function run(paths: string[], opts: ValidateCliOptions, tty = false) {
  const out: string[] = [];
  const err: string[] = [];
  const cwd = project();
  const io: CliIO = { stdout: (t) => void out.push(t), stderr: (t) => void err.push(t), readStdin: async () => new Uint8Array(), env: {}, stdoutIsTTY: tty, cwd };
  const code = await runValidate(paths, opts, io);
  return { code, stdout: out.join(""), stderr: err.join("") };
}

describe("a directory search", () => {
  it("says in one stderr line how many JSON/YAML files it skipped and why", async () => {
    const r = await run(["loops"], { format: "compact" });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("pulse-validate: skipped 2 JSON/YAML files found in a directory that name neither loop_id nor pulse_protocol_version (--verbose lists them)\n");
    expect(r.stdout).not.toContain("package.json");
  });

  it("lists them under --verbose", async () => {
    const r = await run(["loops"], { format: "compact", verbose: true });
    expect(r.stderr.split("\n")).toEqual([
      "pulse-validate: skipped 2 JSON/YAML files found in a directory that name neither loop_id nor pulse_protocol_version:",
      "  loops/package.json: names neither loop_id nor pulse_protocol_version",
      "  loops/sub/broken.yaml: names neither loop_id nor pulse_protocol_version",
      "",
    ]);
  });

  it("reports each skipped file as a warning under --strict, so --fail-on warning fails the run", async () => {
    const r = await run(["loops"], { format: "compact", strict: true });
    expect(r.stdout).toContain("loops/sub/broken.yaml:1:1: warning: skipped: found in a directory, this file names neither loop_id nor pulse_protocol_version");
    expect(r.stdout).toContain("loops/package.json:1:1: warning: skipped");
    expect(r.stdout).toContain("[input/not-a-manifest]");
    expect(r.code).toBe(0);
    expect((await run(["loops"], { format: "compact", strict: true, failOn: "warning" })).code).toBe(1);
  });

  it("the near misses: nothing is said when nothing was skipped, or when the files were named", async () => {
    const clean = await run(["loops/listener.loop.yaml"], { format: "compact" });
    expect(clean).toMatchObject({ code: 0, stderr: "" });
    const named = await run(["loops/sub/broken.yaml"], { format: "compact", strict: true });
    expect(named.code).toBe(1);
    expect(named.stdout).toMatch(/broken\.yaml:1:9: error: this list is never closed.*\[yaml\/syntax\]/);
    expect(named.stdout).not.toContain("skipped");
  });

  it("is quiet about skipped files under --quiet", async () => {
    expect((await run(["loops"], { format: "compact", quiet: true })).stderr).toBe("");
  });
});

describe("compact output", () => {
  it("ends a clean run with one verdict line on a terminal", async () => {
    expect((await run(["clean.json"], { format: "compact" }, true)).stdout).toBe("✔ 1 file valid\n");
  });

  it("prints nothing for a clean run when piped (one line per diagnostic, nothing else)", async () => {
    expect((await run(["clean.json"], { format: "compact" }, false)).stdout).toBe("");
  });

  it("counts what it printed on a terminal", async () => {
    const r = await run(["loops/sub/broken.yaml"], { format: "compact" }, true);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("✖ 1 error in 1 file (0 valid)");
  });
});
