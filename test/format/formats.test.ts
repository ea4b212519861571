import { describe, expect, it } from "vitest";
import { formatReport, type ReportOptions } from "../../src/format/report.js";
import { escapeData, escapeProperty } from "../../src/format/github.js";
import { fileUri } from "../../src/format/sarif.js";
import { xml } from "../../src/format/junit.js";
import { RULES } from "../../src/validator/rule-catalog.js";
import { results } from "./fixtures.js";

const options: ReportOptions = {
  color: false,
  toolVersion: "9.9.9",
  rules: RULES.map((r) => ({ id: r.id, summary: r.summary, explanation: r.explanation, defaultSeverity: r.severity })),
};

describe("compact", () => {
  it("prints exactly file:line:col: severity: message [rule], one per line", () => {
    expect(formatReport("compact", results(), options).stdout).toBe(
      [
        'dir with space/bad,one.yaml:3:8: error: phases[0].kind must be one of retrieve, act; found the string "retreive" (did you mean "retrieve"?) [schema/enum]',
        "dir with space/bad,one.yaml:1:1: warning: 50% <done> & more: a, b second line [pulse/missing-act]",
        "dir with space/bad,one.yaml:4:5: info: κ-routing target ✓ [pulse/connection-external]",
        "empty.json:1:1: error: the file is empty [input/empty]",
        "",
      ].join("\n"),
    );
  });

  it("prints nothing for clean files, and only errors with quiet", () => {
    expect(formatReport("compact", [results()[0]!], options).stdout).toBe("");
    const quiet = formatReport("compact", results(), { ...options, quiet: true }).stdout;
    expect(quiet.trim().split("\n").map((l) => l.split(": ")[1])).toEqual(["error", "error"]);
  });
});

describe("json", () => {
  it("is the documented contract, keys in order, optional keys omitted", () => {
    const out = formatReport("json", results(), options).stdout;
    expect(out.endsWith("}\n")).toBe(true);
    const doc = JSON.parse(out);
    expect(Object.keys(doc)).toEqual(["version", "files", "summary"]);
    expect(doc.version).toBe(1);
    expect(doc.summary).toEqual({ files: 3, valid: 1, invalid: 2, errors: 2, warnings: 1, infos: 1 });
    expect(doc.files[0]).toEqual({ file: "ok.yaml", valid: true, diagnostics: [] });
    expect(Object.keys(doc.files[1].diagnostics[0])).toEqual(["severity", "rule", "message", "pointer", "line", "column", "endLine", "endColumn", "suggestion"]);
    expect(Object.keys(doc.files[1].diagnostics[1])).not.toContain("suggestion");
    expect(out).not.toContain('"text"');
  });
});

describe("github", () => {
  it("escapes workflow-command data and properties", () => {
    expect(escapeData("a%b\r\nc")).toBe("a%25b%0D%0Ac");
    expect(escapeProperty("dir,a:b%")).toBe("dir%2Ca%3Ab%25");
  });

  it("prints annotations, then the compact lines, and a step summary", () => {
    const report = formatReport("github", results(), options);
    const lines = report.stdout.trim().split("\n");
    expect(lines[0]).toBe(
      '::error file=dir with space/bad%2Cone.yaml,line=3,col=8,endLine=3,endColumn=18,title=schema/enum::phases[0].kind must be one of retrieve, act; found the string "retreive" (did you mean "retrieve"?)',
    );
    expect(lines[1]).toBe("::warning file=dir with space/bad%2Cone.yaml,line=1,col=1,endLine=4,endColumn=17,title=pulse/missing-act::50%25 <done> & more: a, b%0Asecond line");
    expect(lines[2]).toMatch(/^::notice file=.*title=pulse\/connection-external::κ-routing target ✓$/);
    expect(lines[4]).toBe('dir with space/bad,one.yaml:3:8: error: phases[0].kind must be one of retrieve, act; found the string "retreive" (did you mean "retrieve"?) [schema/enum]');
    expect(report.stepSummary).toContain("| dir with space/bad,one.yaml | **no** | 1 | 1 | 1 |");
    expect(report.stepSummary).toContain("50% &lt;done&gt; &amp; more: a, b second line");
  });
});

