import fc from "fast-check";

/** Strings over a grammar's own alphabet: they reach the parser's deep branches, unlike random unicode. */
export function stringFrom(alphabet: readonly string[], maxLength = 40): fc.Arbitrary<string> {
  return fc.string({ unit: fc.constantFrom(...alphabet), maxLength });
}

/** Anything a manifest could contain: arbitrary unicode, lone surrogates included. */
export const anyText: fc.Arbitrary<string> = fc.oneof(fc.string(), fc.string({ unit: "binary" }));

export function chars(text: string): string[] {
  return [...text];
}
