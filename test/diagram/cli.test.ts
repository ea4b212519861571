/** `pulse-diagram` and `pulse diagram` as users call them: formats, output, refusals, exit codes. */
import { describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { diagram, ROOT, runBuiltBin } from "./helpers.js";

const tmp = () => mkdtempSync(join(tmpdir(), "pulse-diagram-"));
const HELLO = "manifests/examples/hello.loop.yaml";
const BAD = "pulse_protocol_version: '0.1'\nloop_id: a.b\nversion: 1.0.0\nphases:\n  - { id: x, kind: retreive }\n  - { id: y, kind: act }\nclosure: { from_phase: y, to_phase: z }\ncadence: { type: manual }\nsubstrates: { memory: m, policy: p, audit: a, auth: u }\ninvariants: {}\n";

function noStackTrace(text: string) {
  expect(text).not.toMatch(/\n\s+at .+:\d+:\d+\)?/);
}

describe("formats", () => {
  it("infers the format from the -o extension", async () => {
    const dir = tmp();
    const starts: Record<string, string> = { mmd: "flowchart LR\n", mermaid: "flowchart LR\n", dot: 'digraph "pulse" {', gv: 'digraph "pulse" {', svg: "<?xml", html: "<!doctype html>", htm: "<!doctype html>", json: "{\n" };
    for (const [ext, start] of Object.entries(starts)) {
      const out = join(dir, `d.${ext}`);
      const r = await diagram([HELLO, "-o", out]);
      expect(r, ext).toEqual({ code: 0, stdout: "", stderr: "" });
      expect(readFileSync(out, "utf8").startsWith(start), ext).toBe(true);
    }
    expect(JSON.parse(readFileSync(join(dir, "d.json"), "utf8"))).toMatchObject({ model: "pulse-diagram", version: 1 });
  });

  it("writes Mermaid to stdout by default, and --format wins over the extension", async () => {
    const r = await diagram([HELLO]);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith("flowchart LR\n")).toBe(true);
    const dir = tmp();
    const forced = await diagram([HELLO, "--format", "dot", "-o", join(dir, "x.txt")]);
    expect(forced.code).toBe(0);
    expect(readFileSync(join(dir, "x.txt"), "utf8").startsWith('digraph "pulse" {')).toBe(true);
    const svg = await diagram([HELLO, "-f", "svg"]);
    expect(svg.stdout).toMatch(/^<\?xml[\s\S]*<\/svg>\n$/);
  });

  it("refuses an -o extension it does not know, unless --format says what to write", async () => {
    const dir = tmp();
    for (const name of ["diagram.png", "diagram"]) {
      const r = await diagram([HELLO, "-o", join(dir, name)]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^pulse-diagram: cannot tell the format from "[^"]*"(?: \(\.png\))?: use one of \.mmd, \.mermaid, \.dot, \.gv, \.svg, \.html, \.htm, \.json, or pass --format\n$/);
      expect(existsSync(join(dir, name))).toBe(false);
    }
  });

  it("reads stdin, named by --stdin-filename", async () => {
    const r = await diagram(["-", "--stdin-filename", "hello.yaml", "--format", "json"], { stdin: readFileSync(resolve(ROOT, HELLO), "utf8") });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).loops[0]).toMatchObject({ loopId: "examples.hello", file: "hello.yaml" });
  });
});