describe("sarif", () => {
  it("is SARIF 2.1.0 with rules, levels, regions and encoded relative URIs", () => {
    const log = JSON.parse(formatReport("sarif", results(), options).stdout);
    expect(log.version).toBe("2.1.0");
    expect(log.$schema).toBe("https://json.schemastore.org/sarif-2.1.0.json");
    const run = log.runs[0];
    expect(run.tool.driver).toMatchObject({ name: "pulse-validate", version: "9.9.9" });
    expect(run.tool.driver.rules).toHaveLength(RULES.length);
    for (const r of run.results) {
      expect(run.tool.driver.rules[r.ruleIndex].id).toBe(r.ruleId);
      expect(["error", "warning", "note"]).toContain(r.level);
    }
    expect(run.results.map((r: { level: string }) => r.level)).toEqual(["error", "warning", "note", "error"]);
    const loc = run.results[0].locations[0].physicalLocation;
    expect(loc.artifactLocation).toEqual({ uri: "dir%20with%20space/bad%2Cone.yaml", uriBaseId: "%SRCROOT%" });
    expect(loc.region).toEqual({ startLine: 3, startColumn: 8, endLine: 3, endColumn: 18 });
    expect(run.results[0].message.text).toContain('did you mean "retrieve"?');
    expect(run.artifacts).toHaveLength(3);
  });

  it("encodes file paths as URI references", () => {
    expect(fileUri("./a b/c#d.yaml")).toBe("a%20b/c%23d.yaml");
    expect(fileUri("/abs/x.yaml")).toBe("file:///abs/x.yaml");
    expect(fileUri("win\\dir\\x.yaml")).toBe("win/dir/x.yaml");
  });
});

describe("junit", () => {
  it("is well-formed XML with a test case per file and failures for invalid ones", () => {
    const out = formatReport("junit", results(), options).stdout;
    expectWellFormed(out);
    expect(out).toContain('<testsuite name="pulse-validate" tests="3" failures="2" errors="0" skipped="0">');
    expect(out.match(/<testcase /g)).toHaveLength(3);
    expect(out.match(/<failure /g)).toHaveLength(2);
    expect(out).toContain("50% &lt;done&gt; &amp; more");
  });

  it("replaces characters XML 1.0 cannot hold", () => {
    expect(xml("a\u0000b\u001bc\uD800")).toBe("a\uFFFDb\uFFFDc\uFFFD");
    expect(xml("<&>\"'")).toBe("&lt;&amp;&gt;&quot;&apos;");
  });
});

describe("pretty", () => {
  it("prints a code frame with the caret under the exact span, tabs expanded", () => {
    const out = formatReport("pretty", results(), options).stdout;
    const lines = out.split("\n");
    const at = lines.findIndex((l) => l.startsWith("dir with space/bad,one.yaml:3:8"));
    expect(lines[at + 1]).toBe("  2 |   - id: fetch");
    expect(lines[at + 2]).toBe('> 3 |     kind: "retreive"');
    // Column 8 after a tab expanded to 4 spaces is display column 11: the caret sits under the quote.
    const frame = lines[at + 2]!;
    const caret = lines[at + 3]!;
    expect(caret.indexOf("^")).toBe(frame.indexOf('"'));
    expect(caret.trim().replace(/^\|\s*/, "")).toBe("^~~~~~~~~~");
    expect(lines[at + 4]).toBe('      did you mean "retrieve"?');
    expect(out).not.toMatch(/\u001b\[/);
    expect(lines.at(-2)).toBe("✖ 2 errors, 1 warning, 1 info in 3 files (1 valid)");
  });

  it("handles file-level diagnostics without text, and colours only when asked", () => {
    const out = formatReport("pretty", [results()[2]!], options).stdout;
    expect(out).toBe("empty.json:1:1  error  the file is empty  [input/empty]\n\n✖ 1 error, 0 warnings in 1 file (0 valid)\n");
    expect(formatReport("pretty", results(), { ...options, color: true }).stdout).toMatch(/\u001b\[31merror\u001b\[39m/);
    expect(formatReport("pretty", [results()[0]!], options).stdout).toBe("✔ 1 file valid\n");
  });
});

/** A small XML well-formedness check: balanced tags, quoted attributes, only known entities. */
function expectWellFormed(text: string): void {
  const body = text.replace(/^<\?xml[^>]*\?>\s*/, "");
  const stack: string[] = [];
  const tag = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>/y;
  let i = 0;
  while (i < body.length) {
    if (body[i] === "<") {
      tag.lastIndex = i;
      const m = tag.exec(body);
      expect(m, `malformed tag at ${i}: ${body.slice(i, i + 40)}`).not.toBeNull();
      const [whole, close, name, , selfClose] = m!;
      if (close) expect(stack.pop()).toBe(name);
      else if (!selfClose) stack.push(name!);
      i += whole.length;
    } else {
      const next = body.indexOf("<", i);
      const chunk = body.slice(i, next < 0 ? body.length : next);
      for (const e of chunk.matchAll(/&([^;]*);/g)) expect(["lt", "gt", "amp", "quot", "apos"]).toContain(e[1]);
      expect(chunk).not.toMatch(/&(?![a-z]+;)/);
      i = next < 0 ? body.length : next;
    }
  }
  expect(stack).toEqual([]);
}
