import type { Path } from "../source/source-node.js";
import type { RelatedLocation } from "./diagnostic.js";

/**
 * What a rule reports, before severity (catalogue, --strict, --config) and position (the source
 * tree) are applied. Rules stay pure functions of the manifest.
 */
export interface Finding {
  rule: string;
  /** Where: the diagnostic's `pointer` is built from it. */
  path: Path;
  message: string;
  /** Underline the key rather than the value (unknown, misplaced or duplicate keys). */
  key?: boolean;
  /** A sub-span inside a string value, in characters of the decoded string. */
  offset?: number;
  length?: number;
  suggestion?: string;
  related?: RelatedLocation[];
}

export type Report = (finding: Finding) => void;
