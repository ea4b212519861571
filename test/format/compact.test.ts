import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { formatReport } from "../../src/format/report.js";
import type { Diagnostic, FileResult } from "../../src/validator/diagnostic.js";
import { OPTIONS, results } from "./fixtures.js";

const compact = (r: FileResult[], quiet = false) => formatReport("compact", r, { ...OPTIONS, quiet }).stdout;

const diag = (over: Partial<Diagnostic>): Diagnostic => ({
  severity: "error",
  rule: "schema/type",
  message: "m",
  pointer: "",
  line: 1,
  column: 1,
  endLine: 1,
  endColumn: 2,
  ...over,
});

describe("compact", () => {
  it("prints file:line:col: severity: message (suggestion) [rule], sorted by file then position, nothing else", () => {
    expect(compact(results())).toBe(
      [
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

  it("prints nothing at all for clean files, and only errors under quiet", () => {
    expect(compact([results()[1]!])).toBe("");
    expect(compact([])).toBe("");
    const quiet = compact(results(), true).trimEnd().split("\n");
    expect(quiet).toHaveLength(7);
    expect(quiet.every((l) => l.includes(": error: "))).toBe(true);
    // The near miss: without quiet the warning and the info are there.
    expect(compact(results())).toMatch(/: warning: .*\n.*\n.*\n.*\n.*\n.*: info: /);
  });

  it("does not depend on the order files and diagnostics arrive in", () => {
    const shuffled = results()
      .reverse()
      .map((r) => ({ ...r, diagnostics: [...r.diagnostics].reverse() }));
    expect(compact(shuffled)).toBe(compact(results()));
  });

  it("keeps a directory's files together (paths compare segment by segment)", () => {
    const files = ["dir-x/b.yaml", "dir/sub/c.yaml", "dir/a.yaml", "dir.yaml"].map((file) => ({ file, valid: false, diagnostics: [diag({})] }));
    expect(
      compact(files)
        .trimEnd()
        .split("\n")
        .map((l) => l.split(":")[0]),
    ).toEqual(["dir/a.yaml", "dir/sub/c.yaml", "dir-x/b.yaml", "dir.yaml"]);
  });

  it("never lets a message break the one-line-per-diagnostic promise or drive the terminal", () => {
    const out = compact([{ file: "a\nb.yaml", valid: false, diagnostics: [diag({ message: "x\r\ny\rz\u2028w \u001b[31mred\u001b[0m \u202Eevil", suggestion: "did you\nmean?" })] }]);
    expect(out).toBe("a b.yaml:1:1: error: x y z w ␛[31mred␛[0m �evil (did you mean?) [schema/type]\n");
  });

  it("prints one line per diagnostic for any message (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary" }), { minLength: 1, maxLength: 5 }), fc.string({ unit: "binary", minLength: 1 }), (messages, file) => {
        const out = compact([{ file, valid: false, diagnostics: messages.map((message) => diag({ message })) }]);
        expect(out.endsWith("\n")).toBe(true);
        expect(out.slice(0, -1).split(/\r\n|[\r\n\u2028\u2029]/)).toHaveLength(messages.length);
        expect(out).not.toMatch(/\u001b/);
      }),
    );
  });
});
