/**
 * The expression AST. Every node carries the offset and length of the source text it was parsed
 * from, so a diagnostic can point at one operand inside a manifest string. Parenthesised
 * sub-expressions leave no node of their own: the printer puts parentheses back where needed.
 */

export type Literal = string | number | boolean | null;

export type CompareOp = "==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not in";

interface Positioned {
  offset: number;
  length: number;
}

export interface LiteralExpr extends Positioned {
  type: "literal";
  value: Literal;
}

export interface PathExpr extends Positioned {
  type: "path";
  /** Field names from the scope root, e.g. `["request", "query"]` for `request.query`. */
  path: readonly string[];
}

export interface ListExpr extends Positioned {
  type: "list";
  items: readonly Expr[];
}

export interface NotExpr extends Positioned {
  type: "not";
  operand: Expr;
}

export interface LogicalExpr extends Positioned {
  type: "logical";
  op: "and" | "or";
  left: Expr;
  right: Expr;
}

export interface CompareExpr extends Positioned {
  type: "compare";
  op: CompareOp;
  left: Expr;
  right: Expr;
}

export type Expr = LiteralExpr | PathExpr | ListExpr | NotExpr | LogicalExpr | CompareExpr;

/** Words the lexer reserves; a path cannot start with one. */
export const KEYWORDS = ["and", "or", "not", "in", "true", "false", "null"] as const;

/** Every path node in source order, repeats included: the validator points at each one. */
export function pathReferences(expr: Expr): PathExpr[] {
  const out: PathExpr[] = [];
  collect(expr, out);
  return out;
}

function collect(expr: Expr, out: PathExpr[]): void {
  switch (expr.type) {
    case "literal":
      return;
    case "path":
      out.push(expr);
      return;
    case "list":
      for (const item of expr.items) collect(item, out);
      return;
    case "not":
      collect(expr.operand, out);
      return;
    case "logical":
    case "compare":
      collect(expr.left, out);
      collect(expr.right, out);
      return;
  }
}

/** Every distinct path the expression reads, in order of first appearance. */
export function referencedPaths(expr: Expr): string[][] {
  const seen = new Set<string>();
  const out: string[][] = [];
  for (const ref of pathReferences(expr)) {
    const key = ref.path.join(".");
    if (seen.has(key)) continue;
    seen.add(key);
    out.push([...ref.path]);
  }
  return out;
}
