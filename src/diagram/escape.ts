/**
 * Escaping for each output language. Labels arrive normalised (see labels.ts): "\n" is a line
 * break the diagram chose, everything else is text to show verbatim.
 */

/**
 * Bidirectional controls (embeddings, overrides, isolates, and the LRM, RLM and ALM marks) make
 * text display in an order other than the one it is stored in (Trojan Source, CVE-2021-42574).
 * People read a diagram to review a manifest, so each one is shown as U+FFFD, as a lone surrogate
 * is: the label keeps its stored order and the reader sees that the manifest holds something a
 * label does not show. A space would hide that (and merge into the spaces around it).
 */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function markBidi(text: string): string {
  return text.replace(BIDI_CONTROLS, "\ufffd");
}

const MERMAID_SAFE = /[A-Za-z0-9 .,:_\-+*/=!?@$^~']/;
const MERMAID_NAMED: Record<string, string> = { '"': "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;" };

/**
 * Text inside a quoted Mermaid label. Mermaid turns `#name;` and `#123;` into HTML entities
 * before parsing, so every character that could end the string, start an entity, open markdown
 * (backtick) or confuse the flowchart lexer (`;`, `|`, brackets, the keyword `end`) is written
 * as an entity, and so is everything outside ASCII. Mermaid also strips the last `;` of any line
 * where `style` or `classDef` is followed by `:…#…;` (its encodeEntities): in such a label the
 * colons are escaped too, so that pattern cannot form.
 */
export function mermaidText(text: string): string {
  let out = "";
  const chars = Array.from(text);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (c === "\n") out += "<br/>";
    else if (c === "e" && isWord(chars, i, "end")) {
      out += "#101;nd";
      i += 2;
    } else if (MERMAID_SAFE.test(c)) out += c;
    else out += MERMAID_NAMED[c] ?? `#${c.codePointAt(0)};`;
  }
  return /style|classDef/.test(out) ? out.replace(/:/g, "#58;") : out;
}

function isWord(chars: readonly string[], at: number, word: string): boolean {
  if (chars.slice(at, at + word.length).join("") !== word) return false;
  const isIdent = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_]/.test(c);
  return !isIdent(chars[at - 1]) && !isIdent(chars[at + word.length]);
}

/**
 * A DOT double-quoted string. Quotes and backslashes are escaped (so `\N`, `\G`, `\l` in a
 * manifest stay literal), "\n" is a centred line break, and `&` becomes `&amp;` because
 * Graphviz decodes HTML entities in labels (a manifest's `&lt;` must stay literal). Other
 * characters are written as UTF-8, DOT's default charset: Graphviz's entity decoder garbles
 * characters beyond U+FFFF, so entities are not an option for them. Left-aligned text ends
 * every line with `\l`, the last one included.
 */
export function dotString(text: string, align: "center" | "left" = "center"): string {
  const lineEnd = align === "left" ? "\\l" : "\\n";
  let out = '"';
  for (const c of text) {
    if (c === '"') out += '\\"';
    else if (c === "\\") out += "\\\\";
    else if (c === "\n") out += lineEnd;
    else if (c === "&") out += "&amp;";
    else if (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f) out += " ";
    else out += c;
  }
  return `${out}${align === "left" ? lineEnd : ""}"`;
}

/**
 * Text for a DOT `tooltip` (before dotString). Graphviz expands `\N`, `\G`, `\L`, `\l`, … in a
 * tooltip even when the backslash is escaped, and decodes entities before that, so neither
 * `\\` nor `&#92;` keeps a backslash literal there. Each backslash is drawn as its look-alike
 * U+29F5 (⧵) instead, so the tooltip shows what the manifest says; the JSON model keeps the real one.
 */
export function dotTooltip(text: string): string {
  return text.replace(/\\/g, "\u29f5");
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** HTML text or attribute value. The page also prints model fields clean() never saw (loop name, file, URIs), hence markBidi. */
export function htmlText(text: string): string {
  return markBidi(text).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string);
}
