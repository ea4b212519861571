import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { annotation, escapeData, escapeProperty } from "../../src/format/github.js";
import { codeSpan, markdownText, SUMMARY_BUDGET_BYTES } from "../../src/format/step-summary.js";
import { formatReport } from "../../src/format/report.js";
import type { Diagnostic, FileResult } from "../../src/validator/diagnostic.js";
import { docResults } from "./doc-example.js";
import { OPTIONS, results } from "./fixtures.js";

const github = (r: readonly FileResult[], quiet = false) => formatReport("github", r, { ...OPTIONS, quiet });

const diag = (over: Partial<Diagnostic>): Diagnostic => ({ severity: "error", rule: "schema/type", message: "m", pointer: "", line: 1, column: 1, endLine: 1, endColumn: 2, ...over });

/** The runner's side (actions/runner ActionCommand): %25 is undone last. */
function unescape(s: string, property: boolean): string {
  let out = s.replace(/%0D/g, "\r").replace(/%0A/g, "\n");
  if (property) out = out.replace(/%3A/g, ":").replace(/%2C/g, ",");
  return out.replace(/%25/g, "%");
}

/** Parses one workflow command line the way the runner does. */
function parseCommand(line: string): { command: string; properties: Record<string, string>; data: string } {
  const m = /^::([a-z]+)(?: ([^:]*))?::(.*)$/.exec(line);
  if (!m) throw new Error(`not a workflow command: ${line}`);
  const properties: Record<string, string> = {};
  for (const pair of (m[2] ?? "").split(",").filter(Boolean)) {
    const eq = pair.indexOf("=");
    properties[pair.slice(0, eq)] = unescape(pair.slice(eq + 1), true);
  }
  return { command: m[1]!, properties, data: unescape(m[3]!, false) };
}

