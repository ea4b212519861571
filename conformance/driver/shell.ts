/**
 * POSIX sh quoting, for the two places a command line is rebuilt from words: the adapter command
 * given after `--` (the stdio driver runs commands with `sh -c`), and the repro lines reports
 * print, which must run as written when pasted into a shell.
 */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

export function shellQuote(word: string): string {
  return PLAIN.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Each word stays one word; a first word with "=" is quoted so sh does not take it for an assignment. */
export function shellJoin(words: readonly string[]): string {
  return words.map((w, i) => (i === 0 && w.includes("=") ? `'${w.replace(/'/g, `'\\''`)}'` : shellQuote(w))).join(" ");
}
