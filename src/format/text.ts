/** Text helpers shared by the reporters: safe single-line text, counts, ordering. */
import { compareDiagnostics, type Diagnostic, type FileResult, type Summary } from "../validator/diagnostic.js";

/**
 * A character a terminal or log viewer would act on instead of printing: C0 controls other
 * than tab and line breaks, DEL, C1 controls, and the bidirectional overrides that reorder
 * what a reader sees ("Trojan Source"). Messages quote manifest content, so these must never
 * reach a text format raw.
 */
const UNSAFE_CLASS = "[\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F\\u202A-\\u202E\\u2066-\\u2069]";
const UNSAFE = new RegExp(UNSAFE_CLASS, "g");
const UNSAFE_ONE = new RegExp(`^${UNSAFE_CLASS}$`);

export function isUnsafe(ch: string): boolean {
  return UNSAFE_ONE.test(ch);
}

/** One visible, single-column stand-in per unsafe character (␛ for ESC, ␡ for DEL, � otherwise). */
export function visibleControl(ch: string): string {
  const code = ch.charCodeAt(0);
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return "\u2421";
  return "\uFFFD";
}

/** Replaces unsafe characters with visible stand-ins; tabs and line breaks (LF, CR) stay. */
export function printable(text: string): string {
  return text.replace(UNSAFE, visibleControl);
}

/** Lone surrogates (which no encoder accepts) replaced by U+FFFD. */
export function wellFormed(text: string): string {
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "\uFFFD");
}

/** Text for line-oriented output: line breaks become spaces, unsafe characters visible. */
export function singleLine(text: string): string {
  return printable(text.replace(/\r\n|[\r\n\u2028\u2029]/g, " "));
}

/** The message with its suggestion, as every line-oriented format prints it. */
export function messageWithSuggestion(d: Diagnostic): string {
  return d.suggestion ? `${d.message} (${d.suggestion})` : d.message;
}

/** `file:line:col`, or just the file for file-level diagnostics (line 0). */
export function location(file: string, line: number, column: number): string {
  return line >= 1 ? `${file}:${line}:${Math.max(column, 1)}` : file;
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** Compares paths segment by segment, so `dir/a` sorts before `dir-x/b` as a directory walk lists them. */
export function comparePaths(a: string, b: string): number {
  const x = a.split(/[\\/]/);
  const y = b.split(/[\\/]/);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const p = x[i] as string;
    const q = y[i] as string;
    if (p !== q) return p < q ? -1 : 1;
  }
  return x.length - y.length;
}

/**
 * The order every format lists results in: files by path, diagnostics by position (both
 * stable), so the output does not depend on the order of the operands or of the rules.
 */
export function ordered(results: readonly FileResult[]): FileResult[] {
  return [...results]
    .sort((a, b) => comparePaths(a.file, b.file))
    .map((r) => ({ ...r, diagnostics: [...r.diagnostics].sort(compareDiagnostics) }));
}

export function countBySeverity(diagnostics: readonly Diagnostic[]): { errors: number; warnings: number; infos: number } {
  const counts = { errors: 0, warnings: 0, infos: 0 };
  for (const d of diagnostics) {
    if (d.severity === "error") counts.errors++;
    else if (d.severity === "warning") counts.warnings++;
    else counts.infos++;
  }
  return counts;
}

/**
 * The one-line verdict: `✖ 3 errors, 1 warning in 2 files (1 valid)`, `✔ 4 files valid`, or
 * `✔ 2 files valid (1 warning)`. Zero counts other than errors are left out. A run that fails
 * for another reason than errors (`failure`, say `more than --max-warnings 1`) never gets a ✔:
 * `✖ 2 warnings in 2 files (2 valid): more than --max-warnings 1`.
 */
export function verdict(s: Summary, failure?: string): string {
  const others = [s.warnings ? plural(s.warnings, "warning") : "", s.infos ? plural(s.infos, "info") : ""].filter(Boolean);
  if (s.errors > 0 || failure) {
    const counts = [s.errors ? plural(s.errors, "error") : "", ...others].filter(Boolean);
    const found = counts.length ? `${counts.join(", ")} in ${plural(s.files, "file")}` : plural(s.files, "file");
    return `✖ ${found} (${s.valid} valid)${failure ? `: ${failure}` : ""}`;
  }
  const valid = s.files === 1 ? "1 file valid" : `${s.files} files valid`;
  return others.length ? `✔ ${valid} (${others.join(", ")})` : `✔ ${valid}`;
}
