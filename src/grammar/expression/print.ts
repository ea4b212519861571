import type { Expr, Literal } from "./ast.js";

/** Binding strength: a child binding more loosely than its parent position needs parentheses. */
const OR = 1;
const AND = 2;
const NOT = 3;
const COMPARE = 4;
const OPERAND = 5;

function precedence(expr: Expr): number {
  switch (expr.type) {
    case "logical":
      return expr.op === "or" ? OR : AND;
    case "not":
      return NOT;
    case "compare":
      return COMPARE;
    default:
      return OPERAND;
  }
}

/**
 * The canonical text of an expression: keywords rather than symbols (`and`, not `&&`),
 * single-quoted strings, one space around binary operators, and parentheses only where the
 * structure needs them. Parsing the result yields the same tree (positions aside).
 */
export function printExpression(expr: Expr): string {
  switch (expr.type) {
    case "literal":
      return printLiteral(expr.value);
    case "path":
      return expr.path.join(".");
    case "list":
      return `[${expr.items.map(printExpression).join(", ")}]`;
    case "not":
      return `not ${wrap(expr.operand, NOT)}`;
    case "logical": {
      const own = precedence(expr);
      // Left-associative: an equal-strength right child must keep its parentheses.
      return `${wrap(expr.left, own)} ${expr.op} ${wrap(expr.right, own + 1)}`;
    }
    case "compare":
      // Comparisons do not chain, so both sides must be plain operands.
      return `${wrap(expr.left, OPERAND)} ${expr.op} ${wrap(expr.right, OPERAND)}`;
  }
}

function wrap(expr: Expr, atLeast: number): string {
  const text = printExpression(expr);
  return precedence(expr) < atLeast ? `(${text})` : text;
}

export function printLiteral(value: Literal): string {
  if (typeof value === "string") return printString(value);
  if (typeof value === "number") return Object.is(value, -0) ? "-0" : String(value);
  return String(value);
}

function printString(value: string): string {
  let out = "'";
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 39) out += "\\'";
    else if (c === 92) out += "\\\\";
    else if (c === 10) out += "\\n";
    else if (c === 9) out += "\\t";
    else if (c === 13) out += "\\r";
    else if (c < 0x20 || c === 0x7f) out += unicodeEscape(c);
    else if (c >= 0xd800 && c <= 0xdbff && isLowSurrogate(value.charCodeAt(i + 1))) {
      out += value.slice(i, i + 2);
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) {
      // A lone surrogate cannot be written as UTF-8: keep the text encodable.
      out += unicodeEscape(c);
    } else out += value[i];
  }
  return `${out}'`;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

function unicodeEscape(c: number): string {
  return `\\u${c.toString(16).padStart(4, "0")}`;
}
