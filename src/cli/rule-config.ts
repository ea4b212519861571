/**
 * `--config FILE`: per-rule severities, JSON or YAML. Every mistake in it is a usage error with
 * the key named, because a silently ignored config line is worse than none.
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { RULES, ruleInfo } from "../validator/rule-catalog.js";
import { closest, didYouMean } from "../grammar/suggest.js";
import type { SeverityOverride } from "../validator/validate.js";
import { UsageError } from "./exit-codes.js";

const LEVELS: readonly SeverityOverride[] = ["error", "warning", "info", "off"];

export async function loadRuleConfig(file: string, cwd: string): Promise<Record<string, SeverityOverride>> {
  let bytes: string;
  try {
    bytes = await readFile(resolve(cwd, file), "utf8");
  } catch (e) {
    throw new UsageError(`--config ${file}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : "cannot be read"}`);
  }
  const { parseSourceText } = await import("../source/parse-text.js");
  const source = parseSourceText(file, bytes);
  const problem = source.problems.find((p) => p.severity === "error");
  if (problem) {
    const pos = source.lines.position(problem.start);
    throw new UsageError(`${file}:${pos.line}:${pos.column}: ${problem.message}`);
  }
  return parseRuleConfig(source.value, file);
}

export function parseRuleConfig(value: unknown, file = "config"): Record<string, SeverityOverride> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new UsageError(`${file}: expected an object like {"rules": {"pulse/missing-act": "error"}}`);
  const unknownKeys = Object.keys(value).filter((k) => k !== "rules");
  if (unknownKeys.length > 0) throw new UsageError(`${file}: unknown key "${unknownKeys[0]}" (only "rules" is allowed)`);
  const rules = (value as { rules?: unknown }).rules ?? {};
  if (rules === null || typeof rules !== "object" || Array.isArray(rules)) throw new UsageError(`${file}: "rules" must map rule ids to severities`);
  const out: Record<string, SeverityOverride> = {};
  for (const [id, level] of Object.entries(rules)) {
    const info = ruleInfo(id);
    if (!info) {
      const s = didYouMean(closest(id, RULES.map((r) => r.id)));
      throw new UsageError(`${file}: unknown rule "${id}"${s ? `; ${s}` : ""}`);
    }
    if (!info.configurable) throw new UsageError(`${file}: rule "${id}" cannot be configured (parse and schema errors always fail a manifest)`);
    if (typeof level !== "string" || !LEVELS.includes(level as SeverityOverride)) {
      throw new UsageError(`${file}: rule "${id}" must be set to one of ${LEVELS.join(", ")}, not ${JSON.stringify(level)}`);
    }
    out[id] = level as SeverityOverride;
  }
  return out;
}
