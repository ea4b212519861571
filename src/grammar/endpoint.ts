import { intern } from "../source/intern.js";
import { closest } from "./suggest.js";
import { type ParseResult, fail, isSpace, lengthError, ok, quote } from "./grammar-error.js";

/** Where a phase's input comes from or its output goes (`inputs.from`, `outputs.to`). */
export type EndpointRef = (
  | { kind: "external" }
  | { kind: "phase"; phase: string }
  | { kind: "substrate"; slot: string }
  | { kind: "signal"; token: string }
  | { kind: "loop"; loop: string }
) & {
  /** Offset and length of this alternative (e.g. `phase:missing`) within the parsed text. */
  offset: number;
  length: number;
};

export const SUBSTRATE_SLOTS = ["memory", "policy", "audit", "auth", "transport", "time"] as const;

export const PHASE_ID = /^[a-z0-9_]+$/;
const SIGNAL_TOKEN = /^[A-Za-z][A-Za-z0-9_]*$/;
/** A loop_id as the schema writes it: dotted lowercase. */
export const LOOP_ID = /^[a-z0-9_]+(\.[a-z0-9_]+)+$/;
const PREFIXES = ["external", "phase", "substrate", "signal", "loop"];
const FORMS = "use external, phase:<id>, substrate:<slot>, signal:<Token> or loop:<loop_id>";

/**
 * Parses `external`, `phase:<id>`, `substrate:<slot>`, `signal:<Token>`, `loop:<loop_id>` (as
 * the protocol authors' published manifests write another loop), or alternatives of these
 * joined by `|` (`external|signal:OutcomeSignal`). Whether a phase exists or a token is
 * canonical is the validator's business; this checks only the form.
 */
export function parseEndpoints(text: string): ParseResult<readonly EndpointRef[]> {
  const tooLong = lengthError(text, "endpoint");
  if (tooLong) return tooLong;
  if (text.trim() === "") return fail(`empty endpoint (${FORMS})`, 0, text.length);

  const refs: EndpointRef[] = [];
  const seen = new Set<string>();
  let segmentStart = 0;
  while (segmentStart <= text.length) {
    let segmentEnd = text.indexOf("|", segmentStart);
    if (segmentEnd === -1) segmentEnd = text.length;
    let a = segmentStart;
    let b = segmentEnd;
    while (a < b && isSpace(text.charCodeAt(a))) a++;
    while (b > a && isSpace(text.charCodeAt(b - 1))) b--;
    if (a === b) {
      const bar = segmentEnd < text.length ? segmentEnd : segmentStart - 1;
      return fail(`empty alternative next to "|"`, bar, 1);
    }
    const parsed = parseAlternative(text.slice(a, b), a);
    if (!parsed.ok) return parsed;
    const written = text.slice(a, b);
    if (seen.has(written)) return fail(`${quote(written)} is listed twice`, a, b - a);
    seen.add(written);
    refs.push(parsed.value);
    segmentStart = segmentEnd + 1;
  }
  return ok(refs);
}

function parseAlternative(alt: string, offset: number): ParseResult<EndpointRef> {
  const length = alt.length;
  if (alt === "external") return ok(endpointRef("external", undefined, offset, length));
  const colon = alt.indexOf(":");
  if (colon === -1) return fail(`unknown endpoint ${quote(alt)}${bareHint(alt)} (${FORMS})`, offset, length);

  const prefix = alt.slice(0, colon);
  const value = alt.slice(colon + 1);
  const valueOffset = offset + colon + 1;
  switch (prefix) {
    case "external":
      return fail(`"external" takes no argument`, offset + colon, length - colon);
    case "phase":
      if (value === "") return fail(`expected a phase id after "phase:"`, offset, length);
      if (!PHASE_ID.test(value)) {
        return fail(`invalid phase id ${quote(value)} (lower-case letters, digits and _ only)`, valueOffset, value.length);
      }
      // Names are returned as canonical strings: callers look them up in maps (the phase index).
      return ok(endpointRef("phase", intern(value), offset, length));
    case "substrate": {
      if ((SUBSTRATE_SLOTS as readonly string[]).includes(value)) return ok(endpointRef("substrate", intern(value), offset, length));
      if (value === "") return fail(`expected a slot after "substrate:" (${SUBSTRATE_SLOTS.join(", ")})`, offset, length);
      const near = closest(value, SUBSTRATE_SLOTS);
      const hint = near === undefined ? "" : `, did you mean ${quote(near)}?`;
      return fail(`unknown substrate slot ${quote(value)}${hint} (use ${SUBSTRATE_SLOTS.join(", ")})`, valueOffset, value.length);
    }
    case "signal":
      if (value === "") return fail(`expected a token after "signal:" (e.g. signal:OutcomeSignal)`, offset, length);
      if (!SIGNAL_TOKEN.test(value)) {
        return fail(`invalid signal token ${quote(value)} (a name such as OutcomeSignal)`, valueOffset, value.length);
      }
      return ok(endpointRef("signal", intern(value), offset, length));
    case "loop":
      if (value === "") return fail(`expected a loop_id after "loop:" (e.g. loop:prism.benchmark)`, offset, length);
      if (!LOOP_ID.test(value)) return fail(`invalid loop_id ${quote(value)} (dotted lowercase, e.g. prism.benchmark)`, valueOffset, value.length);
      return ok(endpointRef("loop", intern(value), offset, length));
    default: {
      const near = closest(prefix, PREFIXES) ?? PREFIXES.find((p) => prefix.length >= 2 && p.startsWith(prefix.toLowerCase()));
      const hint = near === undefined ? "" : `, did you mean ${quote(near === "external" ? near : `${near}:`)}?`;
      return fail(`unknown endpoint prefix ${quote(`${prefix}:`)}${hint} (${FORMS})`, offset, colon + 1);
    }
  }
}

/**
 * Every alternative gets one object shape (the names of the other kinds present but undefined),
 * so the validator's loops over endpoints read `kind` monomorphically.
 */
function endpointRef(kind: EndpointRef["kind"], name: string | undefined, offset: number, length: number): EndpointRef {
  return {
    kind,
    phase: kind === "phase" ? name : undefined,
    slot: kind === "substrate" ? name : undefined,
    token: kind === "signal" ? name : undefined,
    loop: kind === "loop" ? name : undefined,
    offset,
    length,
  } as EndpointRef;
}

/** A bare word is usually `external` misspelt or a reference that lost its prefix. */
function bareHint(alt: string): string {
  const near = closest(alt, ["external"]);
  let guess: string | undefined;
  if (near !== undefined) guess = near;
  else if ((SUBSTRATE_SLOTS as readonly string[]).includes(alt)) guess = `substrate:${alt}`;
  else if (/^[A-Z][A-Za-z0-9_]*$/.test(alt)) guess = `signal:${alt}`;
  else if (PHASE_ID.test(alt)) guess = `phase:${alt}`;
  else if (LOOP_ID.test(alt)) guess = `loop:${alt}`;
  return guess === undefined ? "" : `, did you mean ${quote(guess)}?`;
}
