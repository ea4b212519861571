/**
 * Canonical copies of short strings cut from a source text. A substring is a view into the
 * text (a V8 sliced string), two bytes per character as soon as the file holds one character
 * beyond Latin-1 (a "§" in a comment is enough); Map lookups and comparisons on such strings
 * run several times slower, and every such view keeps the whole text alive. Using the string
 * as a property key yields the engine's own flat, deduplicated copy.
 */
const LIMIT = 256;

export function intern(s: string): string {
  if (s.length > LIMIT) return s;
  return Object.keys({ [s]: 0 })[0] as string;
}
