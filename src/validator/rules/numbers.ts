/**
 * Numbers outside a double's range (`1e400`, YAML `.inf`) or not numbers at all (`.nan`). The
 * published schema accepts ±Infinity wherever it accepts an integer, so they are no schema error
 * (docs/decisions.md); this rule says what a parser made of the text and what pulse then does.
 */
import { childPath, type Path } from "../../source/source-node.js";
import type { Report } from "../finding.js";

/** What the runtime does with +Infinity in the fields it reads (src/runtime, src/host, src/connections). */
const EFFECT: readonly [RegExp, string][] = [
  [/^phases\/\d+\/timeout_ms$/, "pulse runs the phase without a time limit"],
  [/^phases\/\d+\/max_retries$/, "pulse retries a failing phase without end (backoff capped at 10 s)"],
  [/^nesting\/inner_loops\/\d+\/timeout_ms$/, "pulse waits for the inner iteration without a time limit"],
  [/^connections\/\d+\/max_inflight$/, "pulse puts no limit on the signals in flight"],
];

const MAX_DEPTH = 300;

export function checkNumbers(value: unknown, report: Report): void {
  // Almost no manifest holds one: a walk that builds no paths decides whether the one that
  // positions each finding is needed.
  if (hasNonFinite(value, 0)) visit(value, [], 0, report);
}

function hasNonFinite(value: unknown, depth: number): boolean {
  if (typeof value === "number") return !Number.isFinite(value);
  if (value === null || typeof value !== "object" || depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (hasNonFinite(value[i], depth + 1)) return true;
    return false;
  }
  for (const key in value) {
    if (Object.hasOwn(value, key) && hasNonFinite((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

function visit(value: unknown, path: Path, depth: number, report: Report): void {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) report({ rule: "pulse/number-not-finite", path, message: describe(value, path) });
    return;
  }
  if (value === null || typeof value !== "object" || depth > MAX_DEPTH) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) visit(value[i], childPath(path, i), depth + 1, report);
    return;
  }
  for (const key of Object.keys(value)) visit((value as Record<string, unknown>)[key], childPath(path, key), depth + 1, report);
}

function describe(value: number, path: Path): string {
  if (Number.isNaN(value)) return "this value is NaN (YAML .nan), which JSON cannot represent: a tool that converts the manifest to JSON writes null";
  const sign = value > 0 ? "" : "-";
  const effect = value > 0 ? EFFECT.find(([re]) => re.test(path.join("/")))?.[1] : undefined;
  return `this number is ${sign}Infinity (YAML ${sign}.inf, or a literal such as ${sign}1e400 that overflows a double); the published schema accepts it as an integer${effect ? `, and ${effect}` : ""}`;
}
