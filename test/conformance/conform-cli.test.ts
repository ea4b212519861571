import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { ROOT, runBin } from "../cli/run-bin.js";

const STDIO_ADAPTER = `"${process.execPath}" ${join(ROOT, "dist/conformance/adapters/pulse/stdio.js")}`;
const OFFERED_MUTANTS = join(ROOT, "test/conformance/fixtures/offered-mutants-adapter.mjs");
const tmp = () => mkdtempSync(join(tmpdir(), "pulse-conform-"));

function reportSchemaValidator() {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  return ajv.compile(JSON.parse(readFileSync(join(ROOT, "schema/conformance/report.v1.json"), "utf8")));
}

describe("pulse-conform", () => {
  it("certifies our runtime in process: one line per test, a schema-valid report, 12 passed, exit 0", () => {
    const dir = tmp();
    const r = runBin("pulse-conform", ["--report", join(dir, "report.json"), "--junit", join(dir, "junit.xml"), "--markdown", join(dir, "report.md"), "--badge", join(dir, "badge.json")]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.match(/^✓ +\d+ \w+ +passed/gm)).toHaveLength(12);
    expect(r.stdout.trimEnd().split("\n").slice(-2)).toEqual(["results: 12 passed", "12 passed, 0 failed"]);
    const report = JSON.parse(readFileSync(join(dir, "report.json"), "utf8"));
    const validate = reportSchemaValidator();
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    expect(report).toMatchObject({ verdict: "conformant", certification: true, runtime_name: "pulse", settings: { timing: "virtual", evidence_class: "recording-substrate" } });
    expect(report.test_results.map((t: { number: number }) => t.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(readFileSync(join(dir, "junit.xml"), "utf8")).toMatch(/<testsuite [^>]*tests="12"[^>]*failures="0"/);
    expect(JSON.parse(readFileSync(join(dir, "badge.json"), "utf8"))).toMatchObject({ message: "conformant 12/12", color: "brightgreen" });
  });

  it("certifies the same runtime as a separate process over the stdio driver protocol, every message schema-checked", () => {
    const r = runBin("pulse-conform", ["--driver", STDIO_ADAPTER, "--validate-protocol"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/via --driver/);
    expect(r.stdout).toMatch(/protocol: every message matched its schema/);
    expect(r.stdout).toMatch(/12 passed, 0 failed\n$/);
  });

  it("certifies every shipped manifest: test 12 loads each one", () => {
    const dir = tmp();
    const r = runBin("pulse-conform", ["--manifest", "manifests/", "--only", "12", "--report", join(dir, "r.json")]);
    const report = JSON.parse(readFileSync(join(dir, "r.json"), "utf8"));
    expect(report.test_results[0].status).toBe("passed");
    const loaded = report.test_results[0].checks.filter((c: { description: string }) => /^valid: manifests\//.test(c.description));
    expect(loaded.length).toBe(report.settings.manifests.length);
    expect(loaded.length).toBeGreaterThanOrEqual(7);
    // A filtered run is never a certification, and says so.
    expect(report).toMatchObject({ verdict: "incomplete", certification: false });
    expect(r.code).toBe(2);
  });

  it("certifies our runtime with every manifest in manifests/: all twelve tests pass, exit 0", () => {
    const dir = tmp();
    const r = runBin("pulse-conform", ["--manifest", "manifests/", "--report", join(dir, "r.json")]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/12 passed, 0 failed\n$/);
    const report = JSON.parse(readFileSync(join(dir, "r.json"), "utf8"));
    expect(report).toMatchObject({ verdict: "conformant", certification: true, summary: { total: 12, passed: 12 } });
    expect(report.settings.manifests.length).toBeGreaterThanOrEqual(7);
    const loaded = report.test_results[11].checks.filter((c: { description: string }) => /^valid: manifests\//.test(c.description));
    expect(loaded.length).toBe(report.settings.manifests.length);
  }, 60_000);

  it("keygen creates the --out directory, parents included, the private key owner-only", () => {
    const dir = join(tmp(), "ci", "keys/");
    const r = runBin("pulse-conform", ["keygen", "--out", dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(join(dir, "pulse-conform.key")).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "pulse-conform.pub")).isFile()).toBe(true);
    // Near miss: --out naming a file is refused in one line, not with ENOTDIR's stack.
    const file = join(tmp(), "not-a-dir");
    writeFileSync(file, "");
    const refused = runBin("pulse-conform", ["keygen", "--out", file]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toBe(`pulse-conform: cannot write the keys in ${file}: not a directory\n`);
  });

  it("finds an output file it cannot write before running any test (exit 4)", () => {
    const dir = tmp();
    for (const [args, reason] of [
      [["--report", join(dir, "missing", "r.json")], `no such directory ${join(dir, "missing")}`],
      [["--junit", dir], "it is a directory"],
    ] as const) {
      const r = runBin("pulse-conform", [...args]);
      expect(r.code).toBe(4);
      expect(r.stderr).toBe(`pulse-conform: ${args[0]} ${args[1]}: cannot write there: ${reason}\n`);
      expect(r.stdout).toBe("");
    }
  });

  it("signs the report and verifies it; any change to the report or the policy is refused (exit 5)", () => {
    const dir = tmp();
    expect(runBin("pulse-conform", ["keygen", "--out", dir]).code).toBe(0);
    const key = join(dir, "pulse-conform.key");
    const pub = join(dir, "pulse-conform.pub");
    expect(runBin("pulse-conform", ["keygen", "--out", dir]).code).toBe(4); // never overwrites a key
    const report = join(dir, "report.json");
    const attestation = join(dir, "report.dsse.json");
    expect(runBin("pulse-conform", ["--report", report, "--attest", attestation, "--key", key]).code).toBe(0);
    const ok = runBin("pulse-conform", ["verify", attestation, "--report", report, "--key", pub]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^verified: pulse .* is conformant/);
    const original = readFileSync(report, "utf8");
    writeFileSync(report, original.replace('"seed": 1', '"seed": 7'));
    const tampered = runBin("pulse-conform", ["verify", attestation, "--report", report, "--key", pub]);
    expect(tampered.code).toBe(5);
    expect(tampered.stderr).toMatch(/sha256/);
    writeFileSync(report, original);
    expect(runBin("pulse-conform", ["verify", attestation, "--report", report, "--key", pub, "--verdict", "nonconformant"]).code).toBe(5);
    // A digest that is not one is a mistake in the command (4); a well-formed other one, a different runtime (5).
    const malformed = runBin("pulse-conform", ["verify", attestation, "--report", report, "--key", pub, "--runtime-digest", "sha256:00"]);
    expect(malformed.code).toBe(4);
    expect(malformed.stderr).toMatch(/^pulse-conform: --runtime-digest takes "sha256:" and 64 hex digits, got "sha256:00"\n$/);
    expect(runBin("pulse-conform", ["verify", attestation, "--report", report, "--key", pub, "--runtime-digest", `sha256:${"00".repeat(32)}`]).code).toBe(5);
    // A filtered run verifies only when the verifier accepts uncertified runs.
    expect(runBin("pulse-conform", ["--only", "2", "--report", report, "--attest", attestation, "--key", key]).code).toBe(2);
    expect(runBin("pulse-conform", ["verify", attestation, "--report", report, "--key", pub, "--verdict", "incomplete"]).code).toBe(5);
    expect(runBin("pulse-conform", ["verify", attestation, "--report", report, "--key", pub, "--verdict", "incomplete", "--allow-uncertified"]).code).toBe(0);
    // --allow-uncertified alone: the filtered run passed every test it ran, which is what the flag accepts.
    const filtered = runBin("pulse-conform", ["verify", attestation, "--report", report, "--key", pub, "--allow-uncertified"]);
    expect(filtered.code, filtered.stderr).toBe(0);
    expect(filtered.stdout).toMatch(/^verified: pulse \S+ passed the test it ran \(2: a filtered run, not a certification\) \(suite 0\.1\.0\); signature, report digest and policy hold\n$/);
    const strict = runBin("pulse-conform", ["verify", attestation, "--report", report, "--key", pub]);
    expect(strict.code).toBe(5);
    expect(strict.stderr).toMatch(/accept it only with --allow-uncertified/);
    // --require-keyid: the signer's keyid is there, so it holds; relabelled, only the flag refuses it.
    expect(runBin("pulse-conform", ["verify", attestation, "--report", report, "--key", pub, "--allow-uncertified", "--require-keyid"]).code).toBe(0);
    const envelope = JSON.parse(readFileSync(attestation, "utf8"));
    envelope.signatures[0].keyid = "sha256:" + "0".repeat(64);
    writeFileSync(attestation, JSON.stringify(envelope));
    expect(runBin("pulse-conform", ["verify", attestation, "--report", report, "--key", pub, "--allow-uncertified"]).code).toBe(0);
    const relabelled = runBin("pulse-conform", ["verify", attestation, "--report", report, "--key", pub, "--allow-uncertified", "--require-keyid"]);
    expect(relabelled.code).toBe(5);
    expect(relabelled.stderr).toMatch(/names keyid "sha256:0{64}", not this key's sha256:[0-9a-f]{64} \(--require-keyid\)/);
  });

  it("repeats each test with --repeat and records every run's status", () => {
    const dir = tmp();
    runBin("pulse-conform", ["--only", "2", "--repeat", "3", "--report", join(dir, "r.json")]);
    const report = JSON.parse(readFileSync(join(dir, "r.json"), "utf8"));
    expect(report.settings.repeats).toBe(3);
    expect(report.test_results[0]).toMatchObject({ status: "passed", repeats: ["passed", "passed", "passed"] });
  });

  it("reports a crashing adapter as a driver failure (exit 3), never a verdict", () => {
    const r = runBin("pulse-conform", ["--driver", `"${process.execPath}" -e "process.stderr.write('boom\\\\n'); process.exit(1)"`]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/driver failure/);
    expect(r.stdout).not.toMatch(/passed/);
  });

  it("answers bad usage with exit 4 and a one-line reason", () => {
    for (const args of [["--only", "13"], ["--attest", "x.json"], ["--driver", "x", "--attach", "http://127.0.0.1:1"], ["--repeat", "zero"], ["--bogus"], ["verify", "missing.json", "--key", "missing.pub"], ["bogus-cmd"]]) {
      const r = runBin("pulse-conform", args);
      expect(r.code, args.join(" ")).toBe(4);
      expect(r.stderr).toMatch(/^pulse-conform: /);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});

describe("pulse-conform selftest", () => {
  it("passes 12/12 unmodified and catches every mutant with its own test and no other", () => {
    const r = runBin("pulse-conform", ["selftest"]);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/^✓ unmodified runtime: 12\/12 passed$/m);
    // Each line says what happened to the mutant; the check quoted is the one that did not hold.
    expect(r.stdout.match(/^✓ [a-z-]+ +caught by test \d+ \w+: its check ".+" did not hold$/gm)).toHaveLength(12);
    expect(r.stdout).toMatch(/^✓ commits-early +caught by test 5 quorum_before_commit: its check "confidence 0\.5: the act does not commit" did not hold$/m);
    // As the README promises: 12 mutants, 12 catches.
    expect(r.stdout).toMatch(/\nthe suite can fail: 12 mutants, 12 caught, each by its own test and no other\n12 passed, 0 failed\n$/);
    expect(readFileSync(join(ROOT, "README.md"), "utf8")).toMatch(/pulse-conform selftest +# prove the suite can fail: 12 mutants, 12 catches/);
  }, 60_000);

  it("against an adapter that offers no mutants: not applicable, judged on the unmodified run alone", () => {
    const r = runBin("pulse-conform", ["selftest", "--", "node", OFFERED_MUTANTS]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^✓ unmodified runtime: 12\/12 passed$/m);
    expect(r.stdout).toMatch(/^- no-circuit +not offered by the adapter \(not applicable\)$/m);
    expect(r.stdout).toMatch(/\nmutants: not applicable: the adapter offers none of the 12 \(hello\.capabilities\.mutants\)\. Mutants are optional for a runtime other than pulse's; the unmodified run above is what counts for it\n0 passed, 0 failed\n$/);
    // Near miss: an adapter that offers two is held to those two.
    const some = runBin("pulse-conform", ["selftest", "--", "node", OFFERED_MUTANTS, "no-circuit", "re-executes"]);
    expect(some.code, some.stdout).toBe(0);
    expect(some.stdout).toMatch(/^✓ no-circuit +caught by test 9 substrate_unavailable_degrades/m);
    expect(some.stdout).toMatch(/\n2 mutants, 2 caught, each by its own test and no other; 10 not offered \(not applicable\)\n2 passed, 0 failed\n$/);
  }, 60_000);
});
