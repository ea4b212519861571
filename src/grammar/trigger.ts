import { intern } from "../source/intern.js";
import { PHASE_ID } from "./endpoint.js";
import type { Expr } from "./expression/ast.js";
import { parseExpression } from "./expression/parser.js";
import { type ParseResult, fail, isIdentPart, isSpace, lengthError, ok, quote, rebase } from "./grammar-error.js";

export interface Trigger {
  phase: string;
  /** Offset of the phase id itself (after `phase:`) within the trigger text. */
  phaseOffset: number;
  /** The `when` condition. Its node offsets are relative to the condition text: add conditionOffset. */
  condition?: Expr;
  conditionOffset?: number;
}

const EXAMPLE = "e.g. phase:route_topology when kappa > 0";

/** Parses an inner-loop trigger: `phase:<id>`, optionally followed by `when <expression>`. */
export function parseTrigger(text: string): ParseResult<Trigger> {
  const tooLong = lengthError(text, "trigger");
  if (tooLong) return tooLong;
  let i = skipSpace(text, 0);
  if (i === text.length) return fail(`empty trigger (${EXAMPLE})`, 0, text.length);
  if (!text.startsWith("phase:", i)) {
    const word = text.slice(i, wordEnd(text, i));
    return fail(`a trigger starts with "phase:<id>" (${EXAMPLE})`, i, word.length);
  }
  const phaseOffset = i + "phase:".length;
  i = wordEnd(text, phaseOffset);
  const phase = intern(text.slice(phaseOffset, i));
  if (phase === "") return fail(`expected a phase id after "phase:"`, phaseOffset - 6, 6);
  if (!PHASE_ID.test(phase)) {
    return fail(`invalid phase id ${quote(phase)} (lower-case letters, digits and _ only)`, phaseOffset, phase.length);
  }
  i = skipSpace(text, i);
  if (i === text.length) return ok({ phase, phaseOffset });

  if (!text.startsWith("when", i) || isIdentPart(text.charCodeAt(i + 4))) {
    const word = text.slice(i, wordEnd(text, i));
    return fail(`expected "when" after the phase id, found ${quote(word)} (${EXAMPLE})`, i, word.length);
  }
  const whenOffset = i;
  const conditionOffset = skipSpace(text, i + 4);
  if (conditionOffset === text.length) return fail(`expected a condition after "when"`, whenOffset, 4);
  const condition = rebase(parseExpression(text.slice(conditionOffset)), conditionOffset);
  if (!condition.ok) return condition;
  return ok({ phase, phaseOffset, condition: condition.value, conditionOffset });
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return i;
}

function wordEnd(text: string, i: number): number {
  while (i < text.length && !isSpace(text.charCodeAt(i))) i++;
  return i;
}
