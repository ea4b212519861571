import { type GrammarError, type ParseResult, MAX_NESTING_DEPTH, lengthError, ok, quote } from "../grammar-error.js";
import type { CompareExpr, CompareOp, Expr, ListExpr } from "./ast.js";
import { type Token, tokenize } from "./lexer.js";
import { printExpression } from "./print.js";

/**
 * Parses the PULSE expression language (docs/expressions.md):
 *
 *   expression = or ;
 *   or         = and { ( "or" | "||" ) and } ;
 *   and        = not { ( "and" | "&&" ) not } ;
 *   not        = ( "not" | "!" ) not | comparison ;
 *   comparison = operand [ ( "==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not" "in" ) operand ] ;
 *   operand    = number | string | "true" | "false" | "null" | path | list | "(" expression ")" ;
 *   list       = "[" [ expression { "," expression } ] "]" ;
 */
export function parseExpression(text: string): ParseResult<Expr> {
  const tooLong = lengthError(text, "expression");
  if (tooLong) return tooLong;
  const tokens = tokenize(text);
  if (!tokens.ok) return tokens;
  const parser = new Parser(text, tokens.value);
  try {
    return ok(parser.parseAll());
  } catch (error) {
    if (error instanceof ParseFailure) return { ok: false, error: error.error };
    throw error;
  }
}

/** Unwinds the recursive descent to `parseExpression`, which turns it back into a value. */
class ParseFailure {
  constructor(readonly error: GrammarError) {}
}

function failure(message: string, offset: number, length: number): ParseFailure {
  return new ParseFailure({ message, offset, length: Math.max(0, length) });
}

const COMPARE_PUNCT: ReadonlySet<string> = new Set(["==", "!=", "<", "<=", ">", ">="]);

class Parser {
  private pos = 0;
  private depth = 0;

  constructor(
    private readonly text: string,
    private readonly tokens: Token[],
  ) {}

  parseAll(): Expr {
    if (this.peek().kind === "eof") throw failure("empty expression", 0, this.text.length);
    const expr = this.parseOr();
    const next = this.peek();
    if (next.kind === "eof") return expr;
    if (this.isPunct(next, ")")) throw failure(`unexpected ")" with no matching "("`, next.offset, 1);
    throw failure(`unexpected ${quote(this.source(next))} after a complete condition; join conditions with "and" or "or"`, next.offset, next.length);
  }

  private parseOr(): Expr {
    const start = this.peek().offset;
    let left = this.parseAnd();
    while (this.isKeyword(this.peek(), "or") || this.isPunct(this.peek(), "||")) {
      this.pos++;
      const right = this.parseAnd();
      left = { type: "logical", op: "or", left, right, ...this.spanFrom(start) };
    }
    return left;
  }

  private parseAnd(): Expr {
    const start = this.peek().offset;
    let left = this.parseNot();
    while (this.isKeyword(this.peek(), "and") || this.isPunct(this.peek(), "&&")) {
      this.pos++;
      const right = this.parseNot();
      left = { type: "logical", op: "and", left, right, ...this.spanFrom(start) };
    }
    return left;
  }

  private parseNot(): Expr {
    const token = this.peek();
    if (!this.isKeyword(token, "not") && !this.isPunct(token, "!")) return this.parseComparison();
    this.pos++;
    this.enter(token);
    const operand = this.parseNot();
    this.depth--;
    return { type: "not", operand, ...this.spanFrom(token.offset) };
  }

  private parseComparison(): Expr {
    const start = this.peek().offset;
    const left = this.parseOperand();
    const opToken = this.peek();
    const op = this.compareOp();
    if (op === undefined) return left;
    const right = this.parseOperand();
    const expr: Expr = { type: "compare", op, left, right, ...this.spanFrom(start) };
    this.rejectChain(expr);
    this.rejectNeverTrue(expr, opToken);
    return expr;
  }

  /** Consumes a comparison operator, or returns undefined when none follows. */
  private compareOp(): CompareOp | undefined {
    const token = this.peek();
    if (token.kind === "punct" && COMPARE_PUNCT.has(token.punct)) {
      this.pos++;
      return token.punct as CompareOp;
    }
    if (this.isKeyword(token, "in")) {
      this.pos++;
      return "in";
    }
    if (this.isKeyword(token, "not")) {
      const next = this.tokens[this.pos + 1];
      if (next === undefined || !this.isKeyword(next, "in")) {
        throw failure(`expected "in" after "not" (e.g. status not in ['failure'])`, token.offset, token.length);
      }
      this.pos += 2;
      return "not in";
    }
    return undefined;
  }