describe("refusals and exit codes", () => {
  it("refuses an invalid manifest with the validator's diagnostics, exit 1, and writes nothing", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "bad.yaml"), BAD);
    writeFileSync(join(dir, "old.svg"), "previous picture");
    const r = await diagram(["bad.yaml", "-o", "old.svg"], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      [
        'bad.yaml:5:20: error: phases[0].kind must be one of retrieve, route, act, learn, consolidate, custom; found the string "retreive" (did you mean "retrieve"?) [schema/enum]',
        'bad.yaml:7:37: error: closure.to_phase names phase "z", which this loop does not declare (phases: x, y) (did you mean "x"?) [pulse/closure-unknown-phase]',
        "pulse-diagram: refused: 1 of 1 manifest is invalid; nothing was drawn (pulse-validate shows every diagnostic)",
        "",
      ].join("\n"),
    );
    expect(readFileSync(join(dir, "old.svg"), "utf8")).toBe("previous picture");
  });

  it("draws a connection to a phase the loaded target lacks, and lists it on stderr (exit 0)", async () => {
    const r = await diagram(["test/fixtures/spec/graphonomous.jsonc", "test/fixtures/spec/prism.jsonc"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('["phase not found<br/>observe_judgments"]');
    expect(r.stderr).toBe(
      'test/fixtures/spec/graphonomous.jsonc:115:25: error: connection names phase "observe_judgments" of loop "prism.benchmark", which has no such phase (phases: compose, interact, observe, reflect, diagnose) (did you mean "observe"?) [pulse/connection-unresolved]\n' +
        'pulse-diagram: drew 1 dangling reference as "phase not found"\n',
    );
  });

  it("exits 2 on usage errors, with one line and no stack trace", async () => {
    const dir = tmp();
    for (const [args, message] of [
      [[], /no manifest given/],
      [["--bogus", HELLO], /unknown option '--bogus'/],
      [["--layout", "circle", HELLO], /argument 'circle' is invalid.*lr, tb, ring/],
      [["--substrates", "some", HELLO], /argument 'some' is invalid.*none, referenced, all/],
      [["--format", "png", HELLO], /argument 'png' is invalid/],
      [["--depth", "-1", HELLO], /--depth takes a non-negative integer, not "-1"/],
      [["--depth", "two", HELLO], /--depth takes a non-negative integer/],
      [["missing.yaml"], /missing\.yaml: no such file/],
      [["nothing/**/*.yaml"], /no manifest matched "nothing\/\*\*\/\*\.yaml"/],
      [[resolve(ROOT, HELLO), "-o", join(dir, "no/such/dir/x.svg")], /cannot write .*x\.svg: no such directory/],
    ] as const) {
      const r = await diagram([...args], { cwd: dir });
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe("");
      noStackTrace(r.stderr);
    }
  });

  it("writes -o atomically: no temporary file is left behind", async () => {
    const dir = tmp();
    const r = await diagram([resolve(ROOT, "manifests/"), "-o", join(dir, "system.svg")]);
    expect(r.code).toBe(0);
    expect(readdirSync(dir)).toEqual(["system.svg"]);
  });
});

describe("the shipped bins", () => {
  it("pulse-diagram manifests/ -o out.svg runs as a process; pulse diagram is the same command", () => {
    const dir = tmp();
    const a = runBuiltBin("pulse-diagram", ["manifests/", "-o", join(dir, "a.svg")]);
    expect(a).toEqual({ code: 0, stdout: "", stderr: "" });
    const b = runBuiltBin("pulse", ["diagram", "manifests/", "-o", join(dir, "b.svg")]);
    expect(b).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(readFileSync(join(dir, "a.svg"), "utf8")).toBe(readFileSync(join(dir, "b.svg"), "utf8"));
    expect(runBuiltBin("pulse", ["--help"]).stdout).toMatch(/diagram \[options\] \[paths\.\.\.\]\s+Draw PULSE loop manifests/);
    const bad = runBuiltBin("pulse-diagram", ["manifests/", "--depth", "x"]);
    expect(bad.code).toBe(2);
    noStackTrace(bad.stderr);
  });

  it("loads Graphviz only for svg and html, and pulse validate never loads the diagram code", () => {
    const staticClosure = (entry: string): string => {
      const seen = new Set<string>();
      const visit = (file: string): void => {
        if (seen.has(file)) return;
        seen.add(file);
        const text = readFileSync(file, "utf8");
        // Static imports only: `import(...)` is a lazy chunk.
        for (const m of text.matchAll(/(?:^|[;\s])(?:import|export)\s*(?:[\w*{}\s,$]+from\s*)?"(\.\/[^"]+)"/g)) visit(resolve(file, "..", m[1]!));
      };
      visit(resolve(ROOT, "dist/bin", entry));
      return [...seen].map((f) => readFileSync(f, "utf8")).join("\n");
    };
    const VIZ = "graphvizVersion";
    expect(staticClosure("pulse-diagram.mjs")).not.toContain(VIZ);
    expect(staticClosure("pulse.mjs")).not.toContain(VIZ);
    // Strings only the graph builder and the Mermaid emitter contain.
    const DIAGRAM = ["inner loop, not loaded", "flowchart "];
    const validate = staticClosure("pulse-validate.mjs");
    expect(validate).not.toContain(VIZ);
    for (const marker of DIAGRAM) {
      expect(validate).not.toContain(marker);
      expect(staticClosure("pulse.mjs")).not.toContain(marker);
      expect(staticClosure("pulse-diagram.mjs")).toContain(marker);
    }
  });
});
