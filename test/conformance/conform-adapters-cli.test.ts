/**
 * pulse-conform against adapters given in each way a user gives them (--driver, after --), and
 * against adapters that hang or die while starting: the run always ends, with the code and the
 * evidence a user acts on. Runs the built bin (`npm run build` first).
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, runBin } from "../cli/run-bin.js";
import { readDoc } from "../format/markdown-blocks.js";
import { adapterProcess, isRunning, runningInGroup } from "./processes.js";

const MISBEHAVING = join(ROOT, "test/conformance/fixtures/misbehaving-adapter.mjs");
const STDIO_JS = "dist/conformance/adapters/pulse/stdio.js";
const tmp = () => mkdtempSync(join(tmpdir(), "pulse-conform-"));
const readJson = (file: string) => JSON.parse(readFileSync(file, "utf8"));

describe("a hung adapter", () => {
  it("ends the run with exit 3 in bounded time, and no adapter process survives it", () => {
    const began = Date.now();
    // The bound is the point: before, the harness waited forever on the orphaned adapter's pipes.
    const r = spawnSync(process.execPath, [join(ROOT, "dist/bin/pulse-conform.mjs"), "--driver", `node "${MISBEHAVING}" hang`], { cwd: ROOT, encoding: "utf8", timeout: 40_000 });
    expect(r.signal, "pulse-conform never exited").toBeNull();
    expect(r.status).toBe(3);
    expect(Date.now() - began).toBeLessThan(25_000); // the 15 s call timeout, then 2 s of grace
    expect(r.stderr).toMatch(/driver failure: the adapter did not answer configure within 15000 ms/);
    expect(r.stderr).toMatch(/\| misbehaving-adapter \(hang\): not answering configure/);
    const adapter = adapterProcess(r.stderr);
    expect(adapter).toBeDefined();
    expect(isRunning(adapter!.pid)).toBe(false);
    expect(runningInGroup(adapter!.pgid)).toEqual([]);
  }, 45_000);
});

describe("an adapter that floods stdout", () => {
  it("ends the run with exit 3 and a message naming the bound, never a RangeError or a verdict", () => {
    const r = spawnSync(process.execPath, [join(ROOT, "dist/bin/pulse-conform.mjs"), "--driver", `node "${MISBEHAVING}" flood`], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    expect(r.signal, "pulse-conform never exited").toBeNull();
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/^pulse-conform: driver failure: the adapter wrote more than 16 MiB on stdout without ending the line/m);
    expect(r.stderr).not.toMatch(/RangeError|\n\s+at /);
    expect(r.stdout).not.toMatch(/passed|nonconformant/);
    const adapter = adapterProcess(r.stderr);
    expect(adapter).toBeDefined();
    expect(isRunning(adapter!.pid)).toBe(false);
  }, 65_000);
});

describe("what an adapter leaves behind", () => {
  it.each(["setsid", "daemon"])("a grandchild out of the adapter's process group (%s) does not outlive the run", (mode) => {
    const report = join(tmp(), "r.json");
    const r = runBin("pulse-conform", ["--only", "12", "--report", report, "--", "node", MISBEHAVING, mode]);
    expect(r.code, r.stderr).toBe(2); // the fixture loads no manifest: test 12 errors, the run ends normally
    const tail = (readJson(report).test_results[0].evidence.stderr_tail as string[]).join("\n");
    const pid = Number(/grandchild \(pid (\d+)\)/.exec(tail)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(isRunning(pid)).toBe(false);
  });
});

describe("--evidence driver", () => {
  it("against an adapter that cannot inject faults is a usage error (exit 4) naming the capability", () => {
    const r = runBin("pulse-conform", ["--evidence", "driver", "--only", "12", "--", "node", MISBEHAVING, "rebind-only"]);
    expect(r.code).toBe(4);
    expect(r.stderr).toBe('pulse-conform: --evidence driver needs the adapter\'s "fault-injection" capability, and hello.capabilities.substrates offers "rebind": leave out --evidence driver to observe through the recording substrate\n');
    expect(r.stdout).toBe("");
    // Near miss: the same adapter without the flag is observed through the recording substrate.
    const plain = runBin("pulse-conform", ["--only", "12", "--", "node", MISBEHAVING, "rebind-only"]);
    expect(plain.code).toBe(1); // judged: the fixture loads no manifest, so test 12 fails
    expect(plain.stdout).toMatch(/evidence recording-substrate/);
  });

  it("against an adapter that offers fault injection runs on the driver's evidence", () => {
    const r = runBin("pulse-conform", ["--evidence", "driver", "--only", "2", "--", "node", STDIO_JS]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toMatch(/evidence driver-fault-injection/);
    expect(r.stdout).toMatch(/^✓ +2 feedback_path_cannot_be_skipped +passed/m);
  });
});

describe("an adapter that fails while starting", () => {
  it.each([
    ["exits at once, saying why on stderr", `sh -c 'echo boom: no config >&2; exit 7'`, /the adapter exited \(code 7\)/, "  | boom: no config"],
    ["names a script that does not exist", `node ${join(ROOT, "nosuch-adapter.mjs")}`, /the adapter exited \(code 1\)/, "Cannot find module"],
  ])("%s: exit 3 with the adapter's stderr tail", (_, command, message, tail) => {
    const r = runBin("pulse-conform", ["--driver", command]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/the adapter's last stderr lines:/);
    expect(r.stderr).toContain(tail);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).not.toMatch(/passed/);
  });

  it("a quiet one that exits says only that (no empty tail section)", () => {
    const r = runBin("pulse-conform", ["--driver", "exit 9"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/the adapter exited \(code 9\)/);
    expect(r.stderr).not.toMatch(/last stderr lines/);
  });
});

describe("the adapter's command after --", () => {
  // A path with a space in it: each word after -- must reach the adapter whole.
  function spacedAdapter(): string {
    const dir = tmp();
    symlinkSync(join(ROOT, "dist"), join(dir, "built dist"));
    return join(dir, "built dist/conformance/adapters/pulse/stdio.js");
  }

  it("gives the same verdict, results and runtime digest as --driver with the same command", () => {
    const dir = tmp();
    const adapter = spacedAdapter();
    const viaSeparator = runBin("pulse-conform", ["--only", "2,12", "--report", join(dir, "a.json"), "--", "node", adapter]);
    const viaDriver = runBin("pulse-conform", ["--only", "2,12", "--report", join(dir, "b.json"), "--driver", `node '${adapter}'`]);
    expect(viaSeparator.code, viaSeparator.stderr).toBe(2); // filtered: incomplete, by design
    expect(viaDriver.code, viaDriver.stderr).toBe(2);
    const [a, b] = [readJson(join(dir, "a.json")), readJson(join(dir, "b.json"))];
    expect(a.test_results.map((t: { status: string }) => t.status)).toEqual(["passed", "passed"]);
    expect(a.verdict).toBe(b.verdict);
    expect(a.test_results.map((t: { status: string }) => t.status)).toEqual(b.test_results.map((t: { status: string }) => t.status));
    expect(a.runtime_digest).toBe(b.runtime_digest);
    expect(a.test_results[0].repro).toBe(`pulse-conform --only 2 --seed 1 -- node '${adapter}'`);
  });

  it("prints repro lines that run as written", () => {
    const dir = tmp();
    const adapter = spacedAdapter();
    const bin = join(dir, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "pulse-conform"), `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, "dist/bin/pulse-conform.mjs")}" "$@"\n`, { mode: 0o755 });
    for (const [args, test] of [
      [["--", "node", adapter], 2],
      [["--driver", `node '${adapter}'`], 2],
      [["--manifest", "manifests/examples/hello.loop.yaml", "--", "node", adapter], 12],
    ] as const) {
      runBin("pulse-conform", ["--only", String(test), "--report", join(dir, "r.json"), ...args]);
      const repro = readJson(join(dir, "r.json")).test_results[0].repro as string;
      const rerun = spawnSync("sh", ["-c", repro], { cwd: ROOT, encoding: "utf8", env: { PATH: `${bin}:${process.env.PATH}` } });
      expect(rerun.status, `${repro}\n${rerun.stderr}`).toBe(2);
      expect(rerun.stdout).toMatch(new RegExp(`^✓ +${test} \\w+ +passed`, "m"));
      expect(rerun.stdout).toMatch(/^1 passed, 0 failed\n$/m);
    }
  }, 30_000);

  it.each([
    [["--driver", "x", "--", "y"], /--driver and a command after -- both name the adapter/],
    [["--attach", "http://127.0.0.1:1", "--", "y"], /--attach and a command after -- cannot be combined/],
    [["--"], /-- must be followed by the adapter's command/],
    [["./acme-adapter"], /unknown command '\.\/acme-adapter'.*goes after --: pulse-conform -- \.\/acme-adapter/],
    [["bogus-cmd"], /unknown command 'bogus-cmd' \(the commands are selftest, keygen, verify\)/],
    [["keygen", "--", "x"], /keygen runs no adapter/],
  ])("refuses %j as a usage error (exit 4), nothing started", (args, message) => {
    const r = runBin("pulse-conform", [...args]);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/too many arguments/);
    expect(r.stdout).toBe("");
  });
});

describe("the runtime digest", () => {
  it("names our runtime's built files, in process and over stdio alike, by the recipe in docs/conformance/report.md", () => {
    const dir = tmp();
    expect(runBin("pulse-conform", ["--only", "2", "--report", join(dir, "in.json")]).code).toBe(2);
    expect(runBin("pulse-conform", ["--only", "2", "--report", join(dir, "out.json"), "--", "node", STDIO_JS]).code).toBe(2);
    const [inProcess, stdio] = [readJson(join(dir, "in.json")), readJson(join(dir, "out.json"))];
    expect(inProcess).toMatchObject({ runtime_digest_source: "adapter" });
    expect(stdio).toMatchObject({ runtime_digest_source: "adapter", runtime_digest: inProcess.runtime_digest });
    // Not the code that judged, nor the adapter's wrapper script.
    expect(inProcess.runtime_digest).not.toBe(inProcess.suite_digest);
    expect(inProcess.runtime_digest).not.toBe(`sha256:${createHash("sha256").update(readFileSync(join(ROOT, STDIO_JS))).digest("hex")}`);
    const recipe = readDoc("conformance/report.md").match(/```sh\n(find dist\/src[\s\S]*?)```/)?.[1];
    expect(recipe).toBeDefined();
    const recomputed = spawnSync("sh", ["-c", recipe!], { cwd: ROOT, encoding: "utf8" });
    expect(`sha256:${recomputed.stdout.slice(0, 64)}`).toBe(inProcess.runtime_digest);
  });

  it("records a stand-in honestly when the adapter reports none, and refuses to attest it", () => {
    const dir = tmp();
    const adapter = ["--", "node", MISBEHAVING, "stderr-noise"];
    runBin("pulse-conform", ["--only", "12", "--report", join(dir, "r.json"), ...adapter]);
    const report = readJson(join(dir, "r.json"));
    expect(report.runtime_digest_source).toBe("driver-script");
    expect(report.runtime_digest).toBe(`sha256:${createHash("sha256").update(readFileSync(MISBEHAVING)).digest("hex")}`);
    expect(runBin("pulse-conform", ["keygen", "--out", dir]).code).toBe(0);
    const attest = ["--report", join(dir, "s.json"), "--attest", join(dir, "s.dsse.json"), "--key", join(dir, "pulse-conform.key")];
    const refused = runBin("pulse-conform", [...attest, ...adapter]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/--attest needs the runtime artifact's digest, and the adapter reports none .*--runtime-digest/);
    expect(refused.stdout).not.toMatch(/passed|failed/);
    expect(() => statSync(join(dir, "s.dsse.json"))).toThrow();
    // Near miss: the certifier names the artifact, and the run is signed.
    const given = `sha256:${"ab".repeat(32)}`;
    const signed = runBin("pulse-conform", [...attest, "--only", "12", "--runtime-digest", given, ...adapter]);
    expect(signed.code, signed.stderr).toBe(2);
    expect(readJson(join(dir, "s.json"))).toMatchObject({ runtime_digest: given, runtime_digest_source: "option" });
    const pub = join(dir, "pulse-conform.pub");
    const verified = runBin("pulse-conform", ["verify", join(dir, "s.dsse.json"), "--report", join(dir, "s.json"), "--key", pub, "--verdict", "incomplete", "--allow-uncertified", "--runtime-digest", given]);
    expect(verified.code, verified.stderr).toBe(0);
  }, 30_000);

  it("takes the certifier's --runtime-digest over the adapter's, and shows both", () => {
    const dir = tmp();
    const given = `sha256:${"cd".repeat(32)}`;
    const r = runBin("pulse-conform", ["--only", "2", "--runtime-digest", given.toUpperCase().replace("SHA256", "sha256"), "--report", join(dir, "r.json")]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(new RegExp(`^runtime digest ${given} \\(given with --runtime-digest; the adapter reports sha256:[0-9a-f]{64}\\)$`, "m"));
    expect(readJson(join(dir, "r.json"))).toMatchObject({ runtime_digest: given, runtime_digest_source: "option" });
    expect(runBin("pulse-conform", ["--runtime-digest", "sha256:00"]).code).toBe(4);
  });
});
