import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Expr, parseExpression, pathReferences, printExpression, referencedPaths } from "../../src/grammar/expression/index.js";
import { anyText, stringFrom } from "./arbitraries.js";
import { exprArb, shape } from "./expression-ast.js";

function parse(text: string): Expr {
  const result = parseExpression(text);
  if (!result.ok) throw new Error(`${text}: ${result.error.message} at ${result.error.offset}`);
  return result.value;
}

function canonical(text: string): string {
  return printExpression(parse(text));
}

describe("parseExpression: the spec's examples", () => {
  it("status in ['success','failure']", () => {
    expect(parse("status in ['success','failure']")).toEqual({
      type: "compare",
      op: "in",
      left: { type: "path", path: ["status"], offset: 0, length: 6 },
      right: {
        type: "list",
        items: [
          { type: "literal", value: "success", offset: 11, length: 9 },
          { type: "literal", value: "failure", offset: 21, length: 9 },
        ],
        offset: 10,
        length: 21,
      },
      offset: 0,
      length: 31,
    });
  });

  it("kappa > 0 and registered_system == 'graphonomous'", () => {
    expect(shape(parse("kappa > 0"))).toEqual({ op: ">", left: { path: ["kappa"] }, right: { literal: 0 } });
    expect(shape(parse("registered_system == 'graphonomous'"))).toEqual({
      op: "==",
      left: { path: ["registered_system"] },
      right: { literal: "graphonomous" },
    });
  });
});

describe("parseExpression: literals and paths", () => {
  it.each([
    ["0", 0],
    ["-7", -7],
    ["3.25", 3.25],
    ["-1.5e3", -1500],
    ["2E-2", 0.02],
    ["1e+2", 100],
    ["'it\\'s'", "it's"],
    ['"say \\"hi\\""', 'say "hi"'],
    ["'a\\\\b'", "a\\b"],
    ["'l1\\nl2\\tx\\r'", "l1\nl2\tx\r"],
    ["'\\u00e9\\u0041'", "éA"],
    ["'κ'", "κ"],
    ["\"it's\"", "it's"],
    ["''", ""],
    ["true", true],
    ["false", false],
    ["null", null],
  ])("%s", (text, value) => {
    expect(parse(text)).toEqual({ type: "literal", value, offset: 0, length: text.length });
  });

  it("paths, with keywords allowed after a dot", () => {
    expect(shape(parse("a"))).toEqual({ path: ["a"] });
    expect(shape(parse("_x.y_2.Z"))).toEqual({ path: ["_x", "y_2", "Z"] });
    expect(shape(parse("request.in"))).toEqual({ path: ["request", "in"] });
    expect(shape(parse("android"))).toEqual({ path: ["android"] });
    expect(shape(parse("notes"))).toEqual({ path: ["notes"] });
  });

  it("lists, empty and nested", () => {
    expect(shape(parse("[]"))).toEqual({ list: [] });
    expect(shape(parse("[1, 'a', x, [null]]"))).toEqual({
      list: [{ literal: 1 }, { literal: "a" }, { path: ["x"] }, { list: [{ literal: null }] }],
    });
  });
});

describe("parseExpression: operators and precedence", () => {
  it.each([
    ["a or b and c", "a or b and c", { op: "or", left: { path: ["a"] }, right: { op: "and", left: { path: ["b"] }, right: { path: ["c"] } } }],
    ["(a or b) and c", "(a or b) and c", { op: "and", left: { op: "or", left: { path: ["a"] }, right: { path: ["b"] } }, right: { path: ["c"] } }],
    ["not a and b", "not a and b", { op: "and", left: { not: { path: ["a"] } }, right: { path: ["b"] } }],
    ["not a == 1", "not a == 1", { not: { op: "==", left: { path: ["a"] }, right: { literal: 1 } } }],
    ["!!a", "not not a", { not: { not: { path: ["a"] } } }],
    ["a && b || c", "a and b or c", { op: "or", left: { op: "and", left: { path: ["a"] }, right: { path: ["b"] } }, right: { path: ["c"] } }],
    ["a not in ['x']", "a not in ['x']", { op: "not in", left: { path: ["a"] }, right: { list: [{ literal: "x" }] } }],
    ["'ok' in status", "'ok' in status", { op: "in", left: { literal: "ok" }, right: { path: ["status"] } }],
    ["a or b or c", "a or b or c", { op: "or", left: { op: "or", left: { path: ["a"] }, right: { path: ["b"] } }, right: { path: ["c"] } }],
    ["(a == b) == true", "(a == b) == true", { op: "==", left: { op: "==", left: { path: ["a"] }, right: { path: ["b"] } }, right: { literal: true } }],
  ])("%s", (text, printed, tree) => {
    expect(shape(parse(text))).toEqual(tree);
    expect(canonical(text)).toBe(printed);
  });

  it.each(["==", "!=", "<", "<=", ">", ">="])("comparison %s", (op) => {
    expect(shape(parse(`a ${op} 1`))).toEqual({ op, left: { path: ["a"] }, right: { literal: 1 } });
    expect(shape(parse(`a${op}'x'`))).toEqual({ op, left: { path: ["a"] }, right: { literal: "x" } });
  });

  it("spans cover each node's source text", () => {
    const text = "(a.b >= 2) && !c";
    const tree = parse(text);
    expect(tree).toMatchObject({ offset: 0, length: text.length });
    if (tree.type !== "logical") throw new Error("expected and");
    expect(text.slice(tree.left.offset, tree.left.offset + tree.left.length)).toBe("a.b >= 2");
    expect(text.slice(tree.right.offset, tree.right.offset + tree.right.length)).toBe("!c");
  });
});

