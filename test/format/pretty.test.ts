import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { cellWidth } from "../../src/format/cell-width.js";
import { MAX_LINE_CELLS } from "../../src/format/code-frame.js";
import { formatReport } from "../../src/format/report.js";
import { verdict } from "../../src/format/text.js";
import type { Diagnostic, FileResult } from "../../src/validator/diagnostic.js";
import { OPTIONS, results } from "./fixtures.js";

const pretty = (r: readonly FileResult[], over: { color?: boolean; quiet?: boolean } = {}) => formatReport("pretty", r, { ...OPTIONS, ...over }).stdout;
const stripAnsi = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, "");

const diag = (over: Partial<Diagnostic>): Diagnostic => ({ severity: "error", rule: "schema/type", message: "m", pointer: "", line: 1, column: 1, endLine: 1, endColumn: 2, ...over });
const one = (text: string | undefined, d: Partial<Diagnostic>): FileResult[] => [{ file: "a.yaml", valid: false, diagnostics: [diag(d)], ...(text === undefined ? {} : { text }) }];
/** The frame of a single-diagnostic report: the lines between the header and the blank line. */
const frame = (out: string) => out.split("\n").slice(1, out.split("\n").indexOf(""));

describe("pretty", () => {
  it("prints a header, a code frame with the caret under the span, and the suggestion, then the verdict", () => {
    expect(pretty(results())).toBe(
      [
        "empty.yaml:1:1  error  the file is empty  [input/empty]",
        "",
        'loops/dir with space/bad,loop.yaml:4:3  warning  the loop has no phase of kind "retrieve" (§3.2: every loop must read context from a substrate)  [pulse/missing-retrieve]',
        "  3 | phases:",
        "> 4 |   - id: fetch",
        "    |   ^~~~~~~~~~~",
        "",
        'loops/dir with space/bad,loop.yaml:5:11  error  phases[0].kind must be one of retrieve, route, act, learn, consolidate, custom; found the string "retreive"  [schema/enum]',
        "  4 |   - id: fetch",
        '> 5 |     kind:   "retreive"',
        "    |             ^~~~~~~~~~",
        '  did you mean "retrieve"?',
        "",
        'loops/dir with space/bad,loop.yaml:6:5  error  unknown property "timeout" in phases[0]  [schema/unknown-property]',
        '  5 |     kind:   "retreive"',
        "> 6 |     timeout: 500",
        "    |     ^~~~~~~",
        '  did you mean "timeout_ms"?',
        "",
        'loops/dir with space/bad,loop.yaml:7:9  error  phases[1].id must match ^[a-z0-9_]+$; found "判断"  [schema/pattern]',
        "  6 |     timeout: 500",
        "> 7 |   - id: 判断",
        "    |         ^~~~",
        "",
        'loops/dir with space/bad,loop.yaml:9:41  error  closure.to_phase "nowhere" is not a phase: <fetch> & <判断> exist, 100% sure  [pulse/closure-unknown-phase]',
        "    fix the `to_phase` | or add the phase",
        "  8 |     kind: act",
        "> 9 | closure: { from_phase: fetch, to_phase: nowhere }",
        "    |                                         ^~~~~~~",
        "",
        'loops/dir with space/bad,loop.yaml:11:65  info  connection c1 targets loop "ops.audit", which was not given: not checked  [pulse/connection-external]',
        "  10 | connections:",
        "> 11 |   - { id: c1, emit_phase: fetch, token: OutcomeSignal, to_loop: ops.audit }",
        "     |                                                                 ^~~~~~~~~",
        "  note: loop ops.audit at loops/ops.yaml",
        "",
        "odd:name%.json:3:3  error  expected ',' or '}' after a property value, found '\"'  [json/syntax]",
        '  2 |   "loop_id": "x.y"',
        '> 3 |   "phases": []',
        "    |   ^",
        "",
        "unreadable.yaml  error  the file is not valid UTF-8 text  [input/encoding]",
        "",
        "✖ 7 errors, 1 warning, 1 info in 5 files (1 valid)",
        "",
      ].join("\n"),
    );
  });

  it("colours only when asked: the coloured text is the plain text plus escapes", () => {
    const plain = pretty(results());
    expect(plain).not.toMatch(/\u001b/);
    const coloured = pretty(results(), { color: true });
    expect(stripAnsi(coloured)).toBe(plain);
    expect(coloured).toContain("\u001b[31merror\u001b[39m");
    expect(coloured).toContain("\u001b[33mwarning\u001b[39m");
    expect(coloured).toContain("\u001b[36minfo\u001b[39m");
    expect(coloured).toContain("\u001b[31m>\u001b[39m \u001b[2m5 |\u001b[22m     kind:   \"retreive\"\n  \u001b[2m  |\u001b[22m             \u001b[31m^~~~~~~~~~\u001b[39m\n");
    expect(coloured).toContain('\u001b[32mdid you mean "retrieve"?\u001b[39m');
    expect(coloured).toMatch(/\u001b\[31m✖ 7 errors.*\u001b\[39m\n$/);
  });

  it("never prints an escape sequence from the manifest or the message, coloured or not", () => {
    const hostile = one("key: \u001b[2J\u001b]8;;evil\u0007x\u009b\u202Eabc\n", { message: "bad \u001b[31mkey\u001b[0m", column: 6, endColumn: 10, rule: "schema/unknown-property", suggestion: "did you mean \u001b?" });
    const plain = pretty(hostile);
    expect(plain).not.toMatch(/[\u001b\u0007\u009b\u202e]/);
    expect(plain).toContain("bad ␛[31mkey␛[0m");
    expect(frame(plain)).toEqual(["> 1 | key: ␛[2J␛]8;;evil␇x��abc", "    |      ^~~~", "  did you mean ␛?"]);
    expect(stripAnsi(pretty(hostile, { color: true }))).toBe(plain);
  });

  it("prints only the header for a diagnostic without a position or a file without text", () => {
    expect(pretty(one(undefined, { line: 0, column: 0, endLine: 0, endColumn: 0 }))).toBe("a.yaml  error  m  [schema/type]\n\n✖ 1 error in 1 file (0 valid)\n");
    expect(pretty(one(undefined, { line: 3, column: 2 }))).toBe("a.yaml:3:2  error  m  [schema/type]\n\n✖ 1 error in 1 file (0 valid)\n");
    expect(pretty(one("", { line: 1 }))).toBe("a.yaml:1:1  error  m  [schema/type]\n\n✖ 1 error in 1 file (0 valid)\n");
    expect(pretty(one("a: 1\n", { line: 7, column: 1 }))).toBe("a.yaml:7:1  error  m  [schema/type]\n\n✖ 1 error in 1 file (0 valid)\n");
    // The near miss: a position inside the text does get a frame.
    expect(frame(pretty(one("a: 1\n", { line: 1, column: 4, endColumn: 5 })))).toEqual(["> 1 | a: 1", "    |    ^"]);
  });

  it("points just past the end of a line, and underlines a multi-line span to the end of its first line", () => {
    expect(frame(pretty(one("a: [1,\nb: 2\n", { line: 1, column: 7, endColumn: 8 })))).toEqual(["> 1 | a: [1,", "    |       ^"]);
    expect(frame(pretty(one("x: 0\nphases:\n  - a\n", { line: 2, column: 1, endLine: 3, endColumn: 6 })))).toEqual(["  1 | x: 0", "> 2 | phases:", "    | ^~~~~~~"]);
    expect(frame(pretty(one("k: v\r\nkey: value\r\n", { line: 2, column: 6, endColumn: 11 })))).toEqual(["  1 | k: v", "> 2 | key: value", "    |      ^~~~~"]);
  });

  it("lines the caret up under tabs, wide characters and emoji (property)", () => {
    const unit = fc.constantFrom("a", " ", "\t", "中", "😀", "é", "-");
    const text = (max: number) => fc.array(unit, { maxLength: max }).map((a) => a.join(""));
    /** Independent oracle: tab stops of 4, CJK and emoji two cells. */
    const cells = (s: string) => {
      let n = 0;
      for (const ch of s) n = ch === "\t" ? n + 4 - (n % 4) : n + (ch === "中" || ch === "😀" ? 2 : 1);
      return n;
    };
    fc.assert(
      fc.property(text(20), text(8).filter((s) => s.length > 0 && !s.includes("\t")), text(20), (before, span, after) => {
        const line = before + span + after;
        const out = pretty(one(`${line}\n`, { column: before.length + 1, endColumn: before.length + span.length + 1 }));
        const [shown, caret] = frame(out) as [string, string];
        expect(shown).toBe(`> 1 | ${expandTabs(line, cells)}`);
        const start = caret.indexOf("^");
        expect(start - "    | ".length).toBe(cells(before));
        expect(caret.length - start).toBe(cells(before + span) - cells(before));
      }),
    );
  });

  it("windows lines longer than 160 cells around the span, caret still under it", () => {
    const line = "x".repeat(300) + "TARGET" + "y".repeat(300);
    const [shown, caret] = frame(pretty(one(`${line}\n`, { column: 301, endColumn: 307 }))) as [string, string];
    const body = shown.slice("> 1 | ".length);
    expect(body.startsWith("…")).toBe(true);
    expect(body.endsWith("…")).toBe(true);
    expect([...body].length).toBeLessThanOrEqual(MAX_LINE_CELLS + 2);
    const at = caret.indexOf("^");
    expect(caret.slice(at)).toBe("^~~~~~");
    expect(shown.slice(at, at + 6)).toBe("TARGET");
    // The near miss: a line of exactly 160 cells is shown whole.
    const whole = "z".repeat(MAX_LINE_CELLS);
    expect(frame(pretty(one(`${whole}\n`, { column: 150, endColumn: 151 })))[0]).toBe(`> 1 | ${whole}`);
    // A span at the very end of a long line keeps the end in view.
    const [endShown, endCaret] = frame(pretty(one(`${line}\n`, { column: 606, endColumn: 607 }))) as [string, string];
    expect(endShown.endsWith("y")).toBe(true);
    expect(endShown[endCaret.indexOf("^")]).toBe("y");
  });

  it("ends with a verdict that counts what was found", () => {
    expect(verdict({ files: 4, valid: 4, invalid: 0, errors: 0, warnings: 0, infos: 0 })).toBe("✔ 4 files valid");
    expect(verdict({ files: 1, valid: 1, invalid: 0, errors: 0, warnings: 0, infos: 0 })).toBe("✔ 1 file valid");
    expect(verdict({ files: 4, valid: 4, invalid: 0, errors: 0, warnings: 2, infos: 1 })).toBe("✔ 4 files valid (2 warnings, 1 info)");
    expect(verdict({ files: 2, valid: 1, invalid: 1, errors: 3, warnings: 1, infos: 0 })).toBe("✖ 3 errors, 1 warning in 2 files (1 valid)");
    expect(pretty([{ file: "a.yaml", valid: true, diagnostics: [], text: "a: 1\n" }])).toBe("✔ 1 file valid\n");
  });

  it("never claims success for a run that fails on its warnings", () => {
    const summary = { files: 4, valid: 4, invalid: 0, errors: 0, warnings: 2, infos: 1 };
    expect(verdict(summary, "more than --max-warnings 1")).toBe("✖ 2 warnings, 1 info in 4 files (4 valid): more than --max-warnings 1");
    expect(verdict({ ...summary, warnings: 0, infos: 0 }, "more than --max-warnings 1")).toBe("✖ 4 files (4 valid): more than --max-warnings 1");
    const warned: FileResult[] = [{ file: "a.yaml", valid: true, diagnostics: [diag({ severity: "warning" })], text: "a: 1\n" }];
    const failing = formatReport("pretty", warned, { ...OPTIONS, color: true, failure: "--fail-on warning" }).stdout;
    expect(stripAnsi(failing).trimEnd().split("\n").at(-1)).toBe("✖ 1 warning in 1 file (1 valid): --fail-on warning");
    expect(failing).toContain("\u001b[31m✖"); // red, as a failure
    // The near miss: the same warnings without a failing gate are a success.
    expect(pretty(warned).trimEnd().split("\n").at(-1)).toBe("✔ 1 file valid (1 warning)");
  });

  it("under quiet shows errors only, and nothing at all when there are none", () => {
    const warned: FileResult[] = [{ file: "a.yaml", valid: true, diagnostics: [diag({ severity: "warning" })], text: "a: 1\n" }];
    expect(pretty(warned, { quiet: true })).toBe("");
    expect(pretty(warned)).toContain("✔ 1 file valid (1 warning)");
    const out = pretty(results(), { quiet: true });
    expect(out).not.toMatch(/ (warning|info) /);
    expect(out.endsWith("✖ 7 errors in 5 files (1 valid)\n")).toBe(true);
  });

  it("measures cells as terminals do", () => {
    expect([..."a é中😀\u0301"].map((c) => cellWidth(c.codePointAt(0)!))).toEqual([1, 1, 1, 2, 2, 0]);
  });
});

function expandTabs(s: string, cells: (s: string) => number): string {
  let out = "";
  for (const ch of s) out += ch === "\t" ? " ".repeat(4 - (cells(out) % 4)) : ch;
  return out;
}
