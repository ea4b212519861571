import fc from "fast-check";
import { type CompareOp, type Expr, KEYWORDS } from "../../src/grammar/expression/index.js";

/** The tree without positions: what "structurally equal" compares. */
export function shape(expr: Expr): unknown {
  switch (expr.type) {
    case "literal":
      return { literal: expr.value };
    case "path":
      return { path: expr.path };
    case "list":
      return { list: expr.items.map(shape) };
    case "not":
      return { not: shape(expr.operand) };
    case "logical":
    case "compare":
      return { op: expr.op, left: shape(expr.left), right: shape(expr.right) };
  }
}

const at = { offset: 0, length: 0 };
const reserved = new Set<string>(KEYWORDS);

const identifier = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,5}$/);
const firstSegment = identifier.filter((s) => !reserved.has(s.toLowerCase()));

export const pathExpr: fc.Arbitrary<Expr> = fc
  .tuple(firstSegment, fc.array(identifier, { maxLength: 2 }))
  .map(([head, rest]) => ({ type: "path", path: [head, ...rest], ...at }));

const numberLiteral: fc.Arbitrary<Expr> = fc
  .oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))
  .map((value) => ({ type: "literal", value, ...at }));
const stringLiteral: fc.Arbitrary<Expr> = fc
  .oneof(fc.string(), fc.string({ unit: "binary" }), fc.constantFrom("'", '"', "\\", "\n", "a'b\"c"))
  .map((value) => ({ type: "literal", value, ...at }));
const constantLiteral: fc.Arbitrary<Expr> = fc.constantFrom(true, false, null).map((value) => ({ type: "literal", value, ...at }));

/** Operands `<` and friends accept: anything else is rejected at parse time as never true. */
const orderable = fc.oneof(pathExpr, numberLiteral, stringLiteral);

/**
 * Well-formed ASTs: the shapes the parser can produce, kept shallow enough to stay within the
 * nesting limit once printed.
 */
export const exprArb: fc.Arbitrary<Expr> = fc.letrec<{ expr: Expr }>((tie) => ({
  expr: fc.oneof(
    { maxDepth: 4, depthIdentifier: "expr" },
    pathExpr,
    numberLiteral,
    stringLiteral,
    constantLiteral,
    fc.array(tie("expr"), { maxLength: 3 }).map((items): Expr => ({ type: "list", items, ...at })),
    tie("expr").map((operand): Expr => ({ type: "not", operand, ...at })),
    fc
      .tuple(fc.constantFrom("and" as const, "or" as const), tie("expr"), tie("expr"))
      .map(([op, left, right]): Expr => ({ type: "logical", op, left, right, ...at })),
    fc
      .tuple(fc.constantFrom<CompareOp>("==", "!="), tie("expr"), tie("expr"))
      .map(([op, left, right]): Expr => ({ type: "compare", op, left, right, ...at })),
    fc
      .tuple(fc.constantFrom<CompareOp>("in", "not in"), tie("expr"), fc.oneof(pathExpr, stringLiteral, tie("expr")))
      .filter(([, , right]) => !(right.type === "literal" && typeof right.value !== "string"))
      .map(([op, left, right]): Expr => ({ type: "compare", op, left, right, ...at })),
    fc
      .tuple(fc.constantFrom<CompareOp>("<", "<=", ">", ">="), orderable, orderable)
      .filter(([, l, r]) => !(l.type === "literal" && r.type === "literal" && typeof l.value !== typeof r.value))
      .map(([op, left, right]): Expr => ({ type: "compare", op, left, right, ...at })),
  ),
})).expr;
