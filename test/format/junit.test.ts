import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { xmlAttribute, xmlText } from "../../src/format/junit.js";
import { formatReport } from "../../src/format/report.js";
import type { Diagnostic, FileResult } from "../../src/validator/diagnostic.js";
import { OPTIONS, results } from "./fixtures.js";
import { childrenNamed, parseXml, textOf } from "./xml-check.js";

const junit = (r: readonly FileResult[], quiet = false) => formatReport("junit", r, { ...OPTIONS, quiet }).stdout;

const diag = (over: Partial<Diagnostic>): Diagnostic => ({ severity: "error", rule: "schema/type", message: "m", pointer: "", line: 1, column: 1, endLine: 1, endColumn: 2, ...over });

/** What XML 1.0 can carry of a string: lone surrogates and forbidden controls become U+FFFD. */
function legal(s: string): string {
  return s
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD")
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, "\uFFFD");
}

describe("junit", () => {
  it("is well-formed XML: one suite, one case per manifest, a failure per manifest with errors", () => {
    const out = junit(results());
    expect(out.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n')).toBe(true);
    const root = parseXml(out);
    expect(root.name).toBe("testsuites");
    expect(root.attributes).toEqual({ name: "pulse-validate", tests: "5", failures: "4", errors: "0" });
    const suites = childrenNamed(root, "testsuite");
    expect(suites).toHaveLength(1);
    const suite = suites[0]!;
    expect(suite.attributes).toEqual({ name: "pulse-validate", tests: "5", failures: "4", errors: "0", skipped: "0" });
    const cases = childrenNamed(suite, "testcase");
    expect(cases.map((c) => c.attributes.classname)).toEqual(["empty.yaml", "loops/dir with space/bad,loop.yaml", "manifests/ok.yaml", "odd:name%.json", "unreadable.yaml"]);
    expect(cases.every((c) => c.attributes.name === "manifest validation" && c.attributes.file === c.attributes.classname)).toBe(true);
    expect(cases.map((c) => childrenNamed(c, "failure").length)).toEqual([1, 1, 0, 1, 1]);
    // The clean manifest is a passing, empty test case.
    expect(cases[2]!.children).toEqual([]);
  });

  it("lists every error in the failure and the warnings and infos in system-out", () => {
    const bad = childrenNamed(childrenNamed(parseXml(junit(results())), "testsuite")[0]!, "testcase")[1]!;
    const failure = childrenNamed(bad, "failure")[0]!;
    expect(failure.attributes).toEqual({
      message: 'phases[0].kind must be one of retrieve, route, act, learn, consolidate, custom; found the string "retreive" (and 3 more errors)',
      type: "schema/enum",
    });
    expect(textOf(failure)).toBe(
      [
        'loops/dir with space/bad,loop.yaml:5:11: error: phases[0].kind must be one of retrieve, route, act, learn, consolidate, custom; found the string "retreive" (did you mean "retrieve"?) [schema/enum]',
        'loops/dir with space/bad,loop.yaml:6:5: error: unknown property "timeout" in phases[0] (did you mean "timeout_ms"?) [schema/unknown-property]',
        'loops/dir with space/bad,loop.yaml:7:9: error: phases[1].id must match ^[a-z0-9_]+$; found "判断" [schema/pattern]',
        'loops/dir with space/bad,loop.yaml:9:41: error: closure.to_phase "nowhere" is not a phase: <fetch> & <判断> exist, 100% sure fix the `to_phase` | or add the phase [pulse/closure-unknown-phase]',
      ].join("\n"),
    );
    expect(textOf(childrenNamed(bad, "system-out")[0]!)).toBe(
      [
        'loops/dir with space/bad,loop.yaml:4:3: warning: the loop has no phase of kind "retrieve" (§3.2: every loop must read context from a substrate) [pulse/missing-retrieve]',
        'loops/dir with space/bad,loop.yaml:11:65: info: connection c1 targets loop "ops.audit", which was not given: not checked [pulse/connection-external]',
      ].join("\n"),
    );
    const single = childrenNamed(childrenNamed(parseXml(junit(results())), "testsuite")[0]!, "testcase")[0]!;
    expect(childrenNamed(single, "failure")[0]!.attributes.message).toBe("the file is empty");
  });

  it("passes a manifest with warnings only, and drops its system-out under quiet", () => {
    const warned: FileResult = { file: "w.yaml", valid: true, diagnostics: [diag({ severity: "warning", rule: "pulse/missing-act", message: "no act phase" })] };
    const root = parseXml(junit([warned]));
    expect(root.attributes.failures).toBe("0");
    const tc = childrenNamed(childrenNamed(root, "testsuite")[0]!, "testcase")[0]!;
    expect(childrenNamed(tc, "failure")).toEqual([]);
    expect(textOf(childrenNamed(tc, "system-out")[0]!)).toBe("w.yaml:1:1: warning: no act phase [pulse/missing-act]");
    expect(junit([warned], true)).toContain('<testcase classname="w.yaml" name="manifest validation" file="w.yaml"/>');
  });

  it("escapes markup and replaces what XML 1.0 cannot hold", () => {
    expect(xmlText("a<b>&c]]>\r\n")).toBe("a&lt;b&gt;&amp;c]]&gt;&#13;\n");
    expect(xmlAttribute('a"b\'<&>\n\t\r')).toBe("a&quot;b'&lt;&amp;&gt;&#10;&#9;&#13;");
    expect(xmlText("nul\u0000 esc\u001b bad\uD800 ok\uD83D\uDE00 \uFFFF")).toBe("nul\uFFFD esc\uFFFD bad\uFFFD ok\uD83D\uDE00 \uFFFD");
    const hostile = junit([{ file: 'x"<&\u0001.yaml', valid: false, diagnostics: [diag({ message: "]]> <!-- & \u0000\u001b[31m\nnext", rule: 'r"&<' })] }]);
    const tc = childrenNamed(childrenNamed(parseXml(hostile), "testsuite")[0]!, "testcase")[0]!;
    expect(tc.attributes.classname).toBe('x"<&\uFFFD.yaml');
    expect(childrenNamed(tc, "failure")[0]!.attributes).toEqual({ message: "]]> <!-- & ␀␛[31m next", type: 'r"&<' });
  });

  it("carries any text through an attribute or character data unchanged, once XML can hold it (property)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (a, t) => {
        const root = parseXml(`<x a="${xmlAttribute(a)}">${xmlText(t)}</x>`);
        expect(root.attributes.a).toBe(legal(a));
        expect(textOf(root)).toBe(legal(t));
      }),
    );
  });

  it("the XML checker refuses what is not well-formed (it would catch a broken reporter)", () => {
    for (const bad of ["<a><b></a></b>", '<a x="1" x="2"/>', "<a x=1/>", '<a x="<"/>', "<a>&nbsp;</a>", "<a>&#0;</a>", "<a>]]></a>", "<a>\u0001</a>", "<a/><b/>", "<a>", "text"]) {
      expect(() => parseXml(bad), bad).toThrow(/not well-formed/);
    }
    // The near miss: the same shapes, written correctly, parse.
    expect(parseXml('<?xml version="1.0"?>\n<a x="1" y=\'2\'><b/>&amp;&#x263A;<!-- c --></a>\n').children).toEqual([{ name: "b", attributes: {}, children: [] }, "&☺"]);
  });
});
