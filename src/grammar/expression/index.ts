export type { CompareExpr, CompareOp, Expr, ListExpr, Literal, LiteralExpr, LogicalExpr, NotExpr, PathExpr } from "./ast.js";
export { KEYWORDS, pathReferences, referencedPaths } from "./ast.js";
export { evaluate, holds } from "./evaluate.js";
export { parseExpression } from "./parser.js";
export { printExpression, printLiteral } from "./print.js";