describe("parseExpression: rejections point at the problem", () => {
  it.each([
    ["", "empty expression", 0, 0],
    ["   ", "empty expression", 0, 3],
    ["a < b < c", `comparisons do not chain; join them with "and": a < b and b < c`, 6, 1],
    ["a == b in c", "comparisons do not chain", 7, 2],
    ["a == b not in c", "comparisons do not chain", 7, 6],
    ["a == ", `expected a value after "=="`, 5, 0],
    ["a == )", `expected a value after "==", found ")"`, 5, 1],
    ["a and", `expected a value after "and"`, 5, 0],
    ["not", `expected a value after "not"`, 3, 0],
    ["in x", `expected a value, found "in"`, 0, 2],
    ["a not b", `expected "in" after "not"`, 2, 3],
    ["a = 1", `use "==" to compare`, 2, 1],
    // A stray "=" after an operator is not a missing "=": say what is actually wrong.
    ["status == = 'success'", `expected a value after "==", found "="`, 10, 1],
    ["a != = 1", `expected a value after "!=", found "="`, 5, 1],
    ["a < = 1", `unexpected "=" after "<"; write "<=" with no space`, 4, 1],
    ["a === 1", `use "==" (comparison is always strict)`, 2, 3],
    ["a !== 1", `use "!="`, 2, 3],
    ["a <> 1", `use "!="`, 2, 2],
    ["a => 1", `use ">="`, 2, 2],
    ["a & b", `use "and"`, 2, 1],
    ["a | b", `use "or"`, 2, 1],
    ["(a", `unclosed "("`, 0, 1],
    ["(a b", `expected ")" to close the "(" at column 1, found "b"`, 3, 1],
    ["a)", `unexpected ")" with no matching "("`, 1, 1],
    [")", `unexpected ")" with no matching "("`, 0, 1],
    ["[1, 2", `unclosed "["`, 0, 1],
    ["[1 2]", `expected "," or "]" in the list, found "2"`, 3, 1],
    ["[1,]", `expected a value after ",", found "]"`, 3, 1],
    ["a b", `unexpected "b" after a complete condition; join conditions with "and" or "or"`, 2, 1],
    ["x in 5", `the right side of "in" must be a list, a string or a path`, 5, 1],
    ["x not in null", `the right side of "not in" must be a list`, 9, 4],
    ["a < true", `"<" compares two numbers or two strings, never true`, 4, 4],
    ["a >= [1]", `never a list`, 5, 3],
    ["(a == 1) < 2", `never a condition`, 1, 6],
    ["1 < 'a'", `between a number and a string is never true`, 2, 1],
    ["True", `keywords are lower-case: write "true"`, 0, 4],
    ["a AND b", `keywords are lower-case: write "and"`, 2, 3],
    ["null.x", `"null" is a keyword and cannot start a path`, 0, 4],
    ["a.", `expected a field name after "."`, 1, 1],
    ["a..b", `expected a field name after "."`, 1, 1],
    ["a.1", `expected a field name after "."`, 1, 1],
    ["-", `"-" must be followed by a digit`, 0, 1],
    ["- 1", `"-" must be followed by a digit`, 0, 1],
    ["007", "leading zeros", 0, 1],
    ["1.", `expected digits after "."`, 1, 1],
    [".5", `write a digit before "."`, 0, 1],
    ["1e", "expected digits in the exponent", 1, 1],
    ["1e999", `number "1e999" is out of range`, 0, 5],
    ["5m", `unexpected "m" after the number 5`, 1, 1],
    ["'abc", "unterminated string", 0, 4],
    ["a == 'x\\'", "unterminated string", 5, 4],
    ["'\\q'", `unknown escape "\\q"`, 1, 2],
    ["'\\u12'", "expected 4 hex digits after \\u", 1, 5],
    ["a @ b", `unexpected character "@"`, 2, 1],
    ["a == 😀", `unexpected character "😀"`, 5, 2],
  ])("%j", (text, message, offset, length) => {
    const result = parseExpression(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.message).toContain(message);
    expect(result.error.offset).toBe(offset);
    expect(result.error.length).toBe(length);
  });

  it("accepts the near misses of those rejections", () => {
    for (const text of ["a < b and b < c", "a == 1", "(a)", "[1, 2]", "x in 'abc'", "a < 'b'", "true", "-1", "0.5", "1e9", "'\\u12ab'", "x == 0", "status == 'success'", "a != 1", "a <= 1"]) {
      expect(parseExpression(text).ok, text).toBe(true);
    }
  });
});

