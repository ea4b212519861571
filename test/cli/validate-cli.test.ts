import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runBin } from "./run-bin.js";

const tmp = () => mkdtempSync(join(tmpdir(), "pulse-cli-"));
const BAD = "pulse_protocol_version: '0.1'\nloop_id: a.b\nversion: 1.0.0\nphases:\n  - { id: x, kind: retreive }\n  - { id: y, kind: act }\nclosure: { from_phase: y, to_phase: x }\ncadence: { type: manual }\nsubstrates: { memory: m, policy: p, audit: a, auth: u }\ninvariants: {}\n";
const PRISM = "manifests/prism.benchmark.yaml";

function noStackTrace(text: string) {
  expect(text).not.toMatch(/\n\s+at .+\(.*:\d+:\d+\)/);
}

describe("pulse-validate exit codes", () => {
  it("0 for the shipped manifests", () => {
    const r = runBin("pulse-validate", ["manifests/"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  });

  it("1 for schema errors and for YAML syntax errors", () => {
    const dir = tmp();
    writeFileSync(join(dir, "bad.yaml"), BAD);
    writeFileSync(join(dir, "broken.yaml"), "a: [1, 2\n");
    const bad = runBin("pulse-validate", ["bad.yaml"], { cwd: dir });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe(
      [
        'bad.yaml:4:1: warning: the loop has no phase of kind "retrieve" (§3.2: every loop must read context from a substrate) [pulse/missing-retrieve]',
        'bad.yaml:5:20: error: phases[0].kind must be one of retrieve, route, act, learn, consolidate, custom; found the string "retreive" (did you mean "retrieve"?) [schema/enum]',
        'bad.yaml:7:37: warning: the closure returns to "x" (kind retreive), not to a retrieve phase (§3.2: outcomes must flow back into retrieval) [pulse/closure-not-grounded]',
        "",
      ].join("\n"),
    );
    const broken = runBin("pulse-validate", ["broken.yaml"], { cwd: dir });
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/^broken\.yaml:\d+:\d+: error: .* \[yaml\/syntax\]$/m);
  });

  it("2 for a bad flag, a file that does not exist, a glob that matches nothing, an unreadable file", () => {
    const dir = tmp();
    symlinkSync(join(dir, "nowhere"), join(dir, "dangling.yaml"));
    for (const [args, message] of [
      [["--bogus", "x.yaml"], /unknown option '--bogus'/],
      [["missing.yaml"], /missing\.yaml: no such file/],
      [["'nothing/**/*.yaml'".slice(1, -1)], /no manifest matched "nothing\/\*\*\/\*\.yaml"/],
      [["dangling.yaml"], /dangling\.yaml: no such file/],
      [["--format", "xml", "a.yaml"], /argument 'xml' is invalid/],
      [["--max-warnings", "many", "a.yaml"], /--max-warnings takes a non-negative integer/],
      [[], /no manifest given/],
    ] as const) {
      const r = runBin("pulse-validate", [...args], { cwd: dir });
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe("");
      noStackTrace(r.stderr);
    }
  });

  it("0 for --help and --version", () => {
    const help = runBin("pulse-validate", ["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Exit codes:");
    expect(help.stdout).toContain("--stdin-filename");
    const version = runBin("pulse-validate", ["--version"]);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync("package.json", "utf8")).version);
  });
});

describe("pulse-validate inputs", () => {
  it("reads stdin, naming it and choosing the parser by --stdin-filename", () => {
    const r = runBin("pulse-validate", ["-", "--stdin-filename", "piped.yaml"], { input: BAD });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^piped\.yaml:5:20: error:/m);
    const json = runBin("pulse-validate", ["-"], { input: readFileSync("test/fixtures/spec/graphonomous.jsonc", "utf8") });
    expect(json.code).toBe(0);
    expect(json.stdout).toMatch(/^<stdin>:81:20: info:/m);
  });

  it("expands quoted globs and directories, skipping nothing it should read", () => {
    const glob = runBin("pulse-validate", ["--format", "json", "manifests/**/*.yaml"]);
    const dir = runBin("pulse-validate", ["--format", "json", "manifests"]);
    const files = (out: string) => JSON.parse(out).files.map((f: { file: string }) => f.file).sort();
    expect(files(glob.stdout)).toEqual(files(dir.stdout));
    // Every manifest the directory holds, nested ones included (a new shipped loop needs no edit here).
    const shipped = readdirSync("manifests", { recursive: true, encoding: "utf8" }).filter((f) => /\.(ya?ml|json)$/.test(f));
    expect(files(dir.stdout)).toHaveLength(shipped.length);
    expect(shipped.length).toBeGreaterThanOrEqual(11);
  });
});

