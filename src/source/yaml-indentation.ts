/**
 * Finds the line a block-structured YAML document mis-indents, the way a person reads it: keys
 * of one mapping share a column, a value's lines sit deeper than its key, and a line that lines
 * up with nothing above it is the mistake. The `yaml` package reports such a line as several
 * errors, often at the line before and at column 1; this says which line and what to do.
 *
 * Only consulted when the package found a syntax error: a heuristic must never invent one.
 */

export interface IndentationProblem {
  /** Offset of the first character of the mis-indented line's content. */
  start: number;
  end: number;
  message: string;
}

interface Level {
  /** 0-based column of the key, or of the `-` of a sequence item. */
  col: number;
  kind: "key" | "item";
  name: string;
  line: number;
}

interface Line {
  number: number;
  start: number;
  indent: number;
  content: string;
}

/** A line whose value is a block scalar (`key: |`, `- >-`): the deeper lines after it are its text. */
const BLOCK_SCALAR = /(?:^-|:|\s-)\s+[|>][-+0-9]*$|^[|>][-+0-9]*$/;

/** The first line whose indentation cannot be right, or undefined when none is found. */
export function findMisindentedLine(text: string): IndentationProblem | undefined {
  const stack: Level[] = [];
  let previous: { line: Line; levels: Level[]; opens: boolean; scalar: boolean } | undefined;
  let blockScalarIndent = -1;
  for (const line of lines(text)) {
    if (blockScalarIndent >= 0) {
      if (line.indent > blockScalarIndent) continue;
      blockScalarIndent = -1;
    }
    const { content, indent } = line;
    if (content.startsWith("#") || content.startsWith("---") || content.startsWith("...") || content.startsWith("%")) continue;
    // Flow collections and multi-line quoted strings are not about indentation: stop reading.
    const { code, open } = scan(content);
    if (open) return undefined;
    const levels = levelsOf(line);
    const isStructure = levels.length > 0;

    if (previous && indent > deepestColumn(previous.levels) && !previous.opens) {
      // Deeper than the key above, which already has its value on its line.
      if (isStructure && previous.scalar) return moreIndented(line, levels, previous.levels, previous.line);
      if (!isStructure) continue; // a plain scalar's continuation line
    }
    if (previous && !(previous.opens && indent > deepestColumn(previous.levels))) {
      // Not a new block: the line must line up with an open key or item.
      const first = levels[0];
      const fits = stack.some((l) => l.col === indent && (first?.kind === "item" || l.kind === "key"));
      if (isStructure && !fits) return noColumn(line, levels, stack);
    }
    // Close what this line leaves; a sibling replaces its like (a sequence may share its key's column).
    while (stack.length > 0 && (stack[stack.length - 1] as Level).col > indent) stack.pop();
    const top = stack[stack.length - 1];
    if (top && top.col === indent && (levels.length === 0 || top.kind === (levels[0] as Level).kind)) stack.pop();
    stack.push(...levels);
    const last = code;
    if (BLOCK_SCALAR.test(last)) blockScalarIndent = indent;
    const opens = last.endsWith(":") || last === "-" || /\s-$/.test(last);
    previous = { line, levels, opens, scalar: !opens && isStructure };
  }
  return undefined;
}

function* lines(text: string): Generator<Line> {
  let start = 0;
  let number = 1;
  while (start <= text.length) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl;
    const raw = text.slice(start, end).replace(/\r$/, "");
    let indent = 0;
    while (raw.charCodeAt(indent) === 32) indent++;
    const content = raw.slice(indent).trimEnd();
    if (content !== "") yield { number, start: start + indent, indent, content };
    if (nl < 0) break;
    start = nl + 1;
    number++;
  }
}