describe("github annotations", () => {
  it("prints one workflow command per diagnostic, then the compact lines", () => {
    expect(github(results()).stdout).toBe(
      [
        "::error file=empty.yaml,line=1,col=1,endLine=1,endColumn=2,title=input/empty::the file is empty",
        '::warning file=loops/dir with space/bad%2Cloop.yaml,line=4,endLine=8,title=pulse/missing-retrieve::the loop has no phase of kind "retrieve" (§3.2: every loop must read context from a substrate)',
        '::error file=loops/dir with space/bad%2Cloop.yaml,line=5,col=11,endLine=5,endColumn=21,title=schema/enum::phases[0].kind must be one of retrieve, route, act, learn, consolidate, custom; found the string "retreive" (did you mean "retrieve"?)',
        '::error file=loops/dir with space/bad%2Cloop.yaml,line=6,col=5,endLine=6,endColumn=12,title=schema/unknown-property::unknown property "timeout" in phases[0] (did you mean "timeout_ms"?)',
        '::error file=loops/dir with space/bad%2Cloop.yaml,line=7,col=9,endLine=7,endColumn=11,title=schema/pattern::phases[1].id must match ^[a-z0-9_]+$; found "判断"',
        '::error file=loops/dir with space/bad%2Cloop.yaml,line=9,col=41,endLine=9,endColumn=48,title=pulse/closure-unknown-phase::closure.to_phase "nowhere" is not a phase: <fetch> & <判断> exist, 100%25 sure%0Afix the `to_phase` | or add the phase',
        '::notice file=loops/dir with space/bad%2Cloop.yaml,line=11,col=65,endLine=11,endColumn=74,title=pulse/connection-external::connection c1 targets loop "ops.audit", which was not given: not checked',
        "::error file=odd%3Aname%25.json,line=3,col=3,endLine=3,endColumn=4,title=json/syntax::expected ',' or '}' after a property value, found '\"'",
        "::error file=unreadable.yaml,title=input/encoding::the file is not valid UTF-8 text",
        "empty.yaml:1:1: error: the file is empty [input/empty]",
        'loops/dir with space/bad,loop.yaml:4:3: warning: the loop has no phase of kind "retrieve" (§3.2: every loop must read context from a substrate) [pulse/missing-retrieve]',
        'loops/dir with space/bad,loop.yaml:5:11: error: phases[0].kind must be one of retrieve, route, act, learn, consolidate, custom; found the string "retreive" (did you mean "retrieve"?) [schema/enum]',
        'loops/dir with space/bad,loop.yaml:6:5: error: unknown property "timeout" in phases[0] (did you mean "timeout_ms"?) [schema/unknown-property]',
        'loops/dir with space/bad,loop.yaml:7:9: error: phases[1].id must match ^[a-z0-9_]+$; found "判断" [schema/pattern]',
        'loops/dir with space/bad,loop.yaml:9:41: error: closure.to_phase "nowhere" is not a phase: <fetch> & <判断> exist, 100% sure fix the `to_phase` | or add the phase [pulse/closure-unknown-phase]',
        'loops/dir with space/bad,loop.yaml:11:65: info: connection c1 targets loop "ops.audit", which was not given: not checked [pulse/connection-external]',
        "odd:name%.json:3:3: error: expected ',' or '}' after a property value, found '\"' [json/syntax]",
        "unreadable.yaml:0:0: error: the file is not valid UTF-8 text [input/encoding]",
        "",
      ].join("\n"),
    );
  });

  it("escapes data and properties as the runner expects", () => {
    expect(escapeData("100% a:b, c\r\nd")).toBe("100%25 a:b, c%0D%0Ad");
    expect(escapeProperty("100% a:b, c\r\nd")).toBe("100%25 a%3Ab%2C c%0D%0Ad");
    // The near miss: text with nothing to escape passes through untouched.
    expect(escapeProperty("loops/a b.yaml")).toBe("loops/a b.yaml");
  });

  it("gives columns only for one-line spans, and no position for a file-level problem", () => {
    expect(annotation("a.yaml", diag({ line: 2, column: 3, endLine: 4, endColumn: 5 }))).toBe("::error file=a.yaml,line=2,endLine=4,title=schema/type::m");
    expect(annotation("a.yaml", diag({ line: 2, column: 3, endLine: 2, endColumn: 5 }))).toBe("::error file=a.yaml,line=2,col=3,endLine=2,endColumn=5,title=schema/type::m");
    expect(annotation("a.yaml", diag({ line: 0, column: 0, endLine: 0, endColumn: 0 }))).toBe("::error file=a.yaml,title=schema/type::m");
    expect(annotation("a.yaml", diag({ severity: "info" }))).toMatch(/^::notice /);
    expect(annotation("a.yaml", diag({ severity: "warning" }))).toMatch(/^::warning /);
  });

  it("round-trips any file name, rule and message through the runner's parser, one line each (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", minLength: 1 }), fc.string({ unit: "binary", minLength: 1 }), fc.string({ unit: "binary" }), (file, rule, message) => {
        const line = annotation(file, diag({ rule, message }));
        expect(line).not.toMatch(/[\r\n]/);
        const parsed = parseCommand(line);
        expect(parsed.command).toBe("error");
        // Unsafe characters are made visible first; everything else arrives as it was sent.
        const visible = (s: string) => s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g, (c) => (c.charCodeAt(0) < 32 ? String.fromCharCode(0x2400 + c.charCodeAt(0)) : c === "\u007f" ? "␡" : "�"));
        expect(parsed.properties).toEqual({ file: visible(file), line: "1", col: "1", endLine: "1", endColumn: "2", title: visible(rule) });
        expect(parsed.data).toBe(visible(message));
      }),
    );
  });

  it("drops warnings and infos from annotations and lines under quiet", () => {
    const out = github(results(), true).stdout.trimEnd().split("\n");
    expect(out.filter((l) => l.startsWith("::error "))).toHaveLength(7);
    expect(out.filter((l) => /^::(warning|notice) /.test(l))).toEqual([]);
    expect(out).toHaveLength(14);
  });
});

