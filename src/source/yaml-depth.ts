/**
 * A linear pre-scan that finds YAML nested deeper than MAX_NESTING before the `yaml` package
 * builds anything: the package lexes, parses and composes a whole document first, so 1 MiB of
 * `[[[[…` cost it seconds and hundreds of megabytes before the walker could say "too deep".
 *
 * The scan counts a lower bound of the depth, so it never refuses a document the walker would
 * accept: flow collections (`[`, `{` outside quotes and comments; in block context only where a
 * node starts, since a plain scalar may contain brackets) and compact sequences on one line
 * (`- - - x`). Block nesting by indentation is left to the walker: each level costs a line and
 * its indentation, so a deep one cannot be cheap to write.
 */
import { MAX_NESTING } from "./jsonc.js";

/** The offset of the first bracket or dash that nests deeper than MAX_NESTING, or -1. */
export function excessiveYamlNesting(text: string, max = MAX_NESTING): number {
  let flow = 0;
  let i = 0;
  const n = text.length;
  let blockScalarIndent = -1;
  while (i < n) {
    // Start of a line: indentation, then block-scalar content, comments and compact dashes.
    let indent = 0;
    while (i < n && text.charCodeAt(i) === 32) {
      i++;
      indent++;
    }
    const lineEnd = endOfLine(text, i);
    if (blockScalarIndent >= 0) {
      if (i === lineEnd || indent > blockScalarIndent) {
        i = lineEnd + 1;
        continue;
      }
      blockScalarIndent = -1;
    }
    let depth = 0;
    let nodeStart = true;
    // Whether the last token was a quoted scalar or a closed collection (a JSON-like key).
    let jsonNodeEnded = false;
    for (; i < lineEnd; i++) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9) continue;
      const ended = jsonNodeEnded;
      jsonNodeEnded = false;
      if (c === 35 /* # */ && (i === 0 || isBlank(text.charCodeAt(i - 1)))) {
        i = lineEnd;
        break;
      }
      if (flow === 0 && nodeStart && (c === 45 /* - */ || c === 63 /* ? */) && isBlankOrEnd(text, i + 1)) {
        if (c === 45 && ++depth > max) return i;
        continue;
      }
      if (c === 91 /* [ */ || c === 123 /* { */) {
        if (flow > 0 || nodeStart) {
          if (++flow + depth > max) return i;
          nodeStart = true;
          continue;
        }
      } else if ((c === 93 /* ] */ || c === 125) /* } */ && flow > 0) {
        flow--;
        nodeStart = false;
        jsonNodeEnded = true;
        continue;
      } else if (c === 44 /* , */ && flow > 0) {
        nodeStart = true;
        continue;
      } else if (c === 58 /* : */ && (isBlankOrEnd(text, i + 1) || (flow > 0 && (isFlowIndicator(text.charCodeAt(i + 1)) || ended)))) {
        // In flow context `:` is a value indicator before a blank or a flow indicator, or right
        // after a quoted or bracketed key ({"a":b}); otherwise it starts or continues a plain
        // scalar (`{ :': x }` has the key `:'`), whose quotes open nothing.
        nodeStart = true;
        continue;
      } else if ((c === 34 /* " */ || c === 39) /* ' */ && nodeStart) {
        i = endOfQuoted(text, i, c) - 1;
        nodeStart = false;
        jsonNodeEnded = true;
        continue;
      } else if ((c === 124 /* | */ || c === 62) /* > */ && nodeStart && flow === 0) {
        // A block scalar: the lines indented more than this one are its text.
        blockScalarIndent = indent;
        i = lineEnd;
        break;
      } else if ((c === 38 /* & */ || c === 33) /* ! */ && nodeStart) {
        // An anchor or a tag comes before the node it names.
        while (i + 1 < lineEnd && !isBlank(text.charCodeAt(i + 1))) i++;
        continue;
      }
      // Any other character is inside a plain scalar or a key: no node starts until an indicator.
      nodeStart = false;
    }
    // A quoted scalar may end on a later line; the rest of that line goes uncounted (a lower bound).
    i = i > lineEnd ? endOfLine(text, i) + 1 : lineEnd + 1;
  }
  return -1;
}

function endOfLine(text: string, from: number): number {
  const nl = text.indexOf("\n", from);
  return nl < 0 ? text.length : nl;
}

/** The offset just past a quoted scalar (which may span lines), or the end of the text. */
function endOfQuoted(text: string, open: number, quote: number): number {
  for (let i = open + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (quote === 34 && c === 92 /* \ */) {
      i++;
      continue;
    }
    if (c === quote) {
      if (quote === 39 && text.charCodeAt(i + 1) === 39) {
        i++;
        continue;
      }
      return i + 1;
    }
  }
  return text.length;
}

function isFlowIndicator(c: number): boolean {
  return c === 44 || c === 91 || c === 93 || c === 123 || c === 125;
}

function isBlank(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13;
}

function isBlankOrEnd(text: string, i: number): boolean {
  return i >= text.length || isBlank(text.charCodeAt(i));
}