describe("pulse-validate options", () => {
  it("--fail-on, --max-warnings and --strict decide the exit code", () => {
    expect(runBin("pulse-validate", [PRISM]).code).toBe(0);
    expect(runBin("pulse-validate", ["--fail-on", "warning", PRISM]).code).toBe(1);
    expect(runBin("pulse-validate", ["--max-warnings", "2", PRISM]).code).toBe(1);
    expect(runBin("pulse-validate", ["--max-warnings", "3", PRISM]).code).toBe(0);
    expect(runBin("pulse-validate", ["--strict", PRISM]).code).toBe(1);
    const dir = tmp();
    writeFileSync(join(dir, "bad.yaml"), BAD);
    expect(runBin("pulse-validate", ["--fail-on", "never", "bad.yaml"], { cwd: dir }).code).toBe(0);
  });

  it("--quiet prints errors only", () => {
    expect(runBin("pulse-validate", ["--quiet", PRISM]).stdout).toBe("");
    expect(runBin("pulse-validate", ["--quiet", "--strict", PRISM]).stdout.trim().split("\n")).toHaveLength(3);
  });

  it("--config changes severities and refuses mistakes with exit 2", () => {
    const dir = tmp();
    const config = join(dir, "rules.yaml");
    writeFileSync(config, "rules:\n  pulse/missing-act: error\n  pulse/missing-retrieve: 'off'\n");
    const r = runBin("pulse-validate", ["--config", config, PRISM]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("error: the loop has no phase of kind \"act\"");
    expect(r.stdout).not.toContain("pulse/missing-retrieve");
    for (const [text, message] of [
      ["rules:\n  pulse/missing-ac: error\n", /unknown rule "pulse\/missing-ac"; did you mean "pulse\/missing-act"\?/],
      ["rules:\n  schema/enum: warning\n", /cannot be configured/],
      ["rules:\n  pulse/missing-act: fatal\n", /must be set to one of error, warning, info, off/],
      ["rule:\n  pulse/missing-act: error\n", /unknown key "rule"/],
    ] as const) {
      writeFileSync(config, text);
      const bad = runBin("pulse-validate", ["--config", config, PRISM]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(message);
    }
  });

  it("--explain and --list-rules describe rules", () => {
    const r = runBin("pulse-validate", ["--explain", "pulse/closure-not-grounded"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^pulse\/closure-not-grounded \(warning; error with --strict\)/);
    expect(r.stdout).toContain("§3.2");
    const unknown = runBin("pulse-validate", ["--explain", "closure-not-grounded"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('did you mean "pulse/closure-not-grounded"?');
    expect(runBin("pulse-validate", ["--list-rules"]).stdout).toMatch(/^schema\/unknown-property\s+error\s+/m);
  });

  it("colours only on request and never under NO_COLOR", () => {
    expect(runBin("pulse-validate", ["-f", "pretty", PRISM]).stdout).not.toMatch(/\u001b\[/);
    expect(runBin("pulse-validate", ["-f", "pretty", "--color", PRISM]).stdout).toMatch(/\u001b\[/);
    expect(runBin("pulse-validate", ["-f", "pretty", "--color", PRISM], { env: { NO_COLOR: "1" } }).stdout).not.toMatch(/\u001b\[/);
  });

  it("chooses github under GitHub Actions and appends the step summary", () => {
    const dir = tmp();
    const summary = join(dir, "summary.md");
    writeFileSync(summary, "previous step\n");
    const r = runBin("pulse-validate", [PRISM], { env: { GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: summary } });
    expect(r.stdout).toMatch(/^::warning file=manifests\/prism\.benchmark\.yaml,line=16,col=1,/m);
    expect(readFileSync(summary, "utf8")).toMatch(/^previous step\n### pulse-validate\n/);
  });

  it("-o picks the format from the file's extension, never github or pretty (even under GitHub Actions)", () => {
    const dir = tmp();
    const env = { GITHUB_ACTIONS: "true" };
    for (const [name, check] of [
      ["r.sarif", (t: string) => expect(JSON.parse(t).version).toBe("2.1.0")],
      ["r.json", (t: string) => expect(JSON.parse(t).version).toBe(1)],
      ["r.xml", (t: string) => expect(t).toMatch(/^<\?xml[^>]*>\s*<testsuites/)],
      ["r.txt", (t: string) => expect(t).toMatch(/^manifests\/prism\.benchmark\.yaml:16:1: warning: /m)],
    ] as const) {
      const r = runBin("pulse-validate", ["-o", join(dir, name), PRISM], { env });
      expect(r.stdout, name).toBe("");
      const text = readFileSync(join(dir, name), "utf8");
      expect(text, name).not.toMatch(/^::/m);
      check(text);
    }
    // The near miss: --format still wins over the extension.
    runBin("pulse-validate", ["-f", "compact", "-o", join(dir, "forced.json"), PRISM]);
    expect(readFileSync(join(dir, "forced.json"), "utf8")).toMatch(/: warning: /);
  });

  it("-o writes the report to a file, atomically", () => {
    const dir = tmp();
    const out = join(dir, "report.sarif");
    const r = runBin("pulse-validate", ["-f", "sarif", "-o", out, PRISM]);
    expect(r.stdout).toBe("");
    expect(JSON.parse(readFileSync(out, "utf8")).version).toBe("2.1.0");
    expect(readdirSync(dir)).toEqual(["report.sarif"]);
  });
});

describe("pulse", () => {
  it("pulse validate is pulse-validate", () => {
    const a = runBin("pulse", ["validate", "--format", "json", "manifests/"]);
    const b = runBin("pulse-validate", ["--format", "json", "manifests/"]);
    expect(a.code).toBe(0);
    expect(a.stdout).toBe(b.stdout);
  });

  it("without a command prints help and exits 2", () => {
    const r = runBin("pulse", []);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Usage: pulse");
  });
});
