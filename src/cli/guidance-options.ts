/** Option parsing shared by the `pulse guidance` commands. */
import { UsageError } from "./exit-codes.js";

/** A whole-number flag in [min, max]; undefined when not given. */
export function parseCount(flag: string, text: string | undefined, min: number, max: number): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) throw new UsageError(`${flag} takes a whole number from ${min} to ${max}, not ${JSON.stringify(text)}`);
  return Number(text);
}
