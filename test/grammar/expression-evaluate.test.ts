import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type Expr, evaluate, holds, parseExpression } from "../../src/grammar/expression/index.js";
import { exprArb } from "./expression-ast.js";

function parse(text: string): Expr {
  const result = parseExpression(text);
  if (!result.ok) throw new Error(`${text}: ${result.error.message}`);
  return result.value;
}

const check = (text: string, scope: unknown): boolean => holds(parse(text), scope);

/** Reference equality for JSON values, independent of the implementation: sorted-key JSON text. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

describe("the spec's conditions", () => {
  const emit = parse("status in ['success','failure']");

  it("emit_condition: status in ['success','failure']", () => {
    expect(holds(emit, { status: "success" })).toBe(true);
    expect(holds(emit, { status: "failure" })).toBe(true);
    expect(holds(emit, { status: "timeout" })).toBe(false);
    expect(holds(emit, { status: "succ" })).toBe(false);
    expect(holds(emit, {})).toBe(false);
    expect(holds(emit, null)).toBe(false);
  });

  it("trigger conditions: kappa > 0, registered_system == 'graphonomous'", () => {
    expect(check("kappa > 0", { kappa: 1 })).toBe(true);
    expect(check("kappa > 0", { kappa: 0 })).toBe(false);
    expect(check("kappa > 0", { kappa: "1" })).toBe(false);
    expect(check("registered_system == 'graphonomous'", { registered_system: "graphonomous" })).toBe(true);
    expect(check("registered_system == 'graphonomous'", { registered_system: "Graphonomous" })).toBe(false);
  });
});

describe("paths", () => {
  it("read nested own properties and yield undefined when missing", () => {
    expect(evaluate(parse("a.b.c"), { a: { b: { c: 3 } } })).toBe(3);
    expect(evaluate(parse("a.b.c"), { a: { b: 1 } })).toBeUndefined();
    expect(evaluate(parse("a.b"), { a: null })).toBeUndefined();
    expect(evaluate(parse("a"), 42)).toBeUndefined();
    expect(evaluate(parse("a"), undefined)).toBeUndefined();
  });

  it("never reach the prototype: constructor, __proto__, toString are undefined on {}", () => {
    expect(evaluate(parse("constructor"), {})).toBeUndefined();
    expect(evaluate(parse("toString"), {})).toBeUndefined();
    expect(evaluate(parse("__proto__"), {})).toBeUndefined();
    expect(evaluate(parse("a.constructor.name"), { a: {} })).toBeUndefined();
    expect(check("constructor == null", {})).toBe(true);
  });

  it("read keys named like prototype members when the data owns them", () => {
    const scope = JSON.parse('{"__proto__": {"x": 1}, "constructor": "c"}') as unknown;
    expect(evaluate(parse("__proto__.x"), scope)).toBe(1);
    expect(evaluate(parse("constructor"), scope)).toBe("c");
  });

  it("do not index arrays or strings", () => {
    expect(evaluate(parse("items.length"), { items: [1, 2] })).toBeUndefined();
    expect(evaluate(parse("s.length"), { s: "abc" })).toBeUndefined();
  });

  it("yield undefined rather than throw when a getter throws", () => {
    const scope = {
      get boom(): never {
        throw new Error("boom");
      },
    };
    expect(evaluate(parse("boom"), scope)).toBeUndefined();
    expect(holds(parse("boom == 1 or true"), scope)).toBe(false);
    const proxy = new Proxy({}, { has: () => { throw new Error("trap"); }, getOwnPropertyDescriptor: () => { throw new Error("trap"); } });
    expect(evaluate(parse("a"), proxy)).toBeUndefined();
  });
});

describe("==, != and in", () => {
  it("compare JSON values structurally without coercion", () => {
    const scope = { n: 1, s: "1", o: { a: [1, { b: null }], c: true }, t: true };
    expect(check("n == 1", scope)).toBe(true);
    expect(check("n == '1'", scope)).toBe(false);
    expect(check("s == 1", scope)).toBe(false);
    expect(check("t == 1", scope)).toBe(false);
    expect(check("o == o", scope)).toBe(true);
    expect(check("o.a == [1, o.a.b]", scope)).toBe(false);
    expect(check("[1, [2, 'x']] == [1, [2, 'x']]", scope)).toBe(true);
    expect(check("n != 2", scope)).toBe(true);
    expect(check("n != 1", scope)).toBe(false);
  });

  it("ignore object key order and treat 0 and -0 alike", () => {
    expect(check("a == b", { a: { x: 1, y: 2 }, b: { y: 2, x: 1 } })).toBe(true);
    expect(check("a == b", { a: { x: 1 }, b: { x: 1, y: 2 } })).toBe(false);
    expect(check("a == b", { a: { x: 1, y: 2 }, b: { x: 1 } })).toBe(false);
    expect(check("a == -0", { a: 0 })).toBe(true);
  });

  it("treat a missing path as null", () => {
    expect(check("missing == null", {})).toBe(true);
    expect(check("missing != null", {})).toBe(false);
    expect(check("error != null", { error: "disk full" })).toBe(true);
    expect(check("missing == 0", {})).toBe(false);
    expect(check("missing == ''", {})).toBe(false);
    expect(check("missing in [null]", {})).toBe(true);
  });

  it("compare non-JSON objects by identity only", () => {
    const d1 = new Date(0);
    const d2 = new Date(1);
    expect(check("a == b", { a: d1, b: d2 })).toBe(false);
    expect(check("a == b", { a: d1, b: d1 })).toBe(true);
    expect(check("a == b", { a: new Map(), b: {} })).toBe(false);
    expect(check("a == b", { a: Object.create(null) as object, b: {} })).toBe(true);
  });

  it("in: array membership by deep equality, substring for strings, else false", () => {
    expect(check("x in [1, 2]", { x: 2 })).toBe(true);
    expect(check("x in xs", { x: { a: [1] }, xs: [{ a: [1] }] })).toBe(true);
    expect(check("x in xs", { x: { a: [1] }, xs: [{ a: [2] }] })).toBe(false);
    expect(check("'ell' in s", { s: "hello" })).toBe(true);
    expect(check("'' in s", { s: "hello" })).toBe(true);
    expect(check("'x' in s", { s: "hello" })).toBe(false);
    expect(check("1 in s", { s: "1" })).toBe(false);
    expect(check("x in o", { x: "a", o: { a: 1 } })).toBe(false);
    expect(check("x in missing", { x: 1 })).toBe(false);
    expect(check("x not in missing", { x: 1 })).toBe(true);
    expect(check("x not in [1, 2]", { x: 3 })).toBe(true);
    expect(check("x not in [1, 2]", { x: 2 })).toBe(false);
  });
});

describe("ordering", () => {
  it("compares two numbers or two strings and is false for anything else", () => {
    expect(check("a < b", { a: 1, b: 2 })).toBe(true);
    expect(check("a <= b", { a: 2, b: 2 })).toBe(true);
    expect(check("a > b", { a: 2, b: 2 })).toBe(false);
    expect(check("a >= b", { a: 2, b: 2 })).toBe(true);
    expect(check("a < b", { a: "apple", b: "banana" })).toBe(true);
    expect(check("a < b", { a: "Z", b: "a" })).toBe(true);
    for (const scope of [{ a: 1, b: "2" }, { a: null, b: 1 }, { b: 1 }, { a: true, b: 1 }, { a: [1], b: [2] }]) {
      expect(check("a < b", scope)).toBe(false);
      expect(check("a >= b", scope)).toBe(false);
    }
  });
});

describe("and, or, not work on whether operands hold (exactly true)", () => {
  it.each([
    ["a and b", { a: true, b: true }, true],
    ["a and b", { a: true, b: 1 }, false],
    ["a or b", { a: "yes", b: false }, false],
    ["a or b", { a: 0, b: true }, true],
    ["not a", { a: false }, true],
    ["not a", { a: "yes" }, true],
    ["not a", {}, true],
    ["not a", { a: true }, false],
    ["!(a == 1) && b", { a: 2, b: true }, true],
  ])("%s with %j", (text, scope, expected) => {
    expect(check(text, scope)).toBe(expected);
  });

  it("evaluate yields booleans for connectives and raw values for operands", () => {
    expect(evaluate(parse("a and b"), { a: true, b: true })).toBe(true);
    expect(evaluate(parse("not a"), { a: 1 })).toBe(true);
    expect(evaluate(parse("a"), { a: 1 })).toBe(1);
    expect(evaluate(parse("[a, 2]"), { a: 1 })).toEqual([1, 2]);
    expect(check("a", { a: 1 })).toBe(false);
    expect(check("a", { a: true })).toBe(true);
  });

  it("short-circuits: the right side is not read when the left decides", () => {
    let reads = 0;
    const scope = {
      t: true,
      f: false,
      get spy(): boolean {
        reads++;
        return true;
      },
    };
    expect(check("t or spy", scope)).toBe(true);
    expect(check("f and spy", scope)).toBe(false);
    expect(reads).toBe(0);
    expect(check("f or spy", scope)).toBe(true);
    expect(reads).toBe(1);
  });
});

describe("properties", () => {
  it("evaluate never throws and holds always returns a boolean, for any expression on any JSON scope", () => {
    fc.assert(
      fc.property(exprArb, fc.jsonValue(), (expr, scope) => {
        expect(() => evaluate(expr, scope)).not.toThrow();
        expect(typeof holds(expr, scope)).toBe("boolean");
      }),
      { numRuns: 1000 },
    );
  });

  it("the same, for scopes whose paths the expression actually reads", () => {
    const expr = parse("a == b or a.x in b or not (a.x.y < b.y) and a != [b, 1]");
    const field = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(fc.record({ a: field, b: field }), (scope) => {
        expect(typeof holds(expr, scope)).toBe("boolean");
      }),
    );
  });

  it("a == b agrees with a reference deep equality of JSON values", () => {
    const eq = parse("a == b");
    const ne = parse("a != b");
    const pair = fc.oneof(
      fc.tuple(fc.jsonValue(), fc.jsonValue()),
      fc.jsonValue().map((v) => [v, JSON.parse(JSON.stringify(v)) as unknown] as const),
    );
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const expected = canonicalJson(a) === canonicalJson(b);
        expect(holds(eq, { a, b })).toBe(expected);
        expect(holds(ne, { a, b })).toBe(!expected);
      }),
      { numRuns: 1000 },
    );
  });

  it("x in xs agrees with membership under the reference equality", () => {
    const expr = parse("x in xs");
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 2 }), fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 5 }), (x, xs) => {
        const expected = xs.some((item) => canonicalJson(item) === canonicalJson(x));
        expect(holds(expr, { x, xs })).toBe(expected);
      }),
    );
  });

  it("does not overflow on cyclic or very deep scopes", () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    const b: Record<string, unknown> = {};
    b.self = b;
    expect(check("a == b", { a, b })).toBe(false);
    expect(check("a == a", { a })).toBe(true);
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(check("a == b", { a: deep, b: deep })).toBe(true);
    expect(typeof check("a == b", { a: deep, b: [deep] })).toBe("boolean");
  });
});

describe("speed", () => {
  it("evaluates the spec's emit_condition well under a microsecond", () => {
    const expr = parse("status in ['success','failure']");
    const scopes = [{ status: "success" }, { status: "failure" }, { status: "running" }];
    let hits = 0;
    for (let i = 0; i < 50_000; i++) if (holds(expr, scopes[i % 3])) hits++;
    const runs = 300_000;
    const start = process.hrtime.bigint();
    for (let i = 0; i < runs; i++) if (holds(expr, scopes[i % 3])) hits++;
    const nsPerCall = Number(process.hrtime.bigint() - start) / runs;
    expect(hits).toBe(Math.ceil((50_000 * 2) / 3) + (runs * 2) / 3);
    // The target is < 1 µs; the bound leaves room for a loaded CI machine.
    expect(nsPerCall).toBeLessThan(2000);
  });
});