/** The keys and sequence items a line opens, by column: `- id: x` is an item at 2 and a key at 4. */
function levelsOf(line: Line): Level[] {
  const out: Level[] = [];
  let col = line.indent;
  let rest = line.content;
  while (rest === "-" || rest.startsWith("- ")) {
    out.push({ col, kind: "item", name: "-", line: line.number });
    const after = rest.slice(1);
    const skipped = after.length - after.trimStart().length;
    col += 1 + skipped;
    rest = after.trimStart();
  }
  const key = keyOf(scan(rest).code);
  if (key !== undefined) out.push({ col, kind: "key", name: key, line: line.number });
  return out;
}

/** The key a `key: value` line starts with (quoted, or plain up to the first ": "), if any. */
function keyOf(code: string): string | undefined {
  const c = code[0];
  if (c === undefined || c === "[" || c === "{" || c === "#" || c === "&" || c === "*" || c === "!" || c === "|" || c === ">") return undefined;
  let end: number;
  if (c === '"' || c === "'") {
    end = c === '"' ? /^"(?:[^"\\]|\\.)*"/.exec(code)?.[0].length ?? -1 : /^'(?:[^']|'')*'/.exec(code)?.[0].length ?? -1;
    if (end < 0 || code[end] !== ":" || (end + 1 < code.length && !/\s/.test(code[end + 1] as string))) return undefined;
  } else {
    const m = /:(?:\s|$)/.exec(code);
    if (!m) return undefined;
    end = m.index;
  }
  return code.slice(0, end).trim();
}

function deepestColumn(levels: readonly Level[]): number {
  return levels.length ? (levels[levels.length - 1] as Level).col : -1;
}

/**
 * The line without its comment, and whether brackets or quotes are left open at its end (a flow
 * collection or a string spanning lines). A `#` inside quotes is text.
 */
function scan(content: string): { code: string; open: boolean } {
  let depth = 0;
  let quote = "";
  for (let i = 0; i < content.length; i++) {
    const c = content[i] as string;
    if (quote) {
      if (c === "\\" && quote === '"') i++;
      else if (c === quote) quote = "";
      continue;
    }
    if (c === "#" && (i === 0 || content[i - 1] === " " || content[i - 1] === "\t")) return { code: content.slice(0, i).trimEnd(), open: depth > 0 };
    if ((c === '"' || c === "'") && (i === 0 || /[\s[{,:-]/.test(content[i - 1] as string))) quote = c;
    else if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") depth--;
  }
  return { code: content, open: depth > 0 || quote !== "" };
}

const shown = (l: Level) => (l.kind === "item" ? `the "-" item` : `"${l.name}"`);

function moreIndented(line: Line, levels: readonly Level[], above: readonly Level[], aboveLine: Line): IndentationProblem {
  const key = above[above.length - 1] as Level;
  const what = levels[0]?.kind === "item" ? "this item" : `"${(levels[0] as Level).name}"`;
  return {
    start: line.start,
    end: line.start + line.content.length,
    message: `line ${line.number} is indented more than the key above it (${shown(key)} on line ${aboveLine.number}), which already has a value: indent ${what} to column ${key.col + 1} like ${shown(key)}`,
  };
}

function noColumn(line: Line, levels: readonly Level[], stack: readonly Level[]): IndentationProblem {
  const first = levels[0] as Level;
  const candidates = stack.filter((l) => (first.kind === "item" ? true : l.kind === "key"));
  // The nearest column on each side: usually one of them is what was meant.
  const deeper = candidates.filter((l) => l.col > line.indent).sort((a, b) => a.col - b.col)[0];
  const shallower = candidates.filter((l) => l.col < line.indent).sort((a, b) => b.col - a.col)[0];
  const options = [deeper, shallower].filter((l): l is Level => l !== undefined).map((l) => `column ${l.col + 1} like ${shown(l)} on line ${l.line}`);
  const what = first.kind === "item" ? "this item" : `"${first.name}"`;
  return {
    start: line.start,
    end: line.start + line.content.length,
    message: `line ${line.number} is indented to column ${line.indent + 1}, which lines up with no key above it: indent ${what} to ${options.join(", or to ") || "column 1"}`,
  };
}