describe("github step summary", () => {
  it("is the verdict, a table of files, and every diagnostic linked to its rule", () => {
    expect(github(docResults()).stepSummary).toBe(`### pulse-validate

✖ 3 errors, 1 warning, 1 info in 2 files (1 valid)

| File | Result | Errors | Warnings | Infos |
| :--- | :--- | ---: | ---: | ---: |
| \`loops/escalation.yaml\` | ✅ valid | 0 | 0 | 0 |
| \`loops/triage.yaml\` | ❌ invalid | 3 | 1 | 1 |

#### Diagnostics

- \`loops/triage.yaml:4:1\` **warning** [\`pulse/missing-retrieve\`](https://github.com/opensentience/pulse/blob/main/docs/rules.md#pulsemissing-retrieve): the loop has no phase of kind "retrieve" (§3.2: every loop must read context from a substrate)
- \`loops/triage.yaml:6:11\` **error** [\`schema/enum\`](https://github.com/opensentience/pulse/blob/main/docs/rules.md#schemaenum): phases\\[0\\].kind must be one of retrieve, route, act, learn, consolidate, custom; found the string "retreive" (did you mean "retrieve"?)
- \`loops/triage.yaml:7:5\` **error** [\`schema/unknown-property\`](https://github.com/opensentience/pulse/blob/main/docs/rules.md#schemaunknown-property): unknown property "timeout" in phases\\[0\\] (did you mean "timeout\\_ms"?)
- \`loops/triage.yaml:12:41\` **error** [\`pulse/closure-unknown-phase\`](https://github.com/opensentience/pulse/blob/main/docs/rules.md#pulseclosure-unknown-phase): closure.to\\_phase names phase "gathr", which this loop does not declare (phases: gather, answer, learn) (did you mean "gather"?)
- \`loops/triage.yaml:17:72\` **info** [\`pulse/connection-external\`](https://github.com/opensentience/pulse/blob/main/docs/rules.md#pulseconnection-external): connection refers to loop "support.escalation", which is not among the validated manifests (treated as external)
`);
  });

  it("escapes HTML, Markdown and table pipes in messages and file names", () => {
    const summary = github(results()).stepSummary!;
    expect(summary).toContain(
      ": closure.to\\_phase \"nowhere\" is not a phase: &lt;fetch&gt; &amp; &lt;判断&gt; exist, 100% sure fix the \\`to\\_phase\\` \\| or add the phase\n",
    );
    expect(summary).toContain("| `loops/dir with space/bad,loop.yaml` | ❌ invalid | 4 | 1 | 1 |");
    expect(summary).toContain("- `unreadable.yaml` **error**");
    const odd = github([{ file: "a|b`c.yaml", valid: false, diagnostics: [diag({ message: "<script>alert(1)</script> *x* [l](u)" })] }]).stepSummary!;
    expect(odd).toContain("| ``a\\|b`c.yaml`` | ❌ invalid | 1 | 0 | 0 |");
    expect(odd).toContain("- ``a|b`c.yaml:1:1`` **error**");
    expect(odd).toContain("&lt;script&gt;alert(1)&lt;/script&gt; \\*x\\* \\[l\\](u)");
    expect(odd).not.toContain("<script>");
  });

  it("builds code spans that hold any backticks, and escapes text so it renders as itself", () => {
    expect(codeSpan("plain")).toBe("`plain`");
    expect(codeSpan("a`b")).toBe("``a`b``");
    expect(codeSpan("`x`")).toBe("`` `x` ``");
    expect(codeSpan("a|b", true)).toBe("`a\\|b`");
    expect(markdownText("a_b*c~d\\e")).toBe("a\\_b\\*c\\~d\\\\e");
    // The near miss: ordinary prose is left alone.
    expect(markdownText('phase "x" (kind act), 3.2: ok.')).toBe('phase "x" (kind act), 3.2: ok.');
  });

  it("stays under GitHub's 1 MiB limit and says how much it left out", () => {
    const many: FileResult[] = Array.from({ length: 40 }, (_, i) => ({
      file: `loops/l${String(i).padStart(2, "0")}.yaml`,
      valid: false,
      diagnostics: Array.from({ length: 250 }, (_, j) => diag({ line: j + 1, message: `problem ${j} `.padEnd(200, "x") })),
    }));
    const summary = github(many).stepSummary!;
    expect(Buffer.byteLength(summary)).toBeLessThanOrEqual(SUMMARY_BUDGET_BYTES + 200);
    expect(SUMMARY_BUDGET_BYTES).toBeLessThan(1024 * 1024);
    const shown = summary.split("\n").filter((l) => l.startsWith("- ")).length;
    expect(shown).toBeGreaterThan(100);
    expect(summary).toContain(`… and ${10_000 - shown} more diagnostics: the job log lists every one.`);
    expect(summary.split("\n").filter((l) => l.startsWith("| `loops/"))).toHaveLength(40);
    // The log still has every diagnostic.
    expect(github(many).stdout.split("\n").filter((l) => l.startsWith("::error "))).toHaveLength(10_000);
  });

  it("shows a run failing on its warnings as failed, not as valid", () => {
    const warned: FileResult[] = [{ file: "a.yaml", valid: true, diagnostics: [diag({ severity: "warning" })] }];
    const failing = formatReport("github", warned, { ...OPTIONS, failure: "more than --max-warnings 0" }).stepSummary!;
    expect(failing.split("\n")[2]).toBe("✖ 1 warning in 1 file (1 valid): more than --max-warnings 0");
    expect(github(warned).stepSummary!.split("\n")[2]).toBe("✔ 1 file valid (1 warning)");
  });

  it("says so when everything is valid, without an empty diagnostics section", () => {
    const summary = github([{ file: "a.yaml", valid: true, diagnostics: [] }]).stepSummary!;
    expect(summary).toBe("### pulse-validate\n\n✔ 1 file valid\n\n| File | Result | Errors | Warnings | Infos |\n| :--- | :--- | ---: | ---: | ---: |\n| `a.yaml` | ✅ valid | 0 | 0 | 0 |\n");
    expect(github([{ file: "a.yaml", valid: true, diagnostics: [] }]).stdout).toBe("");
  });
});
