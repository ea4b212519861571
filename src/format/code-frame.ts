/**
 * The code frame under a pretty diagnostic: the line before, the offending line, and a caret
 * line under the exact span. Columns are UTF-16 code units in the source but terminal cells on
 * screen, so each line is laid out first (tabs to tab stops, wide characters two cells, unsafe
 * characters replaced by one-cell stand-ins) and the caret is placed by that layout.
 */
import type { Diagnostic } from "../validator/diagnostic.js";
import type { LineIndex } from "../source/line-index.js";
import type { Style } from "./ansi.js";
import { cellWidth } from "./cell-width.js";
import { isUnsafe, visibleControl } from "./text.js";

const TAB_WIDTH = 4;
/** Lines wider than this are shown as a window around the span. */
export const MAX_LINE_CELLS = 160;
/** Cells of context kept left of the span when a long line is windowed. */
const LEAD = 40;

interface Glyph {
  text: string;
  cell: number;
  width: number;
}

interface Layout {
  glyphs: Glyph[];
  /** The cell at which the character holding each UTF-16 index starts; [length] is the line's width. */
  cellAt: number[];
  width: number;
}

function layoutLine(line: string): Layout {
  const glyphs: Glyph[] = [];
  const cellAt: number[] = [];
  let cell = 0;
  for (const ch of line) {
    const cp = ch.codePointAt(0) as number;
    let text = ch;
    let width: number;
    if (ch === "\t") {
      width = TAB_WIDTH - (cell % TAB_WIDTH);
      text = " ".repeat(width);
    } else if (isUnsafe(ch)) {
      text = visibleControl(ch);
      width = 1;
    } else width = cellWidth(cp);
    for (let i = 0; i < ch.length; i++) cellAt.push(cell);
    glyphs.push({ text, cell, width });
    cell += width;
  }
  cellAt.push(cell);
  return { glyphs, cellAt, width: cell };
}

/** The cell of a 1-based column; columns past the end sit just after the last character. */
function cellOfColumn(layout: Layout, column: number): number {
  const index = Math.min(Math.max(column - 1, 0), layout.cellAt.length - 1);
  return layout.cellAt[index] as number;
}

interface Window {
  from: number;
  to: number;
}

/** The visible cells [from, to): the first MAX_LINE_CELLS, or as many around the span's start. */
function windowFor(width: number, start: number): Window {
  if (width <= MAX_LINE_CELLS) return { from: 0, to: MAX_LINE_CELLS };
  const from = Math.max(0, Math.min(start - LEAD, width - MAX_LINE_CELLS));
  return { from, to: from + MAX_LINE_CELLS };
}

/**
 * The line's text inside the window, with "…" where it was cut, and `shift`: what to add to a
 * cell of the line to get its position on screen.
 */
function render(layout: Layout, win: Window): { text: string; shift: number } {
  const inside = layout.glyphs.filter((g) => g.cell >= win.from && g.cell + g.width <= win.to);
  const first = inside[0];
  const last = inside[inside.length - 1];
  // A line with nothing inside the window still shows that it has text elsewhere.
  if (first === undefined || last === undefined) return { text: layout.width > 0 ? "…" : "", shift: -win.from };
  const cutLeft = first.cell > 0;
  const cutRight = last.cell + last.width < layout.width;
  const text = (cutLeft ? "…" : "") + inside.map((g) => g.text).join("") + (cutRight ? "…" : "");
  return { text, shift: (cutLeft ? 1 : 0) - first.cell };
}

export function codeFrame(lines: LineIndex, d: Diagnostic, s: Style): string[] {
  if (d.line < 1 || d.line > lines.lineCount) return [];
  const current = layoutLine(lines.lineText(d.line));
  const start = cellOfColumn(current, d.column);
  const end = d.endLine === d.line ? cellOfColumn(current, d.endColumn) : current.width;
  const win = windowFor(current.width, start);
  const shown = render(current, win);

  const gutterWidth = String(d.line).length;
  const gutter = (n: number | "") => s.dim(`${String(n).padStart(gutterWidth)} |`);
  const mark = d.severity === "error" ? s.red : d.severity === "warning" ? s.yellow : s.cyan;
  const withText = (prefix: string, text: string) => (text === "" ? prefix : `${prefix} ${text}`);

  const out: string[] = [];
  if (d.line > 1) {
    const before = render(layoutLine(lines.lineText(d.line - 1)), win).text;
    out.push(withText(`  ${gutter(d.line - 1)}`, before));
  }
  out.push(withText(`${mark(">")} ${gutter(d.line)}`, shown.text));
  const caretStart = Math.max(start + shown.shift, 0);
  const visibleEnd = win.to + shown.shift;
  const width = Math.max(1, Math.min(end + shown.shift, visibleEnd) - caretStart);
  out.push(`  ${gutter("")} ${" ".repeat(caretStart)}${mark("^" + "~".repeat(width - 1))}`);
  return out;
}