  /** `a < b < c` reads as a range test but would compare a boolean with c: say so. */
  private rejectChain(expr: CompareExpr): void {
    const start = this.pos;
    const op = this.compareOp();
    if (op === undefined) return;
    const first = this.tokens[start] as Token;
    const last = this.tokens[this.pos - 1] as Token;
    let message = "comparisons do not chain; join them with \"and\"";
    try {
      const third = this.parseOperand();
      message += `: ${printExpression(expr)} and ${printExpression(expr.right)} ${op} ${printExpression(third)}`;
    } catch (error) {
      if (!(error instanceof ParseFailure)) throw error;
    }
    throw failure(message, first.offset, last.offset + last.length - first.offset);
  }

  /** A comparison between literals of the wrong kinds is always false: almost surely a typo. */
  private rejectNeverTrue(expr: CompareExpr, opToken: Token): void {
    const { op, left, right } = expr;
    if (op === "in" || op === "not in") {
      if (right.type === "literal" && typeof right.value !== "string") {
        throw failure(`the right side of "${op}" must be a list, a string or a path`, right.offset, right.length);
      }
      return;
    }
    if (op === "==" || op === "!=") return;
    for (const side of [left, right]) {
      if (side.type === "path") continue;
      if (side.type === "literal" && (typeof side.value === "number" || typeof side.value === "string")) continue;
      const what = side.type === "literal" ? this.source(side) : side.type === "list" ? "a list" : "a condition";
      throw failure(`"${op}" compares two numbers or two strings, never ${what}`, side.offset, side.length);
    }
    if (left.type === "literal" && right.type === "literal" && typeof left.value !== typeof right.value) {
      throw failure(`"${op}" between a number and a string is never true`, opToken.offset, opToken.length);
    }
  }

  private parseOperand(): Expr {
    const token = this.peek();
    switch (token.kind) {
      case "number":
      case "string":
        this.pos++;
        return { type: "literal", value: token.value, offset: token.offset, length: token.length };
      case "path":
        this.pos++;
        return { type: "path", path: token.path, offset: token.offset, length: token.length };
      case "keyword":
        if (token.word === "true" || token.word === "false" || token.word === "null") {
          this.pos++;
          const value = token.word === "null" ? null : token.word === "true";
          return { type: "literal", value, offset: token.offset, length: token.length };
        }
        break;
      case "punct":
        if (token.punct === "(") return this.parseGroup(token);
        if (token.punct === "[") return this.parseList(token);
        break;
      case "eof":
        break;
    }
    throw this.expectedValue(token);
  }

  private parseGroup(open: Token): Expr {
    this.pos++;
    this.enter(open);
    const inner = this.parseOr();
    this.depth--;
    const close = this.peek();
    if (this.isPunct(close, ")")) {
      this.pos++;
      return inner;
    }
    if (close.kind === "eof") throw failure(`unclosed "("`, open.offset, 1);
    throw failure(`expected ")" to close the "(" at column ${open.offset + 1}, found ${quote(this.source(close))}`, close.offset, close.length);
  }

  private parseList(open: Token): ListExpr {
    this.pos++;
    this.enter(open);
    const items: Expr[] = [];
    if (!this.isPunct(this.peek(), "]")) {
      for (;;) {
        items.push(this.parseOr());
        const next = this.peek();
        if (this.isPunct(next, ",")) {
          this.pos++;
          continue;
        }
        if (this.isPunct(next, "]")) break;
        if (next.kind === "eof") throw failure(`unclosed "["`, open.offset, 1);
        throw failure(`expected "," or "]" in the list, found ${quote(this.source(next))}`, next.offset, next.length);
      }
    }
    this.pos++;
    this.depth--;
    return { type: "list", items, ...this.spanFrom(open.offset) };
  }

  private expectedValue(token: Token): ParseFailure {
    const previous = this.tokens[this.pos - 1];
    const after = previous === undefined ? "" : ` after ${quote(this.source(previous))}`;
    if (token.kind === "eof") return failure(`expected a value${after}`, token.offset, 0);
    if (previous === undefined && this.isPunct(token, ")")) return failure(`unexpected ")" with no matching "("`, token.offset, 1);
    return failure(`expected a value${after}, found ${quote(this.source(token))}`, token.offset, token.length);
  }

  private enter(token: Token): void {
    if (++this.depth > MAX_NESTING_DEPTH) {
      throw failure(`expression is nested too deeply (at most ${MAX_NESTING_DEPTH} levels)`, token.offset, token.length);
    }
  }

  private spanFrom(start: number): { offset: number; length: number } {
    const last = this.tokens[this.pos - 1] as Token;
    return { offset: start, length: last.offset + last.length - start };
  }

  private peek(): Token {
    return this.tokens[this.pos] ?? (this.tokens[this.tokens.length - 1] as Token);
  }

  private source(node: { offset: number; length: number }): string {
    return this.text.slice(node.offset, node.offset + node.length);
  }

  private isKeyword(token: Token, word: string): boolean {
    return token.kind === "keyword" && token.word === word;
  }

  private isPunct(token: Token, punct: string): boolean {
    return token.kind === "punct" && token.punct === punct;
  }
}
