/** docs/rules.md, rendered from the rule catalogue (a test keeps the committed file in sync). */
import { RULES } from "./rule-catalog.js";

export function renderRulesMarkdown(): string {
  const lines = [
    "# Validator rules",
    "",
    "Every diagnostic `pulse-validate` reports carries one of these stable rule ids.",
    "`pulse-validate --explain <rule>` prints the same text; `--config` changes the severity of the",
    "rules marked configurable (`\"off\"` disables them). Generated from `src/validator/rule-catalog.ts`.",
    "",
    "| rule | severity | summary |",
    "| --- | --- | --- |",
    ...RULES.map((r) => `| [\`${r.id}\`](#${anchor(r.id)}) | ${r.severity}${r.strictSeverity ? ` (${r.strictSeverity} with --strict)` : ""} | ${r.summary} |`),
    "",
  ];
  for (const r of RULES) {
    lines.push(`## ${r.id}`, "", `**${r.severity}**${r.strictSeverity ? `, ${r.strictSeverity} with \`--strict\`` : ""}${r.configurable ? ", configurable" : ", cannot be turned off"}. ${r.summary}`, "", r.explanation, "");
  }
  return lines.join("\n");
}

/** GitHub's heading anchors: lower case, punctuation other than - and _ dropped. */
export function anchor(id: string): string {
  return id.toLowerCase().replace(/[^a-z0-9_ -]/g, "").replace(/ /g, "-");
}