describe("parseExpression: limits", () => {
  it("nests up to 64 levels and reports the 65th", () => {
    expect(parseExpression(`${"(".repeat(64)}a${")".repeat(64)}`).ok).toBe(true);
    const deep = parseExpression(`${"(".repeat(65)}a${")".repeat(65)}`);
    expect(deep).toEqual({ ok: false, error: { message: "expression is nested too deeply (at most 64 levels)", offset: 64, length: 1 } });
    expect(parseExpression(`${"[".repeat(64)}${"]".repeat(64)}`).ok).toBe(true);
    expect(parseExpression(`${"!".repeat(64)}a`).ok).toBe(true);
    expect(parseExpression(`${"not ".repeat(65)}a`).ok).toBe(false);
  });

  it("rejects pathological nesting without exhausting the stack", () => {
    for (const text of ["(".repeat(4000), "[".repeat(4096), "!".repeat(4096), "not ".repeat(1000), "[(".repeat(2000)]) {
      const result = parseExpression(text);
      expect(result.ok).toBe(false);
    }
  });

  it("accepts 4096 characters and rejects 4097", () => {
    const atLimit = "a or ".repeat(819) + "abcde";
    expect(atLimit.length).toBe(4100);
    const within = atLimit.slice(4);
    expect(within.length).toBe(4096);
    expect(parseExpression(within).ok).toBe(true);
    const over = parseExpression(`${within} `);
    expect(over).toMatchObject({ ok: false, error: { offset: 4096, length: 1 } });
    expect(!over.ok && over.error.message).toContain("too long");
  });
});

describe("printExpression", () => {
  it("writes a canonical form: keywords, single quotes, minimal parentheses", () => {
    expect(canonical(`a&&(b||!c)`)).toBe("a and (b or not c)");
    expect(canonical(`((a))`)).toBe("a");
    expect(canonical(`x=="it's"`)).toBe("x == 'it\\'s'");
    expect(canonical(`a or (b or c)`)).toBe("a or (b or c)");
    expect(canonical(`(not a) == b`)).toBe("(not a) == b");
    expect(canonical(`[1,2.50,-0,1E3]`)).toBe("[1, 2.5, -0, 1000]");
    expect(canonical(`'\\u0001\\n'`)).toBe("'\\u0001\\n'");
  });

  it("parse(print(e)) is structurally equal to e for generated expressions", () => {
    fc.assert(
      fc.property(exprArb, (expr) => {
        const printed = printExpression(expr);
        const reparsed = parseExpression(printed);
        if (!reparsed.ok) throw new Error(`${printed}: ${reparsed.error.message}`);
        expect(shape(reparsed.value)).toEqual(shape(expr));
        expect(printExpression(reparsed.value)).toBe(printed);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("referencedPaths", () => {
  it("lists every distinct path once, in order, including those inside lists", () => {
    expect(referencedPaths(parse("a.b == 1 and c in [d, a.b, 'a'] or not e.f"))).toEqual([["a", "b"], ["c"], ["d"], ["e", "f"]]);
    expect(referencedPaths(parse("1 == 1"))).toEqual([]);
  });

  it("pathReferences keeps every occurrence with its position", () => {
    const text = "x == 1 or x == 2";
    expect(pathReferences(parse(text)).map((p) => [p.path.join("."), p.offset])).toEqual([
      ["x", 0],
      ["x", 10],
    ]);
  });
});

describe("parseExpression never throws", () => {
  const alphabet = ["a", "b.c", "in", "not", "and", "or", "&&", "||", "!", "==", "!=", "<", "<=", ">", "=", "(", ")", "[", "]", ",", "'", '"', "\\", "\\u", "1", "-", ".", "e", "0", "true", "null", " ", "."];

  it("on arbitrary text and on strings over its own alphabet", () => {
    fc.assert(
      fc.property(fc.oneof(anyText, stringFrom(alphabet, 30)), (text) => {
        const result = parseExpression(text);
        if (result.ok) {
          expect(parseExpression(printExpression(result.value)).ok).toBe(true);
        } else {
          expect(result.error.offset).toBeGreaterThanOrEqual(0);
          expect(result.error.offset + result.error.length).toBeLessThanOrEqual(text.length);
          expect(result.error.message).not.toBe("");
        }
      }),
      { numRuns: 3000 },
    );
  });
});
